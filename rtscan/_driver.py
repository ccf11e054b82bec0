"""The CUDA driver through cuda.bindings: start-up, contexts, memory, launches, events.

Every driver call goes through `call()`, which turns a failure into a DriverError naming the call.
Nothing here imports the driver at module import time: `import rtscan` must work without a GPU.
"""

from __future__ import annotations

import threading
from typing import Any

from .errors import DriverError, NoDeviceError

_lock = threading.Lock()
_driver: Any = None          # the cuda.bindings.driver module once cuInit succeeded
_startup_failure: str | None = None
_primary_contexts: dict[int, tuple[Any, int]] = {}  # device -> (primary context, its address)


def _load() -> Any:
    global _driver, _startup_failure
    if _driver is not None:
        return _driver
    with _lock:
        if _driver is not None:
            return _driver
        if _startup_failure is not None:
            raise NoDeviceError(_startup_failure)
        try:
            from cuda.bindings import driver
        except ImportError as exc:  # pragma: no cover - a dependency of the package
            _startup_failure = f"cuda.bindings is not importable: {exc}"
            raise NoDeviceError(_startup_failure) from exc
        try:
            (err,) = driver.cuInit(0)
        except Exception as exc:  # the driver library itself is missing
            _startup_failure = f"no CUDA driver library: {exc}"
            raise NoDeviceError(_startup_failure) from exc
        if err != driver.CUresult.CUDA_SUCCESS:
            _startup_failure = f"cuInit failed: {_error_name(driver, err)}"
            raise NoDeviceError(_startup_failure)
        (err, count) = driver.cuDeviceGetCount()
        if err != driver.CUresult.CUDA_SUCCESS or count == 0:
            _startup_failure = "the CUDA driver reports no device"
            raise NoDeviceError(_startup_failure)
        _driver = driver
        return driver


def _error_name(driver: Any, err: Any) -> str:
    _, name = driver.cuGetErrorName(err)
    return name.decode() if isinstance(name, bytes) else str(err)


def gpu_status() -> tuple[bool, str]:
    """(True, "") when a GPU is usable, else (False, why not)."""
    try:
        _load()
    except NoDeviceError as exc:
        return False, str(exc)
    return True, ""


def driver() -> Any:
    return _load()


def call(name: str, result: tuple) -> Any:
    """Check a cuda.bindings result tuple; return its value(s) or raise DriverError naming `name`."""
    err = result[0]
    if err != 0:  # CUresult is an IntEnum; 0 is CUDA_SUCCESS
        drv = _load()
        _, description = drv.cuGetErrorString(err)
        text = description.decode() if isinstance(description, bytes) else str(description)
        raise DriverError(name, int(err), _error_name(drv, err), text)
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def device_count() -> int:
    return call("cuDeviceGetCount", _load().cuDeviceGetCount())


def make_current(device: int) -> None:
    """Make `device`'s primary context current on this thread (the one PyTorch and CuPy use)."""
    drv = _driver or _load()  # as launch(): once per call
    context = _primary_contexts.get(device)
    if context is None:
        context = _retain_primary_context(drv, device)
    err, current = drv.cuCtxGetCurrent()
    if err:
        call("cuCtxGetCurrent", (err,))
    if current is None or int(current) != context[1]:
        call("cuCtxSetCurrent", drv.cuCtxSetCurrent(context[0]))


