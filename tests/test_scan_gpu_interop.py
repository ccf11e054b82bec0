"""rtscan.scan with the array kinds and arguments of the public contract, on the GPU: NumPy in and
out, CuPy in and out, __cuda_array_interface__ and __dlpack__ objects, in-place out=a / out=b,
zero-length input, and the `stream` argument (honoured, proven by ordering against a busy stream)."""

from __future__ import annotations

import numpy as np
import pytest

import rtscan
import _checks
from _gpu import TILE, cuda, host, length_id, poisoned_like, regime, scan_and_check, torch

pytestmark = pytest.mark.gpu


def check_numpy(result, a, b, h0=None, dim=-1, reverse=False):
    ref = _checks.expected(a, b, h0, dim, reverse)
    _checks.assert_close(result, ref, _checks.running_scale(a, b, h0, dim, reverse))


# ---- NumPy in, NumPy out ----------------------------------------------------------------------

@pytest.mark.parametrize("length", [1, 33, TILE + 1, 7 * TILE + 5], ids=length_id)
@pytest.mark.parametrize("case", ["plain", "h0", "reverse", "dim0", "transposed", "out"])
def test_numpy_in_numpy_out(rng, case, length):
    a, b = regime(rng, "mixed", (3, length))
    kwargs = {}
    if case == "h0":
        kwargs["h0"] = rng.uniform(-2, 2, 3).astype(np.float32)
    elif case == "reverse":
        kwargs["reverse"] = True
    elif case == "dim0":
        a, b = a.T.copy(), b.T.copy()
        kwargs["dim"] = 0
    elif case == "transposed":  # non-contiguous NumPy input
        a, b = np.ascontiguousarray(a.T).T, np.ascontiguousarray(b.T).T
    a_copy, b_copy = a.copy(), b.copy()
    if case == "out":
        out = np.full(a.shape, np.nan, np.float32)
        result = rtscan.scan(a, b, out=out)
        assert result is out
    else:
        result = rtscan.scan(a, b, **kwargs)
    assert isinstance(result, np.ndarray) and result.dtype == np.float32 and result.shape == a.shape
    check_numpy(result, a, b, kwargs.get("h0"), kwargs.get("dim", -1), kwargs.get("reverse", False))
    assert np.array_equal(a, a_copy) and np.array_equal(b, b_copy)


def test_numpy_strided_out(rng):
    a, b = regime(rng, "mixed", (4, 2 * TILE + 3))
    buffer = np.full((4, 2 * a.shape[1]), 777.0, np.float32)
    out = buffer[:, ::2]
    out[...] = np.nan
    assert rtscan.scan(a, b, out=out) is out
    check_numpy(out, a, b)
    assert (buffer[:, 1::2] == 777.0).all()


# ---- CuPy in, CuPy out ------------------------------------------------------------------------

@pytest.fixture
def cupy():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("length", [5, TILE + 1, 4 * TILE], ids=length_id)
@pytest.mark.parametrize("case", ["plain", "h0_reverse", "negative_strides", "out"])
def test_cupy_in_cupy_out(rng, cupy, case, length):
    a_np, b_np = regime(rng, "mixed", (2, length))
    a, b = cupy.asarray(a_np), cupy.asarray(b_np)
    h0, reverse, out = None, False, None
    if case == "h0_reverse":
        h0, reverse = rng.uniform(-2, 2, 2).astype(np.float32), True
    elif case == "negative_strides":  # a view walking memory backwards along time
        a, b = a[:, ::-1], b[:, ::-1]
        a_np, b_np = a_np[:, ::-1], b_np[:, ::-1]
    elif case == "out":
        out = cupy.full(a.shape, cupy.nan, dtype=cupy.float32)
    result = rtscan.scan(a, b, h0=None if h0 is None else cupy.asarray(h0), reverse=reverse, out=out)
    assert isinstance(result, cupy.ndarray) and result.dtype == cupy.float32
    if out is not None:
        assert result is out
    cupy.cuda.get_current_stream().synchronize()
    check_numpy(cupy.asnumpy(result), a_np, b_np, h0, -1, reverse)


# ---- objects with only __cuda_array_interface__ or __dlpack__ --------------------------------------

class InterfaceOnly:
    def __init__(self, tensor):
        self.tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


class DLPackOnly:
    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, *args, **kwargs):
        return self.tensor.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


@pytest.mark.parametrize("wrapper", [InterfaceOnly, DLPackOnly])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_interface_objects_with_out(rng, wrapper, layout):
    a_np, b_np = regime(rng, "mixed", (3, 2 * TILE + 7))
    a, b = cuda(a_np), cuda(b_np)
    out = poisoned_like(a)
    if layout == "transposed":
        a, b, out = cuda(a_np.T.copy()).T, cuda(b_np.T.copy()).T, torch.full_like(out.T, float("nan")).T
    result = rtscan.scan(wrapper(a), wrapper(b), out=wrapper(out), h0=wrapper(cuda(np.ones(3, np.float32))))
    assert isinstance(result, wrapper) and result.tensor is out
    torch.cuda.synchronize()
    check_numpy(host(out), a_np, b_np, np.ones(3, np.float32))


