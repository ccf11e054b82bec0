"""rtscan: the linear recurrence h[t] = a[t]*h[t-1] + b[t] on NVIDIA GPUs, as a single-pass scan.

    rtscan.scan(a, b, *, h0=None, dim=-1, reverse=False, out=None, variant="auto", stream=None)

Kernels are CUDA C++ (kernels_cu/) compiled at run time by NVRTC and launched through the CUDA
driver (cuda.bindings); importing rtscan never needs a GPU.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import Any  # noqa: E402

from . import _nvtx, _scan, _torch_path, reference  # noqa: E402
from .errors import (  # noqa: E402
    CompileError, DriverError, InputError, InputTypeError, NoDeviceError, RtscanError, UnsupportedError,
)
from .registry import variants  # noqa: E402

__all__ = [
    "scan", "variants", "warmup", "reference", "gpu_available", "RtscanError", "CompileError",
    "DriverError", "InputError", "InputTypeError", "NoDeviceError", "UnsupportedError", "__version__",
]


def scan(a: Any, b: Any, *, h0: Any = None, dim: int = -1, reverse: bool = False, out: Any = None,
         variant: str = "auto", stream: Any = None) -> Any:
    """h[t] = a[t] * h[t-1] + b[t] along `dim` (h[-1] = h0, default 0); see the README for the contract."""
    _nvtx.push("rtscan.scan")
    try:
        if h0 is None and variant.__class__ is str and variant == "auto":
            result = _torch_path.scan(a, b, out, dim, reverse, stream)
            if result is not None:
                return result
        return _scan.scan(a, b, h0, dim, reverse, out, variant, stream)
    finally:
        _nvtx.pop()


def gpu_available() -> bool:
    """True when the CUDA driver starts and reports at least one device."""
    from . import _driver

    return _driver.gpu_status()[0]


def warmup(device: int = 0, *, stream=None, max_tiles: int = 0) -> None:
    """Compile (or load from the cache) and load every kernel for `device`; optionally reserve a
    look-back workspace of `max_tiles` tiles on `stream` (do this before CUDA graph capture)."""
    from . import _arrays, _driver, _kernels, _workspace
    from .registry import VARIANTS

    _driver.make_current(device)
    arch = _kernels.device_arch(device)
    _kernels.compile_variants(VARIANTS.values(), arch)  # in parallel; the loads below find them compiled
    for variant in VARIANTS.values():
        for shape in _kernels.shapes_for(variant, arch):
            _kernels.function(device, variant, shape)
    if max_tiles:
        handle = _arrays.stream_handle(stream) if stream is not None else 0
        _workspace.reserve(device, handle, max_tiles)


def _compile_auto_kernels_at_import() -> None:
    """DESIGN.md: with a GPU present, import compiles (or loads from the cache) what `auto` needs
    for device 0. A failure here is not swallowed: it is raised again by the first scan()."""
    import os

    if os.environ.get("RTSCAN_SKIP_IMPORT_COMPILE"):
        return
    from . import _driver, _kernels
    from .registry import AUTO_VARIANTS, resolve

    if not _driver.gpu_status()[0]:
        return
    try:
        _kernels.compile_variants([resolve(name) for name in AUTO_VARIANTS], _kernels.device_arch(0))
    except Exception:  # noqa: BLE001 - import must not fail; the same work runs again, and raises, on first use
        pass


_compile_auto_kernels_at_import()
