"""Arrays in and out: PyTorch, CuPy, NumPy, and anything exposing __cuda_array_interface__ or
__dlpack__. Each argument becomes an ArrayView (pointer, shape, strides in elements, dtype,
device), and the result is made by the input's own framework (torch in, torch out).
"""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any, NamedTuple

import numpy as np

from .errors import InputError, InputTypeError

SUPPORTED_DTYPES = ("float32",)
_ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}


class ArrayView(NamedTuple):
    """One argument as rtscan reads it. A NamedTuple because one is built per argument per call,
    and on the hot path of a small scan that cost counts (profiling/NOTES.md, item 14)."""

    obj: Any
    kind: str                   # "torch", "cupy", "numpy", "cuda_array_interface", "dlpack"
    pointer: int                # device address of element 0 (host address for numpy)
    shape: tuple[int, ...]
    strides: tuple[int, ...]    # in elements
    dtype: str                  # numpy-style name: "float32"
    device: int | None          # CUDA ordinal; None for host memory
    keepalive: Any = None       # a DLPack capsule that must outlive the pointer's use

    @property
    def size(self) -> int:
        return element_count(self.shape)

    def extent_bytes(self) -> tuple[int, int]:
        """[first, last) byte addresses the view can touch; empty views touch nothing."""
        low, high = extent_offsets(self.shape, self.strides, self.dtype)
        return (self.pointer + low, self.pointer + high)


