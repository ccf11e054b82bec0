"""rtscan.scan's argument checks (rtscan/_scan.py, rtscan/_arrays.py).

Validation happens before any GPU work, so most of these run with NumPy inputs on a machine with
no GPU. To prove the order, the CUDA driver is replaced by a tripwire: a check that let bad input
through would reach the driver and raise DriverTouched instead of the expected error, and a
valid call is recognised by reaching the tripwire. Every error must name the argument, and be
both an rtscan error and the usual Python kind (ValueError / TypeError).
"""

from __future__ import annotations

import numpy as np
import pytest

import rtscan
from rtscan import InputError, InputTypeError, RtscanError, _driver


class DriverTouched(Exception):
    """Raised by the tripwire in place of starting the CUDA driver."""


@pytest.fixture
def tripwire(monkeypatch):
    def touched(*args, **kwargs):
        raise DriverTouched("the CUDA driver was started")

    monkeypatch.setattr(_driver, "_load", touched)


def f32(*shape, value=0.5):
    return np.full(shape, value, dtype=np.float32)


def raises(kind, pattern):
    """pytest.raises for an rtscan input error that must also be the matching builtin kind."""
    builtin = {InputError: ValueError, InputTypeError: TypeError}[kind]

    class Both:
        def __enter__(self):
            self.context = pytest.raises(kind, match=pattern)
            self.info = self.context.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.context.__exit__(*exc)
            assert isinstance(self.info.value, builtin) and isinstance(self.info.value, RtscanError)
            return handled

    return Both()


pytestmark = pytest.mark.usefixtures("tripwire")


# ---- the tripwire itself: valid input passes validation and goes on to the driver --------------

@pytest.mark.parametrize("kwargs", [
    {}, {"dim": 0}, {"dim": -2}, {"reverse": True}, {"reverse": np.bool_(True)}, {"h0": f32(3)},
    {"out": f32(3, 5)}, {"variant": "auto"}, {"variant": "lookback_regs"}, {"stream": 0},
])
def test_valid_call_reaches_the_driver(kwargs):
    with pytest.raises(DriverTouched):
        rtscan.scan(f32(3, 5), f32(3, 5), **kwargs)


def test_valid_call_with_noncontiguous_inputs_reaches_the_driver():
    a = np.ones((6, 10), np.float32)[::2, ::3]
    with pytest.raises(DriverTouched):
        rtscan.scan(a, a.T.copy().T, h0=f32(3), out=np.empty((4, 3), np.float32).T)


# ---- dtypes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16, np.int64, np.complex64, np.bool_])
def test_a_with_unsupported_dtype(dtype):
    with raises(InputTypeError, r"^a has dtype"):
        rtscan.scan(np.ones(8, dtype), np.ones(8, dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_b_dtype_differs_from_a(dtype):
    with raises(InputTypeError, r"^b has dtype"):
        rtscan.scan(f32(8), np.ones(8, dtype))


def test_float64_is_rejected_with_the_supported_dtypes_named():
    with raises(InputTypeError, "float32") as info:
        rtscan.scan(np.ones(4), np.ones(4))
    assert "float64" in str(info.value)


# ---- shapes and dim ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape_b", [(4,), (5, 1), (1, 5), (5, 5), (2, 5, 5)])
def test_b_shape_differs_from_a(shape_b):
    with raises(InputError, r"^b has shape"):
        rtscan.scan(f32(2, 5), np.ones(shape_b, np.float32))


@pytest.mark.parametrize("dim", [2, -3, 100])
def test_dim_out_of_range(dim):
    with raises(InputError, rf"dim={dim}"):
        rtscan.scan(f32(2, 5), f32(2, 5), dim=dim)


@pytest.mark.parametrize("dim", [1.0, "0", None, True])
def test_dim_not_an_int(dim):
    with raises(InputTypeError, r"^dim"):
        rtscan.scan(f32(2, 5), f32(2, 5), dim=dim)


def test_zero_dimensional_input():
    with raises(InputError, "at least one dimension"):
        rtscan.scan(np.ones((), np.float32), np.ones((), np.float32))


# ---- h0 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim,h0_shape", [
    ((3, 5), -1, (5,)), ((3, 5), -1, (3, 1)), ((3, 5), -1, (1, 3)), ((3, 5), 0, (3,)),
    ((3, 5), -1, ()), ((7,), -1, (1,)), ((2, 3, 4), 1, (2, 3)), ((2, 3, 4), 1, (8,)),
])
def test_h0_with_wrong_shape(shape, dim, h0_shape):
    with raises(InputError, r"^h0 must have the shape"):
        rtscan.scan(f32(*shape), f32(*shape), dim=dim, h0=np.zeros(h0_shape, np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.float16])
