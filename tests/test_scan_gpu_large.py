"""Sizes above 2^31 elements (about 8.6 GB per array): 64-bit indexing of steps, sequences and
strides. The float64 reference of 2^31 steps is out of reach, so:

- every element is checked for having been written (poisoned with NaN, inputs finite), and for
  one-step consistency out[t] ~ a[t] * out[t-1] + b[t] against the running scale, computed on the
  GPU in float64 chunks (the scale itself by rtscan from |a|, |b|, all positive, checked the same
  way relative to itself);
- windows of a few thousand steps around 2^30 (byte offsets past 2^32), 2^31 (element indices past
  int32) and the end are compared with the float64 reference started from the GPU's out[p-1].
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import rtscan
import _checks
from _gpu import TILE, host, torch

pytestmark = [pytest.mark.gpu, pytest.mark.large]

WINDOW = 3000
CHUNK_ELEMENTS = 2**27


def generator():
    seed = int.from_bytes(os.urandom(8), "little") >> 1
    print(f"torch seed {seed}")
    return torch.Generator(device="cuda").manual_seed(seed)


def free_memory():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def check_steps(a, b, out, scale, reverse=False):
    """Every step of a 1-D scan against its neighbour, in float64 on the GPU, chunk by chunk."""
    n = out.shape[0]
    for start in range(0, n - 1, CHUNK_ELEMENTS):
        stop = min(start + CHUNK_ELEMENTS, n - 1)
        if reverse:  # h[t] = a[t] * h[t+1] + b[t]
            t, previous = slice(start, stop), slice(start + 1, stop + 1)
        else:
            t, previous = slice(start + 1, stop + 1), slice(start, stop)
        h, h_prev = out[t].double(), out[previous].double()
        residual = (h - (a[t].double() * h_prev + b[t].double())).abs()
        allowed = 1e-4 * (scale[t].double() + h.abs())
        bad = ~(residual <= allowed)  # NaN anywhere counts as bad
        if bool(bad.any()):
            first = int(bad.nonzero()[0, 0]) + t.start
            raise AssertionError(f"step {first}: out {float(out[first])}, neighbour-consistent value "
                                 f"off by {float(residual[first - t.start])} (scale {float(scale[first])})")


def check_window(a, b, out, start, stop, reverse=False):
    """out[start:stop] against the float64 reference started from the GPU's own state next to it."""
    a_w, b_w = host(a[start:stop]), host(b[start:stop])
    if reverse:
        h0 = None if stop == out.shape[0] else np.float64(host(out[stop]))
    else:
        h0 = None if start == 0 else np.float64(host(out[start - 1]))
    ref = _checks.expected(a_w, b_w, h0, reverse=reverse)
    scale = _checks.running_scale(a_w, b_w, None if h0 is None else np.abs(h0), reverse=reverse)
    _checks.assert_close(host(out[start:stop]), ref, scale, f"window [{start}, {stop})")


@pytest.mark.parametrize("reverse", [False, True])
def test_one_sequence_above_2_31(reverse):
    n = 2**31 + TILE + 1
    g = generator()
    a = torch.empty(n, device="cuda").uniform_(-1, 1, generator=g)
    b = torch.empty(n, device="cuda").uniform_(-1, 1, generator=g)
    out = torch.full((n,), float("nan"), device="cuda")
    assert rtscan.scan(a, b, out=out, reverse=reverse) is out
    scale = rtscan.scan(a.abs(), b.abs(), reverse=reverse)
    torch.cuda.synchronize()
    assert not bool(torch.isnan(out).any()), "unwritten (or NaN) elements"
    check_steps(a.abs(), b.abs(), scale, scale, reverse)
    check_steps(a, b, out, scale, reverse)
    for centre in (0, 2**30, 2**31, n):
        check_window(a, b, out, max(centre - WINDOW, 0), min(centre + WINDOW, n), reverse)
    del a, b, out, scale
    free_memory()


def test_many_sequences_above_2_31():
    length = TILE + 3  # two tiles per sequence, and rows not 16-byte aligned: the scalar path
    sequences = 2**31 // length + 17
    g = generator()
    a = torch.empty(sequences, length, device="cuda").uniform_(-1, 1, generator=g)
    b = torch.empty(sequences, length, device="cuda").uniform_(-1, 1, generator=g)
    h0 = torch.empty(sequences, device="cuda").uniform_(-1, 1, generator=g)
    out = torch.full((sequences, length), float("nan"), device="cuda")
    rtscan.scan(a, b, h0=h0, out=out)
    torch.cuda.synchronize()
    assert a.numel() > 2**31 and not bool(torch.isnan(out).any()), "unwritten (or NaN) elements"
    boundary = 2**31 // length  # the row in which element offsets pass 2^31
    rows = [0, 1, boundary - 2, boundary - 1, boundary, boundary + 1, boundary + 2, sequences - 2, sequences - 1]
    a_rows, b_rows, h0_rows = host(a[rows]), host(b[rows]), host(h0[rows])
    ref = _checks.expected(a_rows, b_rows, h0_rows)
    _checks.assert_close(host(out[rows]), ref, _checks.running_scale(a_rows, b_rows, h0_rows), f"rows {rows}")
    del a, b, h0, out
    free_memory()


def test_time_stride_above_2_31():
    # 5 sequences whose steps lie 2^29 + 1 elements apart: step 4 is 2^31 + 4 elements in
    g = generator()
    stride_base = 2**29 + 1
    a_base = torch.empty(5, stride_base, device="cuda").uniform_(-1, 1, generator=g)
    b_base = torch.empty(5, stride_base, device="cuda").uniform_(-1, 1, generator=g)
    a, b = a_base[:, :: 2**27], b_base[:, :: 2**27]
    assert a.stride(0) == stride_base and a.shape == (5, 5)
    for reverse in (False, True):
        out = torch.full((5, 5), float("nan"), device="cuda")
        rtscan.scan(a, b, dim=0, reverse=reverse, out=out)
        torch.cuda.synchronize()
        a_np, b_np = host(a), host(b)
        _checks.assert_close(host(out), _checks.expected(a_np, b_np, dim=0, reverse=reverse),
                             _checks.running_scale(a_np, b_np, dim=0, reverse=reverse), f"reverse={reverse}")
    del a_base, b_base, a, b
    free_memory()
