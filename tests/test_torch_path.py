"""rtscan/_torch_path.py, the common torch call in few steps: it takes the calls it should, gives
bitwise the general path's result on every layout it takes, hands every other call (and every
refusal) to the general path, sees a replaced tuning entry and compile defines, and launches right
whichever context is current (on a GPU).
On the CPU, with a stand-in for torch.Tensor: what it leaves to the general path (its overlap test
is the general path's, _scan.Addresses.out_overlaps, tested in test_validation.py)."""

from __future__ import annotations

import numpy as np
import pytest

import rtscan
from rtscan import _driver, _kernels, _scan, _torch_path
from _gpu import SHORT_TILE, TILE, cuda, host, poisoned_like, regime, scan_and_check, torch


@pytest.fixture
def general_refused(monkeypatch):
    """Fail any call that reaches the general path."""
    def refuse(*arguments):
        raise AssertionError("the call went the general path")

    monkeypatch.setattr(_scan, "scan", refuse)


@pytest.fixture
def launches(monkeypatch):
    """The kernels launched (each launch's function), the launches still made: the general path's
    through _driver.launch, the torch path's through cuLaunchKernel itself."""
    launched, launch, launch_kernel = [], _driver.launch, _driver.driver().cuLaunchKernel
    monkeypatch.setattr(_driver, "launch", lambda function, *rest: launched.append(function) or launch(function, *rest))
    monkeypatch.setattr(_torch_path, "_launch_kernel",
                        lambda function, *rest: launched.append(function) or launch_kernel(function, *rest))
    return launched


def pair(rng, shape):
    a, b = regime(rng, "mixed", shape)
    return cuda(a), cuda(b)


@pytest.mark.gpu
def test_the_common_call_takes_it_and_is_right(rng, general_refused):
    a, b = pair(rng, (3, 2 * TILE + 7))
    scan_and_check(a, b)                        # learns the layout
    scan_and_check(a, b)                        # a call of a known layout
    result = rtscan.scan(a, b)                  # a new result
    torch.cuda.synchronize()
    np.testing.assert_array_equal(host(result), host(scan_and_check(a, b)))


def layouts(rng):
    """(name, a, b, make_out, dim, reverse): the layouts a torch user makes; make_out() gives a
    poisoned out, each time in the same place past a 16-byte boundary, or None for a new result."""
    a, b = pair(rng, (4, 3 * SHORT_TILE + 5))
    long_a, long_b = pair(rng, (2 * TILE + 3,))
    time_major_a, time_major_b = pair(rng, (700, 24))
    yield "1-D", long_a, long_b, None, -1, False
    yield "1-D, out=", long_a, long_b, lambda: poisoned_like(long_a), -1, False
    yield "rows", a, b, None, -1, False
    yield "rows reversed, out=", a, b, lambda: poisoned_like(a), -1, True
    yield "time-major", time_major_a, time_major_b, None, 0, False
    # Not dense: a new result is contiguous (empty_like's rule), not a's strides; the path keys it by a's alone.
    yield "every other step, new result", a[:, ::2], b[:, ::2], None, -1, False
    yield "transposed rows", time_major_a.T, time_major_b.T, None, 1, False
    yield "one past a boundary, out too", long_a[1:], long_b[1:], lambda: poisoned_like(long_a)[1:], -1, False
    yield "one past a boundary, new result", long_a[1:], long_b[1:], None, -1, False
    yield "16 steps", long_a[:16], long_b[:16], None, -1, False


@pytest.mark.gpu
def test_bitwise_the_general_paths_result(rng, launches):
    for name, a, b, make_out, dim, reverse in layouts(rng):
        expected = _scan.scan(a, b, None, dim, reverse, make_out and make_out(), "auto", None)
        general_launches = len(launches)
        for _ in range(2):  # learn, then a known layout
            result = rtscan.scan(a, b, dim=dim, reverse=reverse, out=make_out and make_out())
            torch.cuda.synchronize()
            assert torch.equal(result, expected), name
        assert len(launches) == general_launches + 2, name


