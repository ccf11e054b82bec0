"""The definition of the right answer: the recurrence run step by step in float64 on the CPU."""

from __future__ import annotations

import numpy as np


def scan(a, b, *, h0=None, dim: int = -1, reverse: bool = False) -> np.ndarray:
    """h[t] = a[t] * h[t-1] + b[t] along `dim`, sequentially, in float64 (NumPy in, NumPy out).

    With reverse=True: h[t] = a[t] * h[t+1] + b[t]. h0 has the shape of a without `dim`.
    The loop runs over time and is vectorised over the independent sequences.
    """
    a = np.moveaxis(np.asarray(a, dtype=np.float64), dim, -1)
    b = np.moveaxis(np.asarray(b, dtype=np.float64), dim, -1)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    state = np.zeros(a.shape[:-1]) if h0 is None else np.array(h0, dtype=np.float64)
    out = np.empty_like(a)
    steps = range(a.shape[-1] - 1, -1, -1) if reverse else range(a.shape[-1])
    with np.errstate(all="ignore"):  # NaN and Inf propagate exactly as IEEE arithmetic says
        for t in steps:
            state = a[..., t] * state + b[..., t]
            out[..., t] = state
    return np.moveaxis(out, -1, dim)
