"""Every registered variant on the GPU against the float64 reference, around its own tile and
segment edges, in every layout, and bitwise deterministic over repeated runs. (test_scan_gpu.py
covers `auto` in more depth: regimes, NaN and Inf, resets.)"""

from __future__ import annotations

import numpy as np
import pytest

from _gpu import (FINITE_POISON, GROWTH_MAX_LENGTH, REGIMES, cuda, guarded_out, lookback_group_tiles, regime,
                  scan_and_check, torch, without_kinds)
from rtscan import registry

pytestmark = pytest.mark.gpu

MODES = ["contiguous", "misaligned", "reverse_h0", "time_strided", "batch"]


def variant_lengths(name: str) -> list[int]:
    """Lengths around the tile edges, and the segment or window edges, of each of the variant's
    sm_90 shapes."""
    variant = registry.resolve(name)
    lengths = {1, 2, 31, 33, 997}
    for shape in variant.launch_shapes("sm_90", "float32"):
        group = lookback_group_tiles(shape)
        for k in (1, 2, group, group + 1, 2 * group + 3):
            lengths |= {k * shape.tile - 1, k * shape.tile, k * shape.tile + 1}
    return sorted(lengths)


CASES = [pytest.param(name, length, id=f"{name}-{length}") for name in registry.VARIANTS
         for length in variant_lengths(name)]


def run(rng, name: str, mode: str, length: int):
    what = f"{name} {mode} L={length}"
    a_np, b_np = regime(rng, "mixed", (3, length) if mode in ("batch", "time_strided") else (length,))
    if mode == "time_strided":  # time on dim 0 of (L, 3)
        scan_and_check(cuda(a_np.T.copy()), cuda(b_np.T.copy()), dim=0, variant=name, what=what)
    elif mode == "batch":
        h0 = cuda(rng.uniform(-2, 2, 3).astype(np.float32))
        scan_and_check(cuda(a_np), cuda(b_np), h0=h0, variant=name, what=what)
    else:
        # a[1:] with out alike: the look-back variants' head where their shape has a 16-byte form
        # (P67), the scalar path for the others
        offset = 1 if mode == "misaligned" else 0
        a = cuda(np.concatenate([[0.5] * offset, a_np]).astype(np.float32))[offset:]
        b = cuda(np.concatenate([[0.5] * offset, b_np]).astype(np.float32))[offset:]
        h0 = cuda(rng.uniform(-2, 2, ()).astype(np.float32)) if mode == "reverse_h0" else None
        out, outside_untouched = guarded_out(length, 64 + offset)
        scan_and_check(a, b, h0=h0, reverse=mode == "reverse_h0", out=out, variant=name, what=what)
        outside_untouched()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name,length", CASES)
def test_variant_against_reference(rng, name, length, mode):
    run(rng, name, mode, length)


def shadowed_long_lengths() -> list[int]:
    """Lengths around the tile and segment edges of each tuned long shape that a large shape
    shadows under conftest.py's fixture (sm_90: 352 x 48 below 352 x 56)."""
    lengths = set()
    for entry in registry.resolve("auto").table.values():
        if "large" in entry:
            tile = entry["long"]["block_threads"] * entry["long"]["items"]
            lengths |= {tile - 4, tile, tile + 1, 3 * tile + 5, 33 * tile + 7}
    return sorted(lengths)


@pytest.mark.parametrize("mode", ["contiguous", "reverse_h0", "batch"])
@pytest.mark.parametrize("length", shadowed_long_lengths())
def test_long_shape_below_a_large_one(rng, monkeypatch, length, mode):
    """The tuned long shape runs launches between its own from_total_steps and the large shape's;
    with every threshold lifted (conftest.py) the large shape takes its lengths (and the batch kinds
    batches of rows they bound), so here every kind tried before the long one is taken out of the
    table, which leaves the long one as tuned."""
    from rtscan import _kernels

    variant, arch = registry.resolve("auto"), _kernels.device_arch(0)
    large = variant.launch_shape(arch, "float32", 4, 2**40)
    if "large" not in without_kinds(monkeypatch, variant, arch, registry.SHAPE_KINDS[:registry.SHAPE_KINDS.index("long")]):
        pytest.skip(f"the tuning for {arch} has no large shape")
    assert variant.launch_shape(arch, "float32", 4, length) != large
    run(rng, variant.name, mode, length)