@pytest.mark.parametrize("wrapper", [InterfaceOnly, DLPackOnly])
def test_interface_objects_need_out(wrapper):
    a = torch.ones(5, device="cuda")
    with pytest.raises(rtscan.InputTypeError, match="out="):
        rtscan.scan(wrapper(a), wrapper(a))


# ---- in place ----------------------------------------------------------------------------------

@pytest.mark.parametrize("length", [1, 33, TILE + 1, 5 * TILE + 3], ids=length_id)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("target", ["a", "b"])
@pytest.mark.parametrize("shape", ["1d", "batch"])
def test_in_place(rng, target, reverse, length, shape):
    a_np, b_np = regime(rng, "mixed", (length,) if shape == "1d" else (4, length))
    a, b = cuda(a_np), cuda(b_np)
    out = a if target == "a" else b
    assert rtscan.scan(a, b, reverse=reverse, out=out) is out
    torch.cuda.synchronize()
    check_numpy(host(out), a_np, b_np, reverse=reverse)
    untouched = b if target == "a" else a
    assert np.array_equal(host(untouched), b_np if target == "a" else a_np)


# ---- zero-length input ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((0,), -1), ((3, 0), -1), ((0, 5), -1), ((0, 5), 0), ((4, 0, 2), 1)])
def test_zero_length(shape, dim):
    a = torch.empty(shape, device="cuda")
    result = rtscan.scan(a, a.clone(), dim=dim)
    assert isinstance(result, torch.Tensor) and result.is_cuda and result.shape == shape
    out = torch.empty(shape, device="cuda")
    assert rtscan.scan(a, a.clone(), dim=dim, out=out) is out


# ---- the result has the input's kind and device -----------------------------------------------------

def test_result_is_a_new_torch_tensor(rng):
    a_np, b_np = regime(rng, "mixed", (3, 100))
    a, b = cuda(a_np), cuda(b_np)
    result = rtscan.scan(a, b)
    assert isinstance(result, torch.Tensor) and result.device == a.device and result.dtype == torch.float32
    assert result.data_ptr() not in (a.data_ptr(), b.data_ptr())
    torch.cuda.synchronize()
    check_numpy(host(result), a_np, b_np)


def test_variant_by_name(rng):
    a_np, b_np = regime(rng, "mixed", (2, 3 * TILE))
    for name in rtscan.registry.VARIANTS:
        scan_and_check(cuda(a_np), cuda(b_np), variant=name, what=name)


# ---- the stream argument ------------------------------------------------------------------------

def busy(stream):
    """Keep `stream` busy for a while (tens of milliseconds)."""
    with torch.cuda.stream(stream):
        torch.cuda._sleep(200_000_000)


@pytest.mark.filterwarnings("ignore:ExternalStream is deprecated")
@pytest.mark.parametrize("how", ["int_handle", "stream_object", "current_stream", "cupy_stream"])
def test_stream_is_honoured(rng, how):
    """The inputs are written on stream s after a long sleep; a scan that did not run on s would
    read them before they were written (zeros) and fail the comparison."""
    length = 6 * TILE + 1
    a_np, b_np = regime(rng, "mixed", (length,))
    a_new, b_new = cuda(a_np), cuda(b_np)
    a, b = torch.zeros(length, device="cuda"), torch.zeros(length, device="cuda")
    out = poisoned_like(a)
    stream = torch.cuda.Stream()
    rtscan.scan(a, b, out=torch.empty_like(out), stream=stream)  # load the kernel, make the workspace
    torch.cuda.synchronize()
    busy(stream)
    with torch.cuda.stream(stream):
        a.copy_(a_new)
        b.copy_(b_new)
    if how == "int_handle":
        rtscan.scan(a, b, out=out, stream=stream.cuda_stream)
    elif how == "stream_object":
        rtscan.scan(a, b, out=out, stream=stream)
    elif how == "current_stream":
        with torch.cuda.stream(stream):
            rtscan.scan(a, b, out=out)
    else:
        cupy = pytest.importorskip("cupy")
        rtscan.scan(a, b, out=out, stream=cupy.cuda.ExternalStream(stream.cuda_stream))
    assert not stream.query(), "the stream finished too early for this test to prove anything"
    stream.synchronize()
    check_numpy(host(out), a_np, b_np)


@pytest.mark.gpu
@pytest.mark.parametrize("target", ["separate_out", "in_place"])
def test_h0_must_not_overlap_out(rng, target):
    """The first tile of each sequence reads h0 while other tiles write out: any overlap is refused."""
    a_np, b_np = regime(rng, "mixed", (4, 300))
    a, b = cuda(a_np), cuda(b_np)
    out = poisoned_like(a) if target == "separate_out" else a
    h0 = out[0, :4]  # a contiguous view into the output
    before = host(out).copy()
    with pytest.raises(rtscan.InputError, match="h0"):
        rtscan.scan(a, b, h0=h0, out=out)
    assert np.array_equal(host(out), before, equal_nan=True), "written despite the error"