def _retain_primary_context(drv: Any, device: int) -> tuple[Any, int]:
    """(the context, its address as an int), kept per device: make_current compares the current
    context with it on every call."""
    with _lock:
        context = _primary_contexts.get(device)
        if context is None:
            handle = call("cuDeviceGet", drv.cuDeviceGet(device))
            retained = call("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(handle))
            context = _primary_contexts[device] = (retained, int(retained))
    return context


def device_attribute(device: int, attribute: str) -> int:
    drv = _load()
    handle = call("cuDeviceGet", drv.cuDeviceGet(device))
    enum = getattr(drv.CUdevice_attribute, attribute)
    return call("cuDeviceGetAttribute", drv.cuDeviceGetAttribute(enum, handle))


def device_name(device: int) -> str:
    drv = _load()
    handle = call("cuDeviceGet", drv.cuDeviceGet(device))
    raw = call("cuDeviceGetName", drv.cuDeviceGetName(64, handle))
    return raw.split(b"\0", 1)[0].decode()


def arch_of(device: int) -> str:
    major = device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR")
    minor = device_attribute(device, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR")
    return f"sm_{major}{minor}"


def load_module(cubin: bytes) -> Any:
    return call("cuModuleLoadData", _load().cuModuleLoadData(cubin))


def get_function(module: Any, lowered_name: str) -> Any:
    return call("cuModuleGetFunction", _load().cuModuleGetFunction(module, lowered_name.encode()))


def allow_shared_memory(function: Any, shared_bytes: int) -> None:
    """Let `function` take `shared_bytes` of dynamic shared memory (above 48 KB needs an opt-in) and
    prefer the largest shared-memory carveout: its tiles wait in shared memory, L1 holds nothing."""
    drv = _load()
    attributes = drv.CUfunction_attribute
    call("cuFuncSetAttribute", drv.cuFuncSetAttribute(
        function, attributes.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes))
    call("cuFuncSetAttribute", drv.cuFuncSetAttribute(
        function, attributes.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100))


def resident_blocks_per_sm(function: Any, block: int, shared_bytes: int) -> int:
    drv = _load()
    return call("cuOccupancyMaxActiveBlocksPerMultiprocessor",
                drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(function, block, shared_bytes))


def launch(function: Any, grid: int, block: int, shared_bytes: int, stream: int, params_address: int) -> None:
    drv = _driver or _load()  # the global alone once loaded: one launch per small scan
    # Checked inline rather than through call(): one launch per small scan, where each Python call counts.
    result = drv.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, shared_bytes, stream, params_address, 0)
    if result[0]:
        call("cuLaunchKernel", result)


def alloc(nbytes: int) -> int:
    return int(call("cuMemAlloc", _load().cuMemAlloc(max(nbytes, 1))))


def free(pointer: int) -> None:
    call("cuMemFree", _load().cuMemFree(pointer))


def memset_async(pointer: int, value: int, nbytes: int, stream: int) -> None:
    call("cuMemsetD8Async", _load().cuMemsetD8Async(pointer, value, nbytes, stream))


def memset32_async(pointer: int, value: int, count: int, stream: int) -> None:
    call("cuMemsetD32Async", _load().cuMemsetD32Async(pointer, value, count, stream))


def copy_to_device(pointer: int, host_buffer: Any, nbytes: int, stream: int) -> None:
    call("cuMemcpyHtoDAsync", _load().cuMemcpyHtoDAsync(pointer, host_buffer, nbytes, stream))


def copy_to_host(host_buffer: Any, pointer: int, nbytes: int, stream: int) -> None:
    call("cuMemcpyDtoHAsync", _load().cuMemcpyDtoHAsync(host_buffer, pointer, nbytes, stream))


def copy_device_to_device(target: int, source: int, nbytes: int, stream: int) -> None:
    call("cuMemcpyDtoDAsync", _load().cuMemcpyDtoDAsync(target, source, nbytes, stream))


def synchronize(stream: int) -> None:
    call("cuStreamSynchronize", _load().cuStreamSynchronize(stream))


def stream_is_capturing(stream: int) -> bool:
    drv = _load()
    status = call("cuStreamIsCapturing", drv.cuStreamIsCapturing(stream))
    return status != drv.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE


def create_stream() -> int:
    drv = _load()
    return int(call("cuStreamCreate", drv.cuStreamCreate(drv.CUstream_flags.CU_STREAM_NON_BLOCKING)))


def destroy_stream(stream: int) -> None:
    call("cuStreamDestroy", _load().cuStreamDestroy(stream))


class Event:
    """A CUDA event for timing; `elapsed_ms(start, end)` after `end` has completed."""

    def __init__(self) -> None:
        drv = _load()
        self.handle = call("cuEventCreate", drv.cuEventCreate(drv.CUevent_flags.CU_EVENT_DEFAULT))

    def record(self, stream: int) -> None:
        call("cuEventRecord", _load().cuEventRecord(self.handle, stream))

    def synchronize(self) -> None:
        call("cuEventSynchronize", _load().cuEventSynchronize(self.handle))

    def __del__(self) -> None:
        if _driver is not None and getattr(self, "handle", None) is not None:
            _driver.cuEventDestroy(self.handle)


def elapsed_ms(start: Event, end: Event) -> float:
    return call("cuEventElapsedTime", _load().cuEventElapsedTime(start.handle, end.handle))


def capture_graph(stream: int, enqueue) -> Any:
    """Capture what `enqueue()` puts on `stream` into an instantiated CUDA graph."""
    drv = _load()
    mode = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    call("cuStreamBeginCapture", drv.cuStreamBeginCapture(stream, mode))
    try:
        enqueue()
    finally:
        graph = call("cuStreamEndCapture", drv.cuStreamEndCapture(stream))
    try:
        return call("cuGraphInstantiate", drv.cuGraphInstantiate(graph, 0))
    finally:
        call("cuGraphDestroy", drv.cuGraphDestroy(graph))


def launch_graph(graph_exec: Any, stream: int) -> None:
    call("cuGraphLaunch", _load().cuGraphLaunch(graph_exec, stream))


def destroy_graph(graph_exec: Any) -> None:
    call("cuGraphExecDestroy", _load().cuGraphExecDestroy(graph_exec))
