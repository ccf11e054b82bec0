"""Shared set-up for the suite.

- RTSCAN_CACHE_DIR points at a fresh temporary folder for the whole session, set before rtscan is
  imported (import compiles the auto kernels when a GPU is present), so no test writes ~/.cache.
- Tests marked `gpu` skip, with the driver's own reason, where no GPU is usable or torch (which the
  GPU tests use for device arrays) is not importable.
- The `large` marker (over 2^31 elements, tens of GB of device memory) is registered here; large
  tests are GPU tests and run by default on a GPU machine (deselect with -m "not large").
- GPU tests see every variant's large (else long) shape from 15/16 of one of its tiles on (the tuning's
  `from_total_steps` set to 0), so tile-edge tests reach it at small sizes; a tuned long shape
  below a large one is then reached only by sequences short of 15/16 of a large tile and by the tests
  that take it out (test_mirrors.py); those marked `tuned_shapes` see the
  table as it is. The choice itself is tested on the CPU (tests/test_registry.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile

_SESSION_CACHE = tempfile.mkdtemp(prefix="rtscan-test-cache-")
os.environ["RTSCAN_CACHE_DIR"] = _SESSION_CACHE

import pytest  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU and torch; skipped with the reason otherwise")
    config.addinivalue_line("markers", "large: over 2^31 elements (tens of GB of GPU memory); a gpu test")
    config.addinivalue_line("markers", "tuned_shapes: a gpu test that keeps the tuning's size rule for long shapes")


def pytest_unconfigure(config):
    shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


def gpu_skip_reason() -> str | None:
    """None when GPU tests can run here, else why not."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means no GPU tests
        return f"GPU tests need torch, which is not importable: {exc}"
    from rtscan import _driver

    usable, why = _driver.gpu_status()
    if not usable:
        return f"no usable GPU: {why}"
    if not torch.cuda.is_available():
        return "the CUDA driver works but torch.cuda.is_available() is False"
    return None


def pytest_collection_modifyitems(config, items):
    if not any(item.get_closest_marker("gpu") or item.get_closest_marker("large") for item in items):
        return
    reason = gpu_skip_reason()
    for item in items:
        if item.get_closest_marker("large") and not item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.gpu)
        if reason is not None and item.get_closest_marker("gpu"):
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def rng(request):
    """A generator with a freshly drawn seed, printed so a failure can be replayed."""
    import numpy as np

    seed = int.from_bytes(os.urandom(8), "little")
    print(f"{request.node.nodeid}: numpy seed {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def long_shape_from_one_tile(request, monkeypatch):
    """In GPU tests, the batch kinds' shapes (one_tile, mid_batch, long_batch, many, short_batch,
    batch, short_fill; over_wave runs short_batch's) for batches of rows they bound, else the large,
    else the long launch shape, for any sequence that fills one of its tiles (registry.fills_a_tile;
    for a kind with fill_edge, a fill of all its tiles worth its rival's too), whatever the launch's
    total. (Of the kinds for short rows, registry.ROWS_KINDS, only the small_ ones bound the total,
    from above, which stays.)"""
    if not request.node.get_closest_marker("gpu") or request.node.get_closest_marker("tuned_shapes"):
        return
    from rtscan import registry

    for variant in registry.VARIANTS.values():
        for key, entry in variant.table.items():
            lifted = registry.any_total(entry)
            if lifted != entry:
                monkeypatch.setitem(variant.table, key, lifted)