@pytest.mark.gpu
def test_a_layout_is_known_by_its_place_in_the_line(rng, general_refused):
    """A row of two short tiles less 10 steps, 4 and then 28 elements past a line (the same place
    modulo 16 bytes): its head is 4, then 28, which needs a third tile (P196), so the second call must
    not reuse the first's prepared launch."""
    length = 2 * SHORT_TILE - 10
    a_all, b_all = pair(rng, (length + 64,))
    out_all = poisoned_like(a_all)
    for offset in (4, 28, 4):
        out_all.fill_(float("nan"))
        a, b, out = (x[offset:offset + length] for x in (a_all, b_all, out_all))
        scan_and_check(a, b, out=out, what=f"{length} steps {offset} past a line")


@pytest.mark.gpu
def test_in_place_is_taken_and_right(rng, general_refused):
    a_np, b_np = regime(rng, "mixed", (5, SHORT_TILE + 9))
    expected = host(rtscan.scan(cuda(a_np), cuda(b_np)))
    for target in ("a", "b", "a", "b"):
        a, b = cuda(a_np), cuda(b_np)
        out = a if target == "a" else b
        assert rtscan.scan(a, b, out=out) is out
        torch.cuda.synchronize()
        np.testing.assert_array_equal(host(out), expected, err_msg=f"out={target}")


def refusals(rng):
    """(name, call) for calls with bad arguments; `call` runs the scan with the given entry point."""
    a, b = pair(rng, (4, 3000))
    out = poisoned_like(a)
    flat = torch.full((2 * a.numel() + 64,), float("nan"), device="cuda")
    overlapping = flat[4:4 + a.numel()].view(a.shape)  # as far past a 16-byte boundary as a
    yield "out overlaps a", lambda scan: scan(flat[:a.numel()].view(a.shape), b, out=overlapping)
    yield "out shape", lambda scan: scan(a, b, out=out[:, 1:])
    yield "out dtype", lambda scan: scan(a, b, out=out.double())
    yield "b dtype", lambda scan: scan(a, b.double())
    yield "b strides", lambda scan: scan(a, b.T.contiguous().T)
    yield "b shape", lambda scan: scan(a, b[:2])
    yield "dim", lambda scan: scan(a, b, dim=2)
    yield "dim a bool", lambda scan: scan(a, b, dim=True)
    yield "reverse", lambda scan: scan(a, b, reverse=1)
    yield "b on the host", lambda scan: scan(a, b.cpu())
    yield "a requires grad", lambda scan: scan(a.clone().requires_grad_(), b)
    yield "out overlaps itself", lambda scan: scan(a, b, out=out[:1].expand(a.shape))
    yield "stream", lambda scan: scan(a, b, out=out, stream="s")


def error_of(call, scan) -> tuple[type, str]:
    with pytest.raises((rtscan.RtscanError, TypeError, ValueError)) as raised:
        call(scan)
    return type(raised.value), str(raised.value)


def general(a, b, *, h0=None, dim=-1, reverse=False, out=None, variant="auto", stream=None):
    return _scan.scan(a, b, h0, dim, reverse, out, variant, stream)


@pytest.mark.gpu
def test_refusals_are_the_general_paths(rng, launches):
    """Each bad call raises what the general path raises for it, with nothing launched, both before
    and after its layout's good twin was learned (out overlapping a is checked per call)."""
    a, b = pair(rng, (4, 3000))
    flat = torch.empty(2 * a.numel() + 64, device="cuda")
    rtscan.scan(flat[:a.numel()].view(a.shape), b, out=flat[a.numel():2 * a.numel()].view(a.shape))
    launched = len(launches)
    for name, call in refusals(rng):
        assert error_of(call, rtscan.scan) == error_of(call, general), name
    assert len(launches) == launched


@pytest.mark.gpu
def test_a_call_it_does_not_take_launches_nothing(rng, launches):
    a, b = pair(rng, (2, 300))
    parameter = torch.nn.Parameter(a.clone(), requires_grad=False)
    for name, arguments in {"a subclass": (parameter, b, None, -1, False, None),
                            "float64": (a.double(), b.double(), None, -1, False, None),
                            "host tensors": (a.cpu(), b.cpu(), None, -1, False, None),
                            "numpy": (host(a), host(b), None, -1, False, None),
                            "no element": (a[:, :0], b[:, :0], None, -1, False, None),
                            "dim a numpy integer": (a, b, None, np.int64(1), False, None)}.items():
        assert _torch_path.scan(*arguments) is None, name
    assert launches == []


