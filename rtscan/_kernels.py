"""Kernels as loaded functions: compile (or take from the cache) per architecture and launch shape,
load per device.

Each launch shape is its own NVRTC program, and a variant's shapes (or several variants', as the
import and warmup ask) compile in parallel threads: NVRTC compiles separate programs concurrently
and cuda.bindings lets other threads run meanwhile. One program for lookback_regs' seven shapes
took 8.5-13.8 s in one thread on a developer's machine, its slowest shape alone 3.9-5.8 s; an
uncached import went from 9.9-12.0 s to 3.5-4.0 s on an H200's 16-core host (profiling/NOTES.md,
item 80).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import threading
from typing import Any, Iterable

from . import _compile, _driver
from .errors import UnsupportedError
from .registry import LaunchShape, Variant

_lock = threading.Lock()
_modules: dict[tuple, _compile.CompiledModule] = {}   # (variant, arch, shape, options) -> cubin
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


def compile_shape(variant: Variant, arch: str, shape: LaunchShape,
                  options: _compile.CompileOptions | None = None) -> _compile.CompiledModule:
    """The kernels of one launch shape of `variant` for `arch`: one NVRTC program (cached on disk),
    memoised. Two threads asking for the same shape at once may both compile it; the first result
    stored is the one every later call returns."""
    options = options or _compile.CompileOptions(arch=arch, defines=_defines)
    key = (variant.name, arch, shape, options)
    module = _modules.get(key)
    if module is None:
        compiled = _compile.compile_cached(variant.source, variant.name_expressions(shape), options)
        with _lock:
            module = _modules.setdefault(key, compiled)
    return module


def compile_variants(variants: Iterable[Variant], arch: str) -> dict[tuple[str, LaunchShape], _compile.CompiledModule]:
    """Every launch shape of each variant for `arch`, compiled in parallel threads (at most one per
    CPU this process may use): {(variant name, shape): module}. A compile error is raised once all
    have finished."""
    jobs = [(variant, shape) for variant in variants for shape in shapes_for(variant, arch)]
    options = _compile.CompileOptions(arch=arch, defines=_defines)  # the caller's defines, not a worker's
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = max(1, min(len(jobs), cpus))  # each NVRTC compile holds 130-190 MB while it runs
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rtscan-nvrtc") as pool:
        futures = {(variant.name, shape): pool.submit(compile_shape, variant, arch, shape, options)
                   for variant, shape in jobs}
    return {key: future.result() for key, future in futures.items()}


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
        module = compile_shape(variant, device_arch(device), shape)
        with _lock:  # one module load per device, even when threads race here
            loaded = _functions.get(key)
            if loaded is None:
                handle = _driver.load_module(module.cubin)
                kernels = []
                for expression in variant.name_expressions(shape):
                    kernel = _driver.get_function(handle, module.lowered_names[expression])
                    _prepare(device, kernel, variant, shape)
                    kernels.append(kernel)
                loaded = _functions[key] = tuple(kernels) if variant.pass_kernels else kernels[0]
    return loaded
