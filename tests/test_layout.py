"""rtscan._layout: shapes and strides to the kernels' SeqLayout (merging batch axes, dropping size-1
axes, reverse origins, the rank limit), and normalize_dim."""

from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest

from rtscan import InputError, InputTypeError, _compile, _layout


def contiguous_strides(shape):
    return tuple(s // 4 for s in np.empty(shape, np.float32).strides)


def batch_axes(plan):
    layout = plan.layout
    return [(layout.batch_size[i], layout.in_batch_stride[i], layout.out_batch_stride[i])
            for i in range(layout.batch_rank)]


def sequence_starts(plan):
    """Element offsets (in, out) of step 0 of every sequence, the way seq_layout.cuh walks them."""
    layout, starts = plan.layout, []
    for seq in range(plan.num_seqs):
        rest, in_offset, out_offset = seq, layout.in_origin, layout.out_origin
        for axis in range(layout.batch_rank - 1, -1, -1):
            index = rest % layout.batch_size[axis]
            rest //= layout.batch_size[axis]
            in_offset += index * layout.in_batch_stride[axis]
            out_offset += index * layout.out_batch_stride[axis]
        starts.append((in_offset, out_offset))
    return starts


def element_offsets_by_plan(plan):
    """offset of (sequence, step) for input and output, from the plan alone."""
    layout = plan.layout
    return [[(i + t * layout.in_time_stride, o + t * layout.out_time_stride) for t in range(plan.length)]
            for i, o in sequence_starts(plan)]


def element_offsets_by_numpy(shape, in_strides, out_strides, dim, reverse):
    """The same, from first principles: sequences in C order of the other axes, h0's order."""
    result = []
    batch_shape = shape[:dim] + shape[dim + 1:]
    for batch_index in np.ndindex(batch_shape):
        steps = range(shape[dim] - 1, -1, -1) if reverse else range(shape[dim])
        row = []
        for t in steps:
            index = batch_index[:dim] + (t,) + batch_index[dim:]
            row.append((sum(i * s for i, s in zip(index, in_strides)), sum(i * s for i, s in zip(index, out_strides))))
        result.append(row)
    return result


def test_contiguous_batch_merges_into_one_axis():
    shape = (2, 3, 4)
    plan = _layout.plan(shape, contiguous_strides(shape), contiguous_strides(shape), 2, False)
    assert (plan.length, plan.num_seqs) == (4, 6)
    assert batch_axes(plan) == [(6, 4, 4)]
    assert (plan.layout.in_time_stride, plan.layout.out_time_stride) == (1, 1)
    assert (plan.layout.in_origin, plan.layout.out_origin) == (0, 0)
    assert plan.unit_time_stride


def test_dim0_time_stride_and_merged_batch():
    shape = (5, 3, 4)
    plan = _layout.plan(shape, contiguous_strides(shape), contiguous_strides(shape), 0, False)
    assert (plan.length, plan.num_seqs) == (5, 12)
    assert batch_axes(plan) == [(12, 1, 1)]
    assert plan.layout.in_time_stride == 12 and not plan.unit_time_stride


def test_middle_dim_leaves_two_batch_axes():
    shape = (2, 3, 4)
    plan = _layout.plan(shape, contiguous_strides(shape), contiguous_strides(shape), 1, False)
    assert batch_axes(plan) == [(2, 12, 12), (4, 1, 1)]
    assert plan.layout.in_time_stride == 4


def test_size_one_axes_are_dropped():
    shape = (1, 3, 1, 1, 5, 1)
    strides = contiguous_strides(shape)
    plan = _layout.plan(shape, strides, strides, 4, False)
    assert (plan.length, plan.num_seqs) == (5, 3)
    assert batch_axes(plan) == [(3, 5, 5)]
    # size-1 axes with strange strides (as torch gives after unsqueeze/expand) change nothing
    odd = (999, 5, 7, 0, 1, 12345)
    assert batch_axes(_layout.plan(shape, odd, odd, 4, False)) == [(3, 5, 5)]


def test_single_sequence_has_rank_zero():
    plan = _layout.plan((1, 7), (7, 1), (7, 1), 1, False)
    assert plan.layout.batch_rank == 0 and plan.num_seqs == 1 and plan.length == 7


def test_merge_needs_both_input_and_output_contiguous():
    shape = (2, 3, 4)
    in_strides = contiguous_strides(shape)
    out_strides = (3, 1, 6)  # out stored with dim first: shape (4, 2, 3) transposed back
    plan = _layout.plan(shape, in_strides, out_strides, 2, False)
    assert batch_axes(plan) == [(6, 4, 1)]  # still mergeable: both are dense in (2, 3)
    out_strides = (1, 2, 6)  # out with the batch axes in Fortran order: not mergeable
    plan = _layout.plan(shape, in_strides, out_strides, 2, False)
    assert batch_axes(plan) == [(2, 12, 1), (3, 4, 2)]


def test_sliced_batch_axes():
    # a[:, :3, :] of a contiguous (2, 6, 4): strides (24, 4, 1), the batch axes do not meet
    plan = _layout.plan((2, 3, 4), (24, 4, 1), (12, 4, 1), 2, False)
    assert batch_axes(plan) == [(2, 24, 12), (3, 4, 4)]
    # a[:, ::2, :] of the same: strides (24, 8, 1), evenly spaced, so they merge
    plan = _layout.plan((2, 3, 4), (24, 8, 1), (12, 4, 1), 2, False)
    assert batch_axes(plan) == [(6, 8, 4)]


def test_reverse_starts_at_the_last_step_and_walks_back():
    shape = (3, 10)
    strides = contiguous_strides(shape)
    plan = _layout.plan(shape, strides, strides, 1, True)
    layout = plan.layout
    assert (layout.in_origin, layout.out_origin) == (9, 9)
    assert (layout.in_time_stride, layout.out_time_stride) == (-1, -1)
    assert not plan.unit_time_stride  # 16-byte loads assume forward unit stride
    plan = _layout.plan(shape, strides, strides, 0, True)
    assert (plan.layout.in_origin, plan.layout.in_time_stride) == (2 * 10, -10)


def test_reverse_with_different_out_strides():
    plan = _layout.plan((4, 6), (6, 1), (1, 4), 1, True)
    layout = plan.layout
    assert (layout.in_origin, layout.out_origin) == (5, 20)
    assert (layout.in_time_stride, layout.out_time_stride) == (-1, -4)


LAYOUT_CASES = [
    ((2, 3, 4), (12, 4, 1), (12, 4, 1)),
    ((2, 3, 4), (1, 2, 6), (12, 4, 1)),       # input Fortran order
    ((4, 1, 3, 5), (15, 99, 5, 1), (1, 7, 4, 12)),
    ((2, 3, 2, 5), (60, 20, 10, 2), (30, 10, 5, 1)),  # input sliced with step 2 along the last axis
    ((3, 2, 2, 2, 2), (16, 8, 4, 2, 1), (16, 8, 4, 2, 1)),
]


@pytest.mark.parametrize("shape,in_strides,out_strides", LAYOUT_CASES)
@pytest.mark.parametrize("reverse", [False, True])
def test_every_element_is_addressed_as_numpy_would(shape, in_strides, out_strides, reverse):
    for dim in range(len(shape)):
        plan = _layout.plan(shape, in_strides, out_strides, dim, reverse)
        assert plan.length == shape[dim]
        assert plan.num_seqs * plan.length == int(np.prod(shape))
        assert element_offsets_by_plan(plan) == element_offsets_by_numpy(shape, in_strides, out_strides, dim,
                                                                          reverse), f"dim={dim}"


def test_four_unmergeable_batch_axes_are_accepted():
    shape = (2, 2, 2, 2, 7)
    strides = (1000, 300, 70, 20, 1)
    plan = _layout.plan(shape, strides, strides, 4, False)
    assert plan.layout.batch_rank == 4 and plan.num_seqs == 16


def test_more_than_four_unmergeable_batch_axes_raise():
    shape = (2, 2, 2, 2, 2, 7)
    strides = (3000, 1000, 300, 70, 20, 1)
    with pytest.raises(InputError, match="4") as info:
        _layout.plan(shape, strides, strides, 5, False)
    assert isinstance(info.value, ValueError)
    # the same shape, contiguous, merges and is fine
    plan = _layout.plan(shape, contiguous_strides(shape), contiguous_strides(shape), 5, False)
    assert plan.layout.batch_rank == 1 and plan.num_seqs == 32


@pytest.mark.parametrize("dim,ndim,axis", [(0, 1, 0), (-1, 1, 0), (-1, 3, 2), (-3, 3, 0), (1, 3, 1), (2, 3, 2)])
def test_normalize_dim(dim, ndim, axis):
    assert _layout.normalize_dim(dim, ndim) == axis


@pytest.mark.parametrize("dim,ndim", [(3, 3), (-4, 3), (1, 1), (-2, 1), (100, 2)])
def test_normalize_dim_out_of_range(dim, ndim):
    with pytest.raises(InputError, match=rf"dim={dim}"):
        _layout.normalize_dim(dim, ndim)


@pytest.mark.parametrize("dim", [1.0, "0", None, True, np.float32(0)])
def test_normalize_dim_not_an_int(dim):
    with pytest.raises(InputTypeError, match="dim"):
        _layout.normalize_dim(dim, 2)


def test_normalize_dim_zero_dimensional():
    with pytest.raises(InputError, match="at least one dimension"):
        _layout.normalize_dim(0, 0)


def test_seq_layout_struct_mirrors_the_header():
    """rtscan/_layout.py's ctypes struct and kernels_cu/seq_layout.cuh must agree field for field."""
    text = (_compile.kernels_dir() / "seq_layout.cuh").read_text()
    body = re.search(r"struct SeqLayout \{(.*?)\};", text, re.S).group(1)
    header_fields = re.findall(r"^\s*(long long|int|short) (\w+)(\[MAX_BATCH_RANK\])?;", body, re.M)
    assert [name for _, name, _ in header_fields] == [name for name, _ in _layout.SeqLayout._fields_]
    scalars = {"long long": ctypes.c_longlong, "int": ctypes.c_int, "short": ctypes.c_short}
    for (kind, name, is_array), (_, ctype) in zip(header_fields, _layout.SeqLayout._fields_):
        scalar = scalars[kind]
        expected = scalar * _layout.MAX_BATCH_RANK if is_array else scalar
        assert ctypes.sizeof(ctype) == ctypes.sizeof(expected), name
    assert ctypes.sizeof(_layout.SeqLayout) == 8 * (7 + 3 * _layout.MAX_BATCH_RANK)  # no padding anywhere
    rank = re.search(r"constexpr int MAX_BATCH_RANK = (\d+);", text).group(1)
    assert int(rank) == _layout.MAX_BATCH_RANK


@pytest.mark.parametrize("dim", [np.int64(1), np.int32(-1), np.uint8(1)])
def test_normalize_dim_accepts_numpy_integers(dim):
    assert _layout.normalize_dim(dim, 2) == 1


def test_with_head_names_the_boundary_and_leaves_the_plan_alone():
    """_layout.with_head (P67, P196): the layout's head names the boundary each row is scanned from,
    and its longest_head the longest row head (P233); length, origins and strides stay the caller's,
    and the plan it was given keeps its own layout (prepared plans are shared)."""
    plan = _layout.plan((3, 20000), (20000, 1), (20000, 1), 1, False)
    shifted = _layout.with_head(plan, 32, 28)
    assert (shifted.layout.length, shifted.length, shifted.layout.head, shifted.layout.longest_head) == (
        20000, 20000, 32, 28)
    assert (shifted.layout.in_origin, shifted.layout.out_origin) == (0, 0)
    assert (shifted.layout.in_batch_stride[0], shifted.layout.in_time_stride, shifted.num_seqs) == (20000, 1, 3)
    assert (plan.layout.length, plan.layout.head, plan.layout.in_origin, plan.length) == (20000, 0, 0, 20000)


def test_the_layout_carries_the_longest_row_head_the_host_counted():
    """lookback.cu's packed rows give a row the lanes its span takes, span = length + the longest row
    head, which the kernel reads from its layout (SeqLayout.longest_head, P233) and the host counted the
    blocks' rows from (_scan._row_heads): with_head must carry it, and every row's own head must fit.
    Random batches (sliced, transposed, reversed, broadcast, offset, one to three batch axes), each form
    the host offers; then the launches rtscan prepares, packed rows among them."""
    from rtscan import _scan

    rng = np.random.default_rng(7)
    forms_seen = 0
    for _ in range(3000):
        rank = int(rng.integers(2, 5))
        base = tuple(int(n) for n in rng.integers(1, 9, rank))
        base = base[:-1] + (int(rng.integers(1, 80)),)
        step = tuple(int(s) for s in rng.integers(1, 3, rank - 1)) + (1,)  # a sliced batch, unit time stride
        full = np.empty(tuple(n * s for n, s in zip(base, step)), np.float32)
        view = full[tuple(slice(None, None, s) for s in step)]
        if rng.integers(2) and rank > 2:
            view = view.swapaxes(0, 1)
        if rng.integers(2):  # a batch axis walked backwards: a negative stride, the origin past the start
            view = view[::-1]
        if rng.integers(4) == 0 and rank > 2:  # a broadcast batch axis: stride 0
            view = np.broadcast_to(view[:1], view.shape)
        strides = tuple(s // 4 for s in view.strides)
        plan = _layout.plan(view.shape, strides, strides, rank - 1, False)
        address = 256 * int(rng.integers(1, 1000)) + 4 * int(rng.integers(0, 32))
        placement = _scan.pointer_placement(address, address, address)
        for boundary, longest in _scan._row_heads(plan, placement, True):
            layout = _layout.with_head(plan, boundary, longest).layout
            assert (layout.head, layout.longest_head) == (boundary, longest), (view.shape, strides, address)
            heads = [((address >> 2) + start) % boundary for start, _ in sequence_starts(plan)]
            assert max(heads) <= longest
            forms_seen += 1
    assert forms_seen > 3000
    for rows, steps, offset in ((200000, 50, 0), (200000, 50, 3), (100000, 98, 0), (1000, 5001, 0), (2, 100, 5)):
        prepared = _scan.contiguous_launch("auto", rows, steps, "sm_90", offset)
        assert prepared.plan.layout.longest_head == prepared.longest_head, (rows, steps, offset)
        assert prepared.longest_head > 0, (rows, steps, offset)  # each of these takes a head