@pytest.mark.gpu
def test_right_whichever_context_is_current(rng, general_refused, launches):
    """The path launches without asking which context is current: with another context of the
    device current the launch fails, starts nothing, and is made again in the device's primary
    context, which it leaves current. With none current, torch's own calls before the launch (the
    new result's allocation) may make the primary context current first, as the CUDA runtime does
    where none is; either way the result is right and the primary context current after."""
    drv = _driver.driver()
    a, b = pair(rng, (3, 2000))
    expected = host(scan_and_check(a, b))
    rtscan.scan(a, b)  # learns the layout of a new result
    primary = _driver.call("cuCtxGetCurrent", drv.cuCtxGetCurrent())
    other = _driver.call("cuCtxCreate", drv.cuCtxCreate(None, 0, 0))  # now current
    try:
        for name, current, launches_made in (("another context", other, (2,)), ("no context", None, (1, 2))):
            _driver.call("cuCtxSetCurrent", drv.cuCtxSetCurrent(current))
            made = len(launches)
            result = rtscan.scan(a, b)
            assert int(_driver.call("cuCtxGetCurrent", drv.cuCtxGetCurrent())) == int(primary), name
            assert len(launches) - made in launches_made, name  # 2: the failed launch, the one made again
            torch.cuda.synchronize()
            np.testing.assert_array_equal(host(result), expected, err_msg=name)
    finally:
        _driver.call("cuCtxDestroy", drv.cuCtxDestroy(other))
        _driver.call("cuCtxSetCurrent", drv.cuCtxSetCurrent(primary))


@pytest.mark.gpu
def test_a_failed_launch_raises_the_drivers_error(rng, general_refused, monkeypatch):
    """A launch failing for any reason but the current context raises DriverError naming
    cuLaunchKernel and the driver's code, and is not made again."""
    a, b = pair(rng, (3, 2000))
    scan_and_check(a, b)  # learns the layout of an out given
    drv = _driver.driver()
    attempts = []
    monkeypatch.setattr(_torch_path, "_launch_kernel",
                        lambda *arguments: attempts.append(arguments) or (drv.CUresult.CUDA_ERROR_INVALID_VALUE,))
    with pytest.raises(rtscan.DriverError, match="^cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE") as raised:
        rtscan.scan(a, b, out=poisoned_like(a))
    assert raised.value.code == int(drv.CUresult.CUDA_ERROR_INVALID_VALUE)
    assert len(attempts) == 1


@pytest.mark.gpu
def test_a_replaced_tuning_entry_is_seen(rng, monkeypatch):
    monkeypatch.setattr(_torch_path, "_layouts", {})
    a, b = pair(rng, (3, 2000))
    rtscan.scan(a, b, out=poisoned_like(a))  # the layout scan_and_check's call takes (an out given)
    (layout,) = [layout for key, layout in _torch_path._layouts.items() if key[0] == a.shape]
    table = layout.prepared.variant.table
    key = next(key for key, entry in table.items() if entry is layout.prepared.entry)
    monkeypatch.setitem(table, key, dict(layout.prepared.entry))  # equal, but another object
    scan_and_check(a, b)
    (relearned,) = [layout for key, layout in _torch_path._layouts.items() if key[0] == a.shape]
    assert relearned.prepared.entry is table[key]


@pytest.mark.gpu
def test_compile_defines_are_seen(rng, launches, monkeypatch):
    monkeypatch.setattr(_torch_path, "_layouts", {})
    a, b = pair(rng, (2, 1000))
    rtscan.scan(a, b, out=poisoned_like(a))  # the layout scan_and_check's call takes (an out given)
    defines = (("RTSCAN_PERTURB_SEED", "3"),)
    with _kernels.compiled_with(defines):
        scan_and_check(a, b)
        (layout,) = [layout for key, layout in _torch_path._layouts.items() if key[0] == a.shape]
        assert layout.defines == defines
        assert launches[-1] is _kernels.function(0, layout.prepared.variant, layout.prepared.shape)
    assert launches[-1] is not launches[0]


