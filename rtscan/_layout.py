"""From shapes and strides to the kernels' SeqLayout (kernels_cu/seq_layout.cuh), field for field.

The scanned axis becomes the time axis; the other axes are the batch, in C order. Batch axes of
size 1 are dropped and neighbours that are contiguous with each other (for the input and the
output alike) are merged, so the kernel sees at most MAX_BATCH_RANK of them.
"""

from __future__ import annotations

import ctypes
import dataclasses
import operator
from dataclasses import dataclass

import numpy as np

from .errors import InputError, InputTypeError

MAX_BATCH_RANK = 4


class SeqLayout(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_longlong),
        ("num_seqs", ctypes.c_longlong),
        ("batch_rank", ctypes.c_int),
        ("head", ctypes.c_short),
        ("longest_head", ctypes.c_short),
        ("batch_size", ctypes.c_longlong * MAX_BATCH_RANK),
        ("in_batch_stride", ctypes.c_longlong * MAX_BATCH_RANK),
        ("out_batch_stride", ctypes.c_longlong * MAX_BATCH_RANK),
        ("in_time_stride", ctypes.c_longlong),
        ("out_time_stride", ctypes.c_longlong),
        ("in_origin", ctypes.c_longlong),
        ("out_origin", ctypes.c_longlong),
    ]


@dataclass(frozen=True)
class Plan:
    """What the dispatcher needs: the struct, and whether 16-byte steps are possible."""

    layout: SeqLayout
    length: int
    num_seqs: int
    unit_time_stride: bool          # time stride +1 in and out (forward, contiguous along dim)


def with_head(plan: Plan, boundary: int, longest: int) -> Plan:
    """The plan whose kernel scans each sequence from the last `boundary` (32 or 4 elements: a
    128-byte line or 16 bytes) at or before its step 0, the steps between being the identity, at
    most `longest` of them in any row (kernels_cu/seq_layout.cuh's head and longest_head); lengths,
    origins and strides stay the caller's."""
    layout = SeqLayout.from_buffer_copy(plan.layout)
    layout.head, layout.longest_head = boundary, longest
    return dataclasses.replace(plan, layout=layout)


def normalize_dim(dim: int, ndim: int) -> int:
    if dim.__class__ is int and -ndim <= dim < ndim:  # the usual call, taken before the checks below
        return dim % ndim
    if isinstance(dim, (bool, np.bool_)):
        raise InputTypeError("dim must be an int, got a bool")
    try:
        dim = operator.index(dim)  # int and the NumPy integer types
    except TypeError:
        raise InputTypeError(f"dim must be an int, got {type(dim).__name__}") from None
    if ndim == 0:
        raise InputError("a and b must have at least one dimension (the one the recurrence runs along)")
    if not -ndim <= dim < ndim:
        raise InputError(f"dim={dim} is out of range for {ndim}-dimensional input")
    return dim % ndim


def plan(shape: tuple[int, ...], in_strides: tuple[int, ...], out_strides: tuple[int, ...], dim: int,
         reverse: bool) -> Plan:
    """Strides in elements; `dim` already normalized."""
    length = shape[dim]
    in_time, out_time = in_strides[dim], out_strides[dim]
    batch = [(shape[i], in_strides[i], out_strides[i]) for i in range(len(shape)) if i != dim and shape[i] != 1]
    merged: list[tuple[int, int, int]] = []
    for size, in_stride, out_stride in batch:
        if merged:
            prev_size, prev_in, prev_out = merged[-1]
            if prev_in == in_stride * size and prev_out == out_stride * size:
                merged[-1] = (prev_size * size, in_stride, out_stride)
                continue
        merged.append((size, in_stride, out_stride))
    if len(merged) > MAX_BATCH_RANK:
        raise InputError(
            f"the batch axes (all but dim) of this layout cannot be merged into {MAX_BATCH_RANK} or fewer "
            f"strided axes (shape {shape}, strides {in_strides}); make the input contiguous first")
    num_seqs = 1
    for size, _, _ in merged:
        num_seqs *= size

    layout = SeqLayout()
    layout.length = length
    layout.num_seqs = num_seqs
    layout.batch_rank = len(merged)
    for axis, (size, in_stride, out_stride) in enumerate(merged):
        layout.batch_size[axis] = size
        layout.in_batch_stride[axis] = in_stride
        layout.out_batch_stride[axis] = out_stride
    if reverse:  # start at the last step and walk memory backwards
        layout.in_origin, layout.out_origin = (length - 1) * in_time, (length - 1) * out_time
        in_time, out_time = -in_time, -out_time
    layout.in_time_stride = in_time
    layout.out_time_stride = out_time
    return Plan(layout, length, num_seqs, in_time == 1 and out_time == 1)
