"""Kernels as loaded functions: compile (or take from the cache) per architecture, load per device."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from . import _compile, _driver
from .errors import UnsupportedError
from .registry import LaunchShape, Variant

_lock = threading.Lock()
_modules: dict[tuple, _compile.CompiledModule] = {}   # (variant, arch, shapes) -> cubin
_functions: dict[tuple, Any] = {}                     # (device, variant, shape, defines) -> CUfunction
_device_arch: dict[int, str] = {}
_defines: tuple[tuple[str, str], ...] = ()            # extra -D for every compile; see compiled_with


@contextlib.contextmanager
def compiled_with(defines: tuple[tuple[str, str], ...]):
    """Within the block, kernels are compiled and loaded with these extra -D definitions (kept
    apart from the normal ones). For tests only: e.g. (("RTSCAN_PERTURB_SEED", "3"),) builds the
    timing perturbation of kernels_cu/perturb.cuh. Not thread-safe: one test at a time."""
    global _defines
    saved, _defines = _defines, tuple(defines)
    try:
        yield
    finally:
        _defines = saved


def shapes_for(variant: Variant, arch: str, dtype: str = "float32") -> tuple[LaunchShape, ...]:
    return variant.launch_shapes(arch, dtype)


def compile_variant(variant: Variant, arch: str, options: _compile.CompileOptions | None = None
                    ) -> _compile.CompiledModule:
    """All launch shapes of `variant` for `arch` in one NVRTC program (cached on disk)."""
    options = options or _compile.CompileOptions(arch=arch, defines=_defines)
    shapes = shapes_for(variant, arch)
    key = (variant.name, arch, shapes, options)
    module = _modules.get(key)
    if module is None:
        with _lock:
            module = _modules.get(key)
            if module is None:
                expressions = variant.expressions(shapes)
                module = _compile.compile_cached(variant.source, expressions, options)
                _modules[key] = module
    return module


def device_arch(device: int) -> str:
    arch = _device_arch.get(device)
    if arch is None:
        arch = _device_arch.setdefault(device, _driver.arch_of(device))
    return arch


def _prepare(device: int, loaded: Any, variant: Variant, shape: LaunchShape) -> None:
    """Opt the function in to its shared memory; refuse a shape that cannot run on this device."""
    limit = _driver.device_attribute(device, "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
    needed = variant.shared_bytes(shape)
    if needed > limit:
        raise UnsupportedError(f"launch shape {shape} needs {needed} bytes of shared memory per "
                               f"block; {device_arch(device)} allows {limit}")
    _driver.allow_shared_memory(loaded, needed)


def function(device: int, variant: Variant, shape: LaunchShape) -> Any:
    """The loaded kernel for this device, or for a multi-pass variant a tuple of one kernel per
    pass in launch order; the device's context must be current."""
    key = (device, variant.name, shape, _defines)
    loaded = _functions.get(key)
    if loaded is None:
        module = compile_variant(variant, device_arch(device))  # takes _lock itself
        with _lock:  # one module load per device, even when threads race here
            loaded = _functions.get(key)
            if loaded is None:
                handle = _driver.load_module(module.cubin)
                for s in shapes_for(variant, device_arch(device)):
                    kernels = []
                    for expression in variant.name_expressions(s):
                        kernel = _driver.get_function(handle, module.lowered_names[expression])
                        _prepare(device, kernel, variant, s)
                        kernels.append(kernel)
                    _functions[(device, variant.name, s, _defines)] = (
                        tuple(kernels) if variant.pass_kernels else kernels[0])
                loaded = _functions[key]
    return loaded