def regime_lengths(name: str) -> list[int]:
    """A short length, and one past a tile edge and one past a segment or window edge of the
    largest shape."""
    shape = registry.resolve(name).launch_shape("sm_90", "float32", 4, 2**40)
    return [33, 2 * shape.tile + 5, lookback_group_tiles(shape) * shape.tile + 7]


REGIME_CASES = [pytest.param(name, regime_name, length, id=f"{name}-{regime_name}-{length}")
                for name in registry.VARIANTS for regime_name in REGIMES for length in regime_lengths(name)
                if regime_name != "growth" or length <= GROWTH_MAX_LENGTH]  # |a| > 1 overflows long ones


@pytest.mark.parametrize("mode", ["contiguous", "reverse", "batch"])
@pytest.mark.parametrize("name,regime_name,length", REGIME_CASES)
def test_variant_value_regimes(rng, name, regime_name, length, mode):
    """The core's value regimes (resets, a = 1, a < 0, tiny and huge magnitudes) on every variant."""
    shape = (3, length) if mode == "batch" else (length,)
    a_np, b_np = regime(rng, regime_name, shape)
    scan_and_check(cuda(a_np), cuda(b_np), reverse=mode == "reverse", variant=name,
                   what=f"{name} {regime_name} {mode} L={length}")


@pytest.mark.parametrize("where", ["first", "tile_edge", "last"])
@pytest.mark.parametrize("kind", ["nan_in_a", "nan_in_b"])
@pytest.mark.parametrize("name", list(registry.VARIANTS))
def test_variant_spreads_nan_as_the_reference(rng, name, kind, where):
    """One NaN reaches exactly the steps it reaches in the reference, on every variant."""
    length = regime_lengths(name)[1]
    position = {"first": 0, "tile_edge": (length - 5) // 2, "last": length - 1}[where]
    a_np, b_np = regime(rng, "mixed", (length,))
    (a_np if kind == "nan_in_a" else b_np)[position] = np.nan
    scan_and_check(cuda(a_np), cuda(b_np), poison=FINITE_POISON, variant=name, what=f"{name} {kind} at {position}")


def many_segments(rng, name):
    """Inputs spanning 70 segments (or one-level windows) of the variant's largest shape: each run's
    look-back then finds its own pattern of finished predecessors, over several waves (correctness
    at these sizes is the other tests' job)."""
    shape = registry.resolve(name).launch_shape("sm_90", "float32", 4, 2**40)
    a_np, b_np = regime(rng, "decay", (70 * lookback_group_tiles(shape) * shape.tile + 5,))
    return cuda(a_np), cuda(b_np)


def assert_runs_equal(a, b, name, expected, runs, what):
    import rtscan

    out = torch.empty_like(a)
    for index in range(runs):
        out.fill_(float("nan"))
        rtscan.scan(a, b, out=out, variant=name)
        assert torch.equal(out, expected), f"{name}: {what} run {index + 1} differs from the first"


@pytest.mark.parametrize("name", list(registry.VARIANTS))
def test_variant_is_bitwise_deterministic(rng, name):
    """110 runs on fresh poison give the first run's bits (with the perturbed runs below, over 1,000
    determinism runs across the variants)."""
    import rtscan

    a, b = many_segments(rng, name)
    first = rtscan.scan(a, b, out=torch.full_like(a, float("nan")), variant=name)
    assert not bool(torch.isnan(first).any()), f"{name}: steps left unwritten"
    assert_runs_equal(a, b, name, first, 110, "plain")


@pytest.mark.parametrize("name", list(registry.VARIANTS))
@pytest.mark.parametrize("seed", range(1, 9))
def test_perturbed_timing_gives_the_same_bits(rng, name, seed):
    """Kernels built with kernels_cu/perturb.cuh's random sleeps (a different pattern of finished
    predecessors per seed) give the unperturbed kernel's bits, 12 runs per seed."""
    import rtscan
    from rtscan import _kernels

    a, b = many_segments(rng, name)
    expected = rtscan.scan(a, b, variant=name)
    with _kernels.compiled_with((("RTSCAN_PERTURB_SEED", str(seed)),)):
        assert_runs_equal(a, b, name, expected, 12, f"perturbed (seed {seed})")