def test_h0_with_wrong_dtype(dtype):
    with raises(InputTypeError, r"^h0 has dtype"):
        rtscan.scan(f32(3, 5), f32(3, 5), h0=np.zeros(3, dtype))


@pytest.mark.parametrize("make_h0", [
    lambda: np.zeros((4, 3), np.float32).T,          # transposed
    lambda: np.zeros((3, 8), np.float32)[:, ::2],    # every other column
    lambda: np.zeros((6, 4), np.float32)[::2],       # every other row
])
def test_h0_not_contiguous(make_h0):
    with raises(InputError, r"^h0 must be contiguous"):
        rtscan.scan(f32(3, 4, 5), f32(3, 4, 5), h0=make_h0())


def test_h0_contiguous_with_size_one_axes_is_accepted():
    # shape (3, 1) with a meaningless stride on the size-1 axis
    h0 = np.lib.stride_tricks.as_strided(np.zeros(3, np.float32), shape=(3, 1), strides=(4, 400))
    with pytest.raises(DriverTouched):
        rtscan.scan(f32(3, 1, 5), f32(3, 1, 5), h0=h0)


@pytest.mark.parametrize("h0", [0.5, [0.0, 0.0, 0.0], "zeros"])
def test_h0_of_unsupported_type(h0):
    with raises(InputTypeError, r"^h0 must be"):
        rtscan.scan(f32(3, 5), f32(3, 5), h0=h0)


# ---- out --------------------------------------------------------------------------------------

