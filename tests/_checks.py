"""Helpers shared by the test files: the expected answer for long inputs, and the float32 checks.

`expected(a, b, h0, dim, reverse)` is `rtscan.reference.scan` for short sequences and for any
input with NaN or Inf. For long, finite ones it is the same float64 recurrence evaluated in two
levels with `rtscan.reference.scan` itself (blocks of steps, then the blocks' end states), because
the reference's Python loop over 2^24 steps takes about a minute. In float64 the two evaluations
agree to ~1e-15 relative to the running scale (test_reference.py checks it), far inside the float32
tolerance used here.
"""

from __future__ import annotations

import numpy as np

from rtscan import reference

DIRECT_MAX_LENGTH = 16384
BLOCK = 4096

# float32 checks (see `assert_close`): per element |out - ref| <= ELEMENT_RTOL * (|ref| + scale),
# and over the whole array ||out - ref|| / ||ref|| < NORM_RTOL.
ELEMENT_RTOL = 1e-4
NORM_RTOL = 1e-5


def _two_level(a: np.ndarray, b: np.ndarray, h0: np.ndarray | None) -> np.ndarray:
    """Time is the last axis; float64 in and out."""
    length = a.shape[-1]
    blocks = -(-length // BLOCK)
    pad = blocks * BLOCK - length
    if pad:  # padding steps are the identity map and change nothing before them
        a = np.concatenate([a, np.ones(a.shape[:-1] + (pad,))], axis=-1)
        b = np.concatenate([b, np.zeros(b.shape[:-1] + (pad,))], axis=-1)
    a = a.reshape(a.shape[:-1] + (blocks, BLOCK))
    b = b.reshape(b.shape[:-1] + (blocks, BLOCK))
    # Time first and contiguous, so each step of the reference's loop reads one contiguous row.
    local = np.moveaxis(reference.scan(np.ascontiguousarray(np.moveaxis(a, -1, 0)),
                                       np.ascontiguousarray(np.moveaxis(b, -1, 0)), dim=0), 0, -1)
    products = np.cumprod(a, axis=-1)
    ends = reference.scan(products[..., -1], local[..., -1], h0=h0, dim=-1)
    start = np.zeros(ends.shape) if h0 is None else np.broadcast_to(np.asarray(h0, np.float64)[..., None],
                                                                    ends.shape).copy()
    carry_in = np.concatenate([start[..., :1], ends[..., :-1]], axis=-1)
    out = local + products * carry_in[..., None]
    return out.reshape(out.shape[:-2] + (blocks * BLOCK,))[..., :length]


def expected(a, b, h0=None, dim=-1, reverse=False) -> np.ndarray:
    """The float64 answer for float32 (or any) inputs, NumPy arrays."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    h0 = None if h0 is None else np.asarray(h0, dtype=np.float64)
    length = a.shape[dim] if a.ndim else 0
    finite = np.isfinite(a).all() and np.isfinite(b).all() and (h0 is None or np.isfinite(h0).all())
    if length <= DIRECT_MAX_LENGTH or not finite:
        return reference.scan(a, b, h0=h0, dim=dim, reverse=reverse)
    a_last, b_last = np.moveaxis(a, dim, -1), np.moveaxis(b, dim, -1)
    if reverse:
        a_last, b_last = a_last[..., ::-1], b_last[..., ::-1]
    out = _two_level(a_last, b_last, h0)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, dim)


def running_scale(a, b, h0=None, dim=-1, reverse=False) -> np.ndarray:
    """The recurrence on |a|, |b|, |h0|: the size of what was summed into each output, which bounds
    the rounding error of any evaluation order (float32 error <~ steps * eps * scale)."""
    a, b = np.abs(np.asarray(a, np.float64)), np.abs(np.asarray(b, np.float64))
    h0 = None if h0 is None else np.abs(np.asarray(h0, np.float64))
    return expected(a, b, h0, dim, reverse)


def assert_close(out, ref, scale, what: str = "") -> None:
    """out (float32, NumPy) against the float64 ref: NaN positions equal, the same infinities, every
    finite element within ELEMENT_RTOL of |ref| + scale, and the relative norm of the error small."""
    out = np.asarray(out)
    assert out.shape == ref.shape, f"{what}: shape {out.shape}, expected {ref.shape}"
    out64 = out.astype(np.float64)
    nan_out, nan_ref = np.isnan(out64), np.isnan(ref)
    if not np.array_equal(nan_out, nan_ref):
        bad = np.argwhere(nan_out != nan_ref)
        raise AssertionError(f"{what}: NaN at {bad.shape[0]} wrong positions, first {bad[:5].tolist()} "
                             f"(out {out64[tuple(bad[0])]}, ref {ref[tuple(bad[0])]})")
    inf_ref = np.isinf(ref)
    if not np.array_equal(np.isinf(out64), inf_ref) or not np.array_equal(out64[inf_ref], ref[inf_ref]):
        bad = np.argwhere((np.isinf(out64) != inf_ref) | (inf_ref & (out64 != ref)))
        raise AssertionError(f"{what}: infinities differ at {bad.shape[0]} positions, first {bad[:5].tolist()}")
    finite = np.isfinite(ref)
    with np.errstate(invalid="ignore"):
        error = np.abs(out64 - ref)
        allowed = ELEMENT_RTOL * (np.abs(ref) + scale)
    bad = finite & ~(error <= allowed)
    if bad.any():
        first = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} elements off, first at {list(map(int, first))}: "
                             f"out {out64[first]!r}, ref {ref[first]!r}, scale {scale[first]!r}")
    ref_norm = np.linalg.norm(ref[finite])
    if ref_norm > 0:
        relative = np.linalg.norm(error[finite]) / ref_norm
        assert relative < NORM_RTOL, f"{what}: ||out - ref|| / ||ref|| = {relative:.3g}"
    else:
        assert not error[finite].any(), f"{what}: the answer is 0 but out is not"
