"""rtscan/_repeat.py: a call repeating an earlier call's facts launches that call's preparation
with its own addresses, and everything the facts do not fix is checked again.

On the CPU, with a stand-in torch module (the suite's CI has no torch) and the driver replaced by
a recorder (tests/_driver_recorder.py):
- a repeated call skips the views and checks, and its launch holds this call's addresses;
- a change in any fact (shape, strides, dtype, device, dim, reverse, stream, out given or not,
  alignment, compile defines) takes the full path, and so does a call whose out now overlaps a;
- grad mode and requires_grad, and a replaced tuning entry, are seen on every call;
- h0, non-torch arrays and torch subclasses are never keyed.
On the GPU (torch): repeated calls at one set of addresses whose contents change between calls,
interleaved with other layouts, each checked against the float64 reference.
"""

from __future__ import annotations

import ctypes
import sys
import types

import numpy as np
import pytest

from rtscan import InputError, InputTypeError, _arrays, _kernels, _repeat, _scan, registry, scan
from _driver_recorder import recorder  # noqa: F401 (a fixture)


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


FLOAT32, FLOAT64 = FakeDtype("float32"), FakeDtype("float64")


class FakeTensor:
    """What rtscan reads of a torch tensor, at a pretend device address."""

    def __init__(self, pointer, shape, strides=None, dtype=FLOAT32, device=0, requires_grad=False):
        if strides is None:
            strides, running = [], 1
            for extent in reversed(shape):
                strides.insert(0, running)
                running *= extent
        self.pointer, self.shape, self.strides = pointer, tuple(shape), tuple(strides)
        self.dtype, self.device_index, self.requires_grad = dtype, device, requires_grad

    @property
    def is_cuda(self):
        return self.device_index >= 0

    @property
    def device(self):
        return f"cuda:{self.device_index}" if self.is_cuda else "cpu"

    def data_ptr(self):
        return self.pointer

    def stride(self):
        return self.strides

    def get_device(self):
        return self.device_index


class FakeTorch(types.ModuleType):
    def __init__(self):
        super().__init__("torch")
        self.Tensor, self.preserve_format, self.grad = FakeTensor, object(), True
        self.next_pointer, self.stream = 0x50000000, 7
        self._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda device: self.stream)

    def is_grad_enabled(self):
        return self.grad

    def empty_like(self, tensor, memory_format=None):
        self.next_pointer += 0x100000
        return FakeTensor(self.next_pointer, tensor.shape, tensor.strides, tensor.dtype, tensor.device_index)