# ---- on the CPU: a stand-in for torch.Tensor ----------------------------------------------------

class StandIn:
    """What the path reads of a tensor, as plain values."""

    def __init__(self, pointer, shape=(64,), strides=(1,), device=0, dtype="float32", requires_grad=False,
                 is_cuda=True):
        self.shape, self._strides, self._device, self._pointer = shape, strides, device, pointer
        self.dtype, self.requires_grad, self.is_cuda = dtype, requires_grad, is_cuda

    def stride(self):
        return self._strides

    def get_device(self):
        return self._device

    def data_ptr(self):
        return self._pointer


class Reached(Exception):
    """The call passed every check the path makes before preparing a layout."""


@pytest.fixture
def stand_in_torch(monkeypatch):
    """StandIn as the path's tensor type; reaching a layout's preparation or a launch raises Reached."""
    def reached(*arguments):
        raise Reached

    monkeypatch.setattr(_torch_path, "_tensor_type", StandIn)
    monkeypatch.setattr(_torch_path, "_float32", "float32")
    monkeypatch.setattr(_torch_path, "_empty_like", lambda a: StandIn(1 << 30, a.shape, a.stride()))
    monkeypatch.setattr(_torch_path, "_layouts", {})
    monkeypatch.setattr(_torch_path, "_learn", reached)
    monkeypatch.setattr(_driver, "launch", reached)


def test_what_it_leaves_to_the_general_path(stand_in_torch):
    """Each call differs from one the path takes in one thing, and gets None before anything is
    prepared or launched."""
    a, b, out = StandIn(1 << 20), StandIn(1 << 21), StandIn(1 << 22)
    for taken in ((a, b, out, -1, False, None), (a, b, None, -1, False, None)):
        with pytest.raises(Reached):
            _torch_path.scan(*taken)
    changed = {
        "a requires grad": (StandIn(1 << 20, requires_grad=True), b, out),
        "b requires grad": (a, StandIn(1 << 21, requires_grad=True), out),
        "out requires grad": (a, b, StandIn(1 << 22, requires_grad=True)),
        "a float64": (StandIn(1 << 20, dtype="float64"), b, out),
        "b float64": (a, StandIn(1 << 21, dtype="float64"), out),
        "out float64": (a, b, StandIn(1 << 22, dtype="float64")),
        "a not CUDA": (StandIn(1 << 20, is_cuda=False), b, out),
        "b not CUDA": (a, StandIn(1 << 21, is_cuda=False), out),
        "out not CUDA": (a, b, StandIn(1 << 22, is_cuda=False)),
        "b's shape": (a, StandIn(1 << 21, shape=(63,)), out),
        "b's strides": (a, StandIn(1 << 21, strides=(2,)), out),
        "b's device": (a, StandIn(1 << 21, device=1), out),
        "out's shape": (a, b, StandIn(1 << 22, shape=(65,))),
        "out's device": (a, b, StandIn(1 << 22, device=1)),
        "b another type": (a, np.zeros(64, np.float32), out),
        "out another type": (a, b, np.zeros(64, np.float32)),
        "a new result for a off a 16-byte boundary": (StandIn((1 << 20) + 4), b, None),
        "a new result for b off a 16-byte boundary": (a, StandIn((1 << 21) + 8), None),
        "a new result for a on 16 bytes, off a line": (StandIn((1 << 20) + 64), b, None),
        "a new result for b on 16 bytes, off a line": (a, StandIn((1 << 21) + 16), None),
    }
    for name, (a_, b_, out_) in changed.items():
        assert _torch_path.scan(a_, b_, out_, -1, False, None) is None, name
    assert _torch_path.scan(a, b, out, np.int64(-1), False, None) is None  # dim not an int
    assert _torch_path.scan(a, b, out, -1, 1, None) is None  # reverse not a bool