@pytest.mark.parametrize("out_shape", [(5, 3), (3,), (3, 5, 1), (15,)])
def test_out_with_wrong_shape(out_shape):
    with raises(InputError, r"^out must have the shape"):
        rtscan.scan(f32(3, 5), f32(3, 5), out=np.empty(out_shape, np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_out_with_wrong_dtype(dtype):
    with raises(InputTypeError, r"^out has dtype"):
        rtscan.scan(f32(3, 5), f32(3, 5), out=np.empty((3, 5), dtype))


def test_out_read_only():
    out = np.full((3, 5), 7.0, np.float32)
    out.flags.writeable = False
    with raises(InputError, r"^out is a read-only"):
        rtscan.scan(f32(3, 5), f32(3, 5), out=out)


@pytest.mark.parametrize("strides", [(0, 4), (4, 0), (0, 0), (4, 4), (8, 4)])
def test_out_with_overlapping_elements(strides):
    base = np.zeros(64, np.float32)
    out = np.lib.stride_tricks.as_strided(base, shape=(3, 5), strides=strides)
    assert out.flags.writeable
    with raises(InputError, r"^out has overlapping elements"):
        rtscan.scan(f32(3, 5), f32(3, 5), out=out)
    assert not base.any()  # nothing written


def test_out_with_separate_but_strided_elements_is_accepted():
    base = np.zeros(64, np.float32)
    out = np.lib.stride_tricks.as_strided(base, shape=(3, 5), strides=(20, 4))  # dense, C order
    with pytest.raises(DriverTouched):
        rtscan.scan(f32(3, 5), f32(3, 5), out=out)
    out = np.lib.stride_tricks.as_strided(base, shape=(3, 5), strides=(4, 12))  # dense, F order
    with pytest.raises(DriverTouched):
        rtscan.scan(f32(3, 5), f32(3, 5), out=out)


@pytest.mark.parametrize("out", [[0.0] * 5, 3.0, "out"])
def test_out_of_unsupported_type(out):
    with raises(InputTypeError, r"^out must be"):
        rtscan.scan(f32(5), f32(5), out=out)


def test_nothing_is_written_to_out_on_bad_input():
    out = np.full((3, 5), 7.0, np.float32)
    with raises(InputError, "h0"):
        rtscan.scan(f32(3, 5), f32(3, 5), h0=np.zeros(5, np.float32), out=out)
    assert (out == 7.0).all()


# ---- variant, reverse, stream, argument types ---------------------------------------------------

@pytest.mark.parametrize("variant", ["nope", "AUTO", "", None, "lookback"])
def test_bad_variant(variant):
    with raises(InputError, r"^variant must be"):
        rtscan.scan(f32(5), f32(5), variant=variant)


def test_bad_variant_lists_the_known_ones():
    with raises(InputError, "lookback_regs"):
        rtscan.scan(f32(5), f32(5), variant="nope")


@pytest.mark.parametrize("reverse", [1, 0, "yes", None, 1.0, [True]])
def test_reverse_not_a_bool(reverse):
    with raises(InputTypeError, r"^reverse must be a bool"):
        rtscan.scan(f32(5), f32(5), reverse=reverse)


@pytest.mark.parametrize("a", [[1.0, 2.0], (1.0, 2.0), 1.0, None, "ab", {"x": 1}])
def test_a_of_unsupported_type(a):
    with raises(InputTypeError, r"^a must be"):
        rtscan.scan(a, f32(2))


def test_b_of_unsupported_type():
    with raises(InputTypeError, r"^b must be"):
        rtscan.scan(f32(2), [1.0, 2.0])


@pytest.mark.parametrize("stream", ["0", 1.5, True, object(), [0]])
def test_bad_stream_object(stream):
    with raises(InputTypeError, r"^stream must be"):
        rtscan.scan(f32(5), f32(5), stream=stream)


# ---- zero-length input: an empty result, no GPU needed -------------------------------------------

@pytest.mark.parametrize("shape,dim", [((0,), -1), ((3, 0), -1), ((0, 4), -1), ((0, 4), 0), ((2, 0, 3), 1)])
def test_zero_length_returns_empty_result(shape, dim):
    result = rtscan.scan(np.empty(shape, np.float32), np.empty(shape, np.float32), dim=dim)
    assert isinstance(result, np.ndarray) and result.shape == shape and result.dtype == np.float32


def test_zero_length_returns_out():
    out = np.empty((3, 0), np.float32)
    assert rtscan.scan(np.empty((3, 0), np.float32), np.empty((3, 0), np.float32), out=out) is out


def test_zero_length_is_still_validated():
    with raises(InputTypeError, r"^a has dtype"):
        rtscan.scan(np.empty((3, 0)), np.empty((3, 0)))
    with raises(InputError, r"^b has shape"):
        rtscan.scan(np.empty((3, 0), np.float32), np.empty((0, 3), np.float32))


# ---- without a GPU --------------------------------------------------------------------------------

def test_valid_numpy_call_without_gpu_raises_no_device(monkeypatch):
    monkeypatch.undo()  # the real driver, not the tripwire
    usable, _ = _driver.gpu_status()
    if usable:
        pytest.skip("a GPU is usable here; this checks the error raised where there is none")
    with pytest.raises(rtscan.NoDeviceError) as info:
        rtscan.scan(f32(3, 5), f32(3, 5))
    assert isinstance(info.value, RtscanError) and str(info.value)
    assert not rtscan.gpu_available()


# ---- inputs only a GPU machine has: torch tensors (checked before any launch) ---------------------

def _torch():
    return pytest.importorskip("torch")


def test_torch_cpu_tensor_is_rejected():
    torch = _torch()
    with raises(InputError, r"^a is a torch tensor on cpu"):
        rtscan.scan(torch.ones(5), torch.ones(5))


@pytest.mark.gpu
class TestOnGpu:
    def poisoned(self, *shape):
        import torch

        return torch.full(shape, 7.0, device="cuda")

    def test_requires_grad(self):
        import torch

        a = torch.ones(5, device="cuda", requires_grad=True)
        with raises(InputError, r"^a requires grad"):
            rtscan.scan(a, torch.ones(5, device="cuda"))

    def test_float64_cuda_tensor(self):
        import torch

        with raises(InputTypeError, r"^a has dtype float64"):
            rtscan.scan(torch.ones(5, device="cuda", dtype=torch.float64), torch.ones(5, device="cuda"))

    def test_cuda_and_host_mixed(self):
        import torch

        with raises(InputError, "same device"):
            rtscan.scan(torch.ones(5, device="cuda"), f32(5))

    def test_h0_on_host(self):
        import torch

        out = self.poisoned(3, 5)
        with raises(InputError, r"^h0 is in host memory"):
            rtscan.scan(torch.ones(3, 5, device="cuda"), torch.ones(3, 5, device="cuda"), h0=f32(3), out=out)
        assert (out == 7.0).all()

    def test_out_on_host(self):
        import torch

        with raises(InputError, r"^out is in host memory"):
            rtscan.scan(torch.ones(5, device="cuda"), torch.ones(5, device="cuda"), out=f32(5))

    def test_a_and_b_with_different_strides(self):
        import torch

        a = torch.ones(4, 6, device="cuda")
        b = torch.ones(6, 4, device="cuda").T
        out = self.poisoned(4, 6)
        with raises(InputError, r"^b has strides"):
            rtscan.scan(a, b, out=out)
        assert (out == 7.0).all()

    @pytest.mark.parametrize("shift", [1, -1, 3])
    def test_out_partly_overlapping_a(self, shift):
        import torch

        base = torch.full((20,), 7.0, device="cuda")
        a, out = base[4:12], base[4 + shift:12 + shift]
        with raises(InputError, r"^out overlaps a"):
            rtscan.scan(a, torch.ones(8, device="cuda"), out=out)
        assert (base == 7.0).all()

    def test_out_partly_overlapping_b(self):
        import torch

        base = torch.full((20,), 7.0, device="cuda")
        with raises(InputError, r"^out overlaps b"):
            rtscan.scan(torch.ones(8, device="cuda"), base[0:8], out=base[4:12])
        assert (base == 7.0).all()

    def test_interface_object_without_out(self, monkeypatch):
        import torch

        monkeypatch.undo()  # reading a __cuda_array_interface__ asks the driver for the pointer's device

        class Interface:
            def __init__(self, tensor):
                self.__cuda_array_interface__ = tensor.__cuda_array_interface__
                self.tensor = tensor

        a = Interface(torch.ones(5, device="cuda"))
        with raises(InputTypeError, "pass out="):
            rtscan.scan(a, a)


def test_out_overlaps_follows_the_byte_ranges(rng):
    """_scan.Addresses.out_overlaps (what check_aliasing and the torch path both ask) against the
    byte ranges counted element by element on random layouts of an input and out, placed so that
    they often overlap, sometimes as out = the input exactly: refused where the ranges meet, unless
    out is the input itself with its strides."""
    from rtscan import _scan

    def byte_range(pointer, shape, strides):
        offsets = [sum(i * s for i, s in zip(index, strides)) for index in np.ndindex(*shape)]
        return pointer + 4 * min(offsets), pointer + 4 * max(offsets) + 4

    compared = 0
    for _ in range(3000):
        shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(1, 3))))
        strides = tuple(int(s) for s in rng.integers(1, 7, size=len(shape)))
        out_strides = strides if rng.random() < 0.5 else tuple(int(s) for s in rng.integers(1, 7, size=len(shape)))
        addresses = _scan._addresses(shape, strides, out_strides, "float32")
        if addresses.out_overlaps_itself:
            continue
        source, out = (4096 + 4 * int(rng.integers(0, 48)) for _ in range(2))
        out = source if rng.random() < 0.25 else out
        (source_low, source_high), (out_low, out_high) = byte_range(source, shape, strides), byte_range(out, shape, out_strides)
        meet = source_low < out_high and out_low < source_high
        expected = meet and not (source == out and strides == out_strides)
        assert addresses.out_overlaps(source, out) == expected, (shape, strides, out_strides, source, out)
        compared += 1
    assert compared > 1000
