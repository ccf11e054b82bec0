"""Helpers for the GPU tests: input regimes, sizes derived from the tuning table, and one
`scan_and_check` that poisons the output, runs rtscan.scan and compares with the float64 answer.

Importable without torch or a GPU (the GPU tests are collected everywhere and skip in conftest)."""

from __future__ import annotations

import math

import numpy as np

import rtscan
from rtscan import registry

import _checks

try:
    import torch
except ImportError:  # the tests that need it are skipped by conftest.py
    torch = None

# Sizes from the kernel's launch shapes (tile = block_threads * items steps; one warp owns
# 32 * items consecutive steps of a tile, in chunks of 32 * vec). SHAPE is the largest shape (the
# large one where the tuning has it), which 16-byte aligned sequences of at least 15/16 of TILE
# steps take under conftest.py's fixture (registry.fills_a_tile); shorter ones, and every strided
# or misaligned one, take the short shape (SHORT_TILE), but for batches of two rows or more of at most
# 4096 steps on the 16-byte path, which take the small_ and rows_ kinds' tiles (registry.ROWS_KINDS).
SHAPE = registry.resolve("auto").launch_shape("sm_90", "float32", 4, 2**40)
TILE = SHAPE.tile
WARP_SPAN = 32 * SHAPE.items
CHUNK = 32 * SHAPE.vec
SHORT_TILE = registry.resolve("auto").launch_shape("sm_90", "float32", 4, 1).tile


def lookback_group_tiles(shape) -> int:
    """Tiles past which a carry takes more than one read of the look-back: a segment of the
    two-level look-back, the window of the one-level walk (walk lanes x depth), at least 1."""
    if shape.segment_tiles > 1:
        return shape.segment_tiles
    return max(1, shape.walk_lanes * shape.lookback_depth)


NAN = float("nan")
# For tests whose right answer holds NaN: unwritten elements must still be told apart.
FINITE_POISON = 3.0e38


def regime(rng, name: str, shape) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) as float32 NumPy arrays, never zeros, drawn fresh."""
    uniform = lambda low, high: rng.uniform(low, high, shape).astype(np.float32)  # noqa: E731
    if name == "mixed":  # |a| < 1, both signs
        return uniform(-1, 1), uniform(-1, 1)
    if name == "decay":
        return uniform(0.5, 1.0), uniform(-1, 1)
    if name == "cumsum":  # a = 1: a plain running sum of small positive steps
        return np.ones(shape, np.float32), uniform(0, 1e-3)
    if name == "negative":
        return uniform(-1.0, -0.5), uniform(-1, 1)
    if name == "resets":  # about 2% of steps forget the past entirely
        a = uniform(-1, 1)
        a[rng.random(shape) < 0.02] = 0.0
        return a, uniform(-1, 1)
    if name == "growth":  # |a| > 1: only for short sequences (values grow like 1.2^L)
        return uniform(1.0, 1.2) * rng.choice(np.array([-1, 1], np.float32), shape), uniform(-1, 1)
    if name == "tiny":
        return uniform(-1, 1), uniform(-1, 1) * np.float32(1e-30)
    if name == "huge":
        return uniform(-1, 1), uniform(-1, 1) * np.float32(1e30)
    if name == "tiny_a":  # products of a underflow to 0 at once: h is almost b
        return uniform(-1, 1) * np.float32(1e-20), uniform(-1, 1)
    raise ValueError(name)


REGIMES = ["mixed", "decay", "cumsum", "negative", "resets", "growth", "tiny", "huge", "tiny_a"]
GROWTH_MAX_LENGTH = 100


def cuda(array: np.ndarray):
    return torch.from_numpy(np.array(array, order="C")).cuda()  # ascontiguousarray would make 0-d 1-d


def host(tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def poisoned_like(tensor, poison=NAN):
    return torch.full_like(tensor, poison)


def guarded_out(n: int, offset: int, poison=NAN, guard=777.0):
    """A 1-D out of n elements at `offset` elements into a buffer whose other elements hold `guard`:
    (out, check) where check() asserts that nothing outside out was written."""
    buffer = torch.full((offset + n + 64,), guard, device="cuda")
    out = buffer[offset:offset + n]
    out.fill_(poison)

    def check():
        outside = torch.cat([buffer[:offset], buffer[offset + n:]])
        assert bool((outside == guard).all()), "rtscan wrote outside out"

    return out, check


def scan_and_check(a, b, *, h0=None, dim=-1, reverse=False, out=None, poison=NAN, what="", **kwargs):
    """Run rtscan.scan on torch CUDA tensors (out poisoned unless given) and check every element
    against the float64 reference; the inputs must come back unchanged. Returns out."""
    a_host, b_host = host(a), host(b)
    h0_host = None if h0 is None else host(h0)
    if out is None:
        out = poisoned_like(a, poison)
    result = rtscan.scan(a, b, h0=h0, dim=dim, reverse=reverse, out=out, **kwargs)
    assert result is out
    torch.cuda.synchronize()
    ref = _checks.expected(a_host, b_host, h0_host, dim, reverse)
    scale = _checks.running_scale(a_host, b_host, h0_host, dim, reverse)
    _checks.assert_close(host(out), ref, scale, what)
    assert np.array_equal(host(a), a_host, equal_nan=True), "a was modified"
    assert np.array_equal(host(b), b_host, equal_nan=True), "b was modified"
    return out


def length_id(length: int) -> str:
    for name, size in (("TILE", TILE), ("SHORT", SHORT_TILE), ("WARP", WARP_SPAN)):
        k, d = divmod(length, size)
        if k and d in (0, 1):
            return f"{k}x{name}+{d}" if d else f"{k}x{name}"
        if d == size - 1:
            return f"{k + 1}x{name}-1"
    if length >= 2**20:
        exponent = int(math.log2(length))
        return f"2^{exponent}" + (f"+{length - 2**exponent}" if length != 2**exponent else "")
    return str(length)


def without_kinds(monkeypatch, variant, arch: str, kinds: tuple[str, ...]) -> dict:
    """Takes the shapes `kinds` ("many", "batch", ...) out of the tuning entry `variant` uses on `arch`
    for the rest of the test, leaving its other shapes as they are; returns the entry as it was."""
    from rtscan import tuning

    entry = tuning.lookup(variant.table, arch, "float32")
    key = next(k for k, e in variant.table.items() if e is entry)
    monkeypatch.setitem(variant.table, key, {kind: shape for kind, shape in entry.items() if kind not in kinds})
    return entry