@pytest.fixture
def torch(recorder, monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(_arrays, "_torch_current_stream", None)  # looked up again, from the stand-in
    views = []
    full_view = _arrays.view
    monkeypatch.setattr(_arrays, "view", lambda name, obj: views.append(name) or full_view(name, obj))
    fake.views, fake.recorder = views, recorder
    return fake


def tensors(shape, base=0x10000000, **kwargs):
    size = int(np.prod(shape))
    return [FakeTensor(base + i * 0x1000000, shape, **kwargs) for i in range(3)] if size else None


def launches(recorder):
    return [event for event in recorder.events if event[0] == "launch"]


def launched_pointers(recorder):
    pointers = (ctypes.c_void_p * 4).from_address(recorder.params_address)
    return [ctypes.c_void_p.from_address(pointers[i]).value or 0 for i in range(4)]


def test_a_repeat_skips_validation_and_launches_its_own_addresses(torch):
    a, b, out = tensors((4, 3000))
    assert scan(a, b, out=out) is out
    first = launches(torch.recorder)[-1]
    assert torch.views == ["a", "b", "out"] and len(_repeat._repeats) == 1
    a2, b2, out2 = tensors((4, 3000), base=0x20000000)
    assert scan(a2, b2, out=out2) is out2
    assert torch.views == ["a", "b", "out"]  # no view built: the repeat's path
    assert launches(torch.recorder)[-1] == first  # function, grid, block, shared bytes, stream
    assert launched_pointers(torch.recorder) == [a2.pointer, b2.pointer, out2.pointer, 0]


def test_a_repeat_without_out_allocates_a_new_result_each_time(torch):
    a, b, _ = tensors((2, 100))
    first = scan(a, b)
    views = list(torch.views)
    second = scan(a, b)
    assert torch.views == views and second is not first and second.pointer != first.pointer
    assert launched_pointers(torch.recorder) == [a.pointer, b.pointer, second.pointer, 0]
    assert (second.shape, second.strides) == (a.shape, a.strides)


CHANGES = {
    "shape": lambda a, b, out: ((FakeTensor(a.pointer, (4, 2000)), FakeTensor(b.pointer, (4, 2000)),
                                 FakeTensor(out.pointer, (4, 2000))), {}),
    "strides": lambda a, b, out: ((FakeTensor(a.pointer, (4, 3000), (1, 4)), FakeTensor(b.pointer, (4, 3000), (1, 4)),
                                   FakeTensor(out.pointer, (4, 3000), (1, 4))), {}),
    "dim": lambda a, b, out: ((a, b, out), {"dim": 0}),
    "reverse": lambda a, b, out: ((a, b, out), {"reverse": True}),
    "stream": lambda a, b, out: ((a, b, out), {"stream": 9}),
    "no out": lambda a, b, out: ((a, b, None), {}),
    "misaligned": lambda a, b, out: ((FakeTensor(a.pointer + 4, (4, 3000)), b, out), {}),
    "variant": lambda a, b, out: ((a, b, out), {"variant": "lookback_warp"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_fact_takes_the_full_path(torch, change):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    (a2, b2, out2), kwargs = CHANGES[change](a, b, out)
    torch.views.clear()
    scan(a2, b2, out=out2, **kwargs)
    assert torch.views[:2] == ["a", "b"]
    if change == "stream":
        assert launches(torch.recorder)[-1][5] == 9
    torch.views.clear()
    scan(a2, b2, out=out2, **kwargs)  # and is itself repeated from then on
    assert torch.views == []


def test_compile_defines_are_part_of_the_facts(torch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    torch.views.clear()
    with _kernels.compiled_with((("RTSCAN_PERTURB_SEED", "3"),)):
        scan(a, b, out=out)
    assert torch.views == ["a", "b", "out"]


@pytest.mark.parametrize("wrong", ["dtype of b", "device of b", "shape of out"])
def test_a_mismatch_after_a_repeat_is_refused_as_before(torch, wrong):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    if wrong == "dtype of b":
        b = FakeTensor(b.pointer, b.shape, dtype=FLOAT64)
    elif wrong == "device of b":
        b = FakeTensor(b.pointer, b.shape, device=1)
    else:
        out = FakeTensor(out.pointer, (4, 2999))
    count = len(launches(torch.recorder))
    with pytest.raises((InputError, InputTypeError)):
        scan(a, b, out=out)
    assert len(launches(torch.recorder)) == count


def test_out_overlapping_a_after_a_repeat_is_refused(torch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    count = len(launches(torch.recorder))
    with pytest.raises(InputError, match="out overlaps a"):
        scan(a, b, out=FakeTensor(a.pointer + 4 * 100, (4, 3000)))
    scan(a, b, out=a)  # out=a exactly is allowed, repeated or not
    scan(a, b, out=a)
    assert len(launches(torch.recorder)) == count + 2


def test_requires_grad_is_seen_on_every_call(torch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    a.requires_grad = True
    with pytest.raises(InputError, match="requires grad"):
        scan(a, b, out=out)
    torch.grad = False  # as inside torch.no_grad()
    scan(a, b, out=out)
    assert launched_pointers(torch.recorder)[0] == a.pointer


def test_a_replaced_tuning_entry_is_seen(torch, monkeypatch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out, variant="lookback_regs")
    variant = registry.resolve("lookback_regs")
    entry = variant.table[("sm_90", "float32")]
    monkeypatch.setitem(variant.table, ("sm_90", "float32"), dict(entry, short=dict(entry["short"], items=8)))
    scan(a, b, out=out, variant="lookback_regs")
    assert torch.recorder.shape.items == 8
    assert launches(torch.recorder)[-1][2] == 4 * -(-3000 // torch.recorder.shape.tile)


def test_h0_other_arrays_and_subclasses_are_never_keyed(torch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out, h0=FakeTensor(0x70000000, (4,)))

    class Sub(FakeTensor):
        pass

    scan(Sub(a.pointer, a.shape), b, out=out)
    scan(a, b, out=out, stream=types.SimpleNamespace(cuda_stream=7))  # a torch-like stream object
    assert _repeat._repeats == {}


def test_multi_pass_variants_are_not_repeated(torch):
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out, variant="three_pass")
    scan(a, b, out=out, variant="three_pass")
    assert _repeat._repeats == {} and torch.views == ["a", "b", "out"] * 2


def test_an_empty_call_is_not_remembered(torch):
    a, b, out = (FakeTensor(0x10000000 + i * 0x1000, (3, 0)) for i in range(3))
    assert scan(a, b, out=out) is out
    assert _repeat._repeats == {} and not launches(torch.recorder)


def test_the_full_path_fills_what_the_repeat_reads(torch):
    """The Repeat holds the full path's own preparation: the same _Prepared object _scan keeps."""
    a, b, out = tensors((4, 3000))
    scan(a, b, out=out)
    (repeat,) = _repeat._repeats.values()
    assert repeat.prepared in _scan._prepared.values() and repeat.arch == "sm_90" and repeat.dtype == "float32"


# ---- on the GPU --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_repeated_calls_with_changing_contents_are_correct(rng):
    import torch as real_torch

    import _checks

    layouts = [(3, 5000), (1, 70000), (64, 33)]
    buffers = {shape: [real_torch.empty(shape, device="cuda") for _ in range(3)] for shape in layouts}
    for round_ in range(4):
        for shape in layouts:
            a, b, out = buffers[shape]
            a_host = rng.uniform(-1, 1, shape).astype(np.float32)
            b_host = rng.standard_normal(shape).astype(np.float32)
            a.copy_(real_torch.from_numpy(a_host))
            b.copy_(real_torch.from_numpy(b_host))
            out.fill_(float("nan"))
            for result in (scan(a, b, out=out), scan(a, b)):
                expected = _checks.expected(a_host, b_host, None, -1, False)
                _checks.assert_close(result.cpu().numpy(), expected, _checks.running_scale(a_host, b_host, None, -1, False))