def extent_offsets(shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> tuple[int, int]:
    """The [first, last) bytes a view of this layout can touch, counted from its element 0; (0, 0)
    when it has no element."""
    low, high = _extent_elements(shape, strides)
    if high < low:
        return (0, 0)
    itemsize = _ITEMSIZE.get(dtype, 0)
    return (low * itemsize, (high + 1) * itemsize)


@functools.lru_cache(maxsize=256)
def element_count(shape: tuple[int, ...]) -> int:
    count = 1
    for extent in shape:
        count *= extent
    return count


@functools.lru_cache(maxsize=256)
def _extent_elements(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """The lowest and highest element offsets a view reaches; (0, -1) when it has no element."""
    if element_count(shape) == 0:
        return (0, -1)
    low = high = 0
    for extent, stride in zip(shape, strides):
        if stride < 0:
            low += (extent - 1) * stride
        else:
            high += (extent - 1) * stride
    return (low, high)


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


_TORCH_DTYPES: dict = {}  # torch dtype -> numpy-style name, filled as dtypes are seen


def _torch_view(name: str, tensor: Any, torch: Any) -> ArrayView:
    if not tensor.is_cuda:
        raise InputError(f"{name} is a torch tensor on {tensor.device}; pass a CUDA tensor, or a NumPy array "
                         f"to have rtscan copy it to the GPU and back")
    dtype = _TORCH_DTYPES.get(tensor.dtype)
    if dtype is None:
        dtype = _TORCH_DTYPES.setdefault(tensor.dtype, str(tensor.dtype).removeprefix("torch."))
    if tensor.requires_grad and torch.is_grad_enabled():
        raise InputError(f"{name} requires grad, and rtscan.scan has no autograd yet; pass {name}.detach() "
                         f"or call inside torch.no_grad()")
    # tuple.__new__ skips the NamedTuple's Python-level __new__, half the cost of building a view.
    return tuple.__new__(ArrayView, (tensor, "torch", tensor.data_ptr(), tuple(tensor.shape), tuple(tensor.stride()),
                                     dtype, tensor.get_device(), None))


def _cupy_view(name: str, array: Any) -> ArrayView:
    itemsize = array.dtype.itemsize
    return ArrayView(array, "cupy", int(array.data.ptr), tuple(array.shape),
                     tuple(s // itemsize for s in array.strides), str(array.dtype), int(array.device.id))


def _numpy_view(name: str, array: np.ndarray) -> ArrayView:
    itemsize = array.dtype.itemsize
    return ArrayView(array, "numpy", int(array.ctypes.data), tuple(array.shape),
                     tuple(s // itemsize for s in array.strides), str(array.dtype), None)


def _device_of_pointer(name: str, pointer: int) -> int:
    from . import _driver
    from .errors import DriverError

    drv = _driver.driver()
    attribute = drv.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
    try:
        return int(_driver.call("cuPointerGetAttribute", drv.cuPointerGetAttribute(attribute, pointer)))
    except DriverError as exc:
        raise InputError(f"{name} does not point to CUDA device memory ({exc.name})") from exc


_TYPESTR = {"<f4": "float32", "<f8": "float64", "<f2": "float16"}


def _cai_view(name: str, obj: Any) -> ArrayView:
    interface = obj.__cuda_array_interface__
    shape = tuple(interface["shape"])
    dtype = _TYPESTR.get(interface["typestr"], interface["typestr"])
    itemsize = _ITEMSIZE.get(dtype, 1)
    if interface.get("strides") is None:
        strides = contiguous_strides(shape)
    else:
        strides = tuple(s // itemsize for s in interface["strides"])
    pointer, read_only = int(interface["data"][0]), bool(interface["data"][1])
    if read_only and name == "out":
        raise InputError("out is read-only (its __cuda_array_interface__ says so)")
    device = _device_of_pointer(name, pointer) if pointer else 0
    return ArrayView(obj, "cuda_array_interface", pointer, shape, strides, dtype, device)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
_DL_FLOAT, _DL_BFLOAT = 2, 4


def _dlpack_view(name: str, obj: Any) -> ArrayView:
    capsule = obj.__dlpack__()
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    # DLManagedTensor starts with its DLTensor; the capsule keeps ownership (and calls the deleter).
    tensor = _DLTensor.from_address(get_pointer(capsule, b"dltensor"))
    if tensor.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise InputError(f"{name} is a DLPack tensor on device type {tensor.device.device_type}, not CUDA memory")
    bits, code = tensor.dtype.bits, tensor.dtype.code
    dtype = {(_DL_FLOAT, 32): "float32", (_DL_FLOAT, 64): "float64", (_DL_FLOAT, 16): "float16",
             (_DL_BFLOAT, 16): "bfloat16"}.get((code, bits), f"dlpack(code={code}, bits={bits})")
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(tensor.ndim))
    else:
        strides = contiguous_strides(shape)
    pointer = (tensor.data or 0) + tensor.byte_offset
    return ArrayView(obj, "dlpack", pointer, shape, strides, dtype, tensor.device.device_id, keepalive=capsule)


def view(name: str, obj: Any) -> ArrayView:
    """Read an argument; TypeError naming it when no interface is recognised."""
    torch = sys.modules.get("torch")  # never imported here: a torch tensor means torch is loaded
    if torch is not None and isinstance(obj, torch.Tensor):
        return _torch_view(name, obj, torch)
    module = _module_of(obj)
    if module == "cupy" and "cupy" in sys.modules and isinstance(obj, sys.modules["cupy"].ndarray):
        return _cupy_view(name, obj)
    if isinstance(obj, np.ndarray):
        return _numpy_view(name, obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _cai_view(name, obj)
    if hasattr(obj, "__dlpack__"):
        return _dlpack_view(name, obj)
    raise InputTypeError(f"{name} must be a GPU array (PyTorch, CuPy, __cuda_array_interface__, __dlpack__) or a "
                         f"NumPy array, got {type(obj).__module__}.{type(obj).__qualname__}")


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides, in elements, of a C-contiguous array of `shape`."""
    strides, running = [], 1
    for extent in reversed(shape):
        strides.insert(0, running)
        running *= extent
    return tuple(strides)


def check_dtype(name: str, array: ArrayView) -> None:
    if array.dtype not in SUPPORTED_DTYPES:
        raise InputTypeError(f"{name} has dtype {array.dtype}; rtscan supports {', '.join(SUPPORTED_DTYPES)} "
                             f"for now")


def empty_like(array: ArrayView, offset: int = 0) -> ArrayView:
    """A new uninitialised result of the input's own kind, keeping its layout where dense. With
    `offset` (1-31; the caller passes it only for a C-contiguous torch or CuPy input), a C-contiguous
    result that starts that many elements into its allocation (whose start is at least 256-byte
    aligned), as far past a 128-byte line as the input, so that a scan of a[1:] and b[1:] keeps the
    16-byte path from the line (rtscan/_scan.py's _result_offset, P67, P196)."""
    if array.kind == "torch":
        torch = sys.modules["torch"]  # loaded, since a is a tensor; cheaper than an import statement per call
        if offset:
            flat = torch.empty(array.size + offset, dtype=array.obj.dtype, device=array.obj.device)
            return view("out", flat[offset:].view(array.shape))
        return view("out", torch.empty_like(array.obj, memory_format=torch.preserve_format))
    if array.kind == "cupy":
        import cupy

        with cupy.cuda.Device(array.device):
            if offset:
                flat = cupy.empty(array.size + offset, dtype=array.obj.dtype)
                return view("out", flat[offset:].reshape(array.shape))
            return view("out", cupy.empty_like(array.obj))
    if array.kind == "numpy":
        return view("out", np.empty_like(array.obj))
    raise InputTypeError(f"rtscan cannot allocate a result of the kind of a ({array.kind}); pass out=")


_torch_current_stream: Any = None  # torch's current-stream getter, looked up on first use


def torch_stream_getter() -> Any:
    """torch's current-stream getter: the raw one, which returns the handle without building a
    Stream object (what Triton's launcher reads too), else the public call."""
    global _torch_current_stream
    if _torch_current_stream is None:
        import torch

        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _torch_current_stream = raw or (lambda device: torch.cuda.current_stream(device).cuda_stream)
    return _torch_current_stream


def default_stream(array: ArrayView) -> int:
    """The stream the input's framework is using now; the legacy default stream otherwise."""
    if array.kind == "torch":
        current_stream = _torch_current_stream or torch_stream_getter()  # a global read once looked up
        return int(current_stream(array.device))
    if array.kind == "cupy":
        import cupy

        with cupy.cuda.Device(array.device):
            return int(cupy.cuda.get_current_stream().ptr)
    if array.kind == "cuda_array_interface":
        stream = array.obj.__cuda_array_interface__.get("stream")
        return int(stream) if stream else 0
    return 0


def stream_handle(stream: Any) -> int:
    """A stream handle from an int, a cuda.core Stream, a torch or CuPy stream."""
    if isinstance(stream, bool):
        raise InputTypeError("stream must be a stream handle or stream object, got a bool")
    if isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1])
    if hasattr(stream, "cuda_stream"):
        return int(stream.cuda_stream)
    if hasattr(stream, "ptr"):
        return int(stream.ptr)
    if hasattr(stream, "handle"):
        return int(stream.handle)
    raise InputTypeError(f"stream must be an int handle, a cuda.core Stream, or a torch or CuPy stream, "
                         f"got {type(stream).__qualname__}")
