"""rtscan/_scan.py's dispatch, on the CPU with the driver replaced by a recorder.

- auto runs columns_lookback for time-major batches (8 or more neighbouring sequences side by
  side) and lookback_regs otherwise, and its prepared choice follows a replaced tuning entry.
- A multi-pass variant: its kernels and scratch are settled before the first launch, then one
  launch per pass in order, each in its NVTX range, with the grid of its kind (tiles, sequences
  or columns) and the block of its shape (columns' pass 2 wider for long sequences); a scratch
  that cannot grow (CUDA graph capture) stops the call before anything is launched. A
  single-pass variant: one launch, no scratch.
- The prepared launch of a layout is reused, but never across a replaced tuning entry or another
  alignment; the argument block handed to the driver holds this call's pointers and counts at the
  offsets the kernel reads them from; two threads' multi-pass calls never interleave their passes.
- What is cached per layout (address extents, the prepared launch, the argument block's layout and
  workspace) never answers for another call: new pointers in a layout seen before are checked for
  overlap again, and the argument block follows every change of layout and workspace.
"""

from __future__ import annotations

import ctypes

import pytest

from rtscan import RtscanError, _arrays, _driver, _kernels, _layout, _nvtx, _scan, _workspace, registry


class Recorder:
    def __init__(self):
        self.events, self.capturing = [], False

    def launch(self, function, grid, block, shared_bytes, stream, params_address):
        self.events.append(("launch", function, grid, block, shared_bytes, stream))
        self.params_address = params_address

    def alloc(self, nbytes):
        self.events.append(("alloc", nbytes))
        return 0x100000 * (1 + len(self.events))

    def function(self, device, variant, shape):
        self.events.append(("function", variant.name))
        self.shape = shape
        names = [k.template for k in variant.pass_kernels]
        return tuple(names) if names else variant.template


@pytest.fixture
def recorder(monkeypatch):
    record = Recorder()
    monkeypatch.setattr(_driver, "make_current", lambda device: None)
    monkeypatch.setattr(_driver, "launch", record.launch)
    monkeypatch.setattr(_driver, "alloc", record.alloc)
    monkeypatch.setattr(_driver, "memset_async", lambda *args: None)
    monkeypatch.setattr(_driver, "memset32_async", lambda *args: None)
    monkeypatch.setattr(_driver, "stream_is_capturing", lambda stream: record.capturing)
    monkeypatch.setattr(_kernels, "device_arch", lambda device: "sm_90")
    monkeypatch.setattr(_kernels, "function", record.function)
    monkeypatch.setattr(_nvtx, "push", lambda name: record.events.append(("push", name)))
    monkeypatch.setattr(_nvtx, "pop", lambda: record.events.append(("pop",)))
    monkeypatch.setattr(_workspace, "_workspaces", {})
    monkeypatch.setattr(_workspace, "_scratch", {})
    monkeypatch.setattr(_workspace, "_retired", [])
    monkeypatch.setattr(_scan, "_prepared", {})
    return record


def views(shape, pointer=0x7000000, offset=0, out_offset=None, out_strides=None):
    """a, b and out of `shape`, C-contiguous, `offset` elements past a 128-byte line, each in an
    allocation of its own as the allocators place them, 512-byte aligned (out: `out_offset`, by
    default the same, and `out_strides`, by default a's)."""
    strides, running = [], 1
    for extent in reversed(shape):
        strides.insert(0, running)
        running *= extent
    spacing = -(-4 * (2 * running + 64) // 512) * 512
    offsets = (offset, offset, offset if out_offset is None else out_offset)
    all_strides = (tuple(strides), tuple(strides), tuple(out_strides or strides))
    return [_arrays.ArrayView(None, "torch", pointer + spacing * i + 4 * offsets[i], tuple(shape), all_strides[i],
                              "float32", 0) for i in range(3)]


def launch(name, shape, stream=5, offset=0, out_offset=None):
    va, vb, vout = views(shape, offset=offset, out_offset=out_offset)
    _scan._launch(registry.resolve(name), va, vb, None, vout, len(shape) - 1, False, stream)


@pytest.mark.parametrize("name", ["three_pass", "three_pass_reduce"])
def test_three_launches_in_order_after_kernels_and_scratch(recorder, name):
    variant = registry.resolve(name)
    launch(name, (3, 10000))
    tile = variant.launch_shape("sm_90", "float32", 4, 10000).tile
    tiles = 3 * -(-10000 // tile)
    kinds = [event[0] for event in recorder.events]
    assert kinds == ["function", "alloc"] + ["push", "launch", "pop"] * 3
    launches = [event for event in recorder.events if event[0] == "launch"]
    assert [event[1] for event in launches] == [k.template for k in variant.pass_kernels]
    assert [event[2] for event in launches] == [tiles, 3, tiles]  # pass 2: one block per sequence
    assert all(event[3] == 256 and event[4] == 0 and event[5] == 5 for event in launches)
    ranges = [event[1] for event in recorder.events if event[0] == "push"]
    assert ranges == [k.range_name for k in variant.pass_kernels]
    (alloc,) = [event for event in recorder.events if event[0] == "alloc"]
    pairs = 2 * 4 * tile * tiles if variant.keeps_pairs else 0
    assert alloc[1] >= pairs + 3 * 4 * tiles


def test_columns_launch_a_block_per_group_of_sequences_and_chunk(recorder):
    variant = registry.resolve("columns")
    launch("columns", (100, 1000))
    shape = variant.launch_shape("sm_90", "float32", 4, 1000, 100)
    assert shape.vec == 1 and shape.block_threads == 32
    chunks = -(-1000 // shape.tile)  # chunks of block_threads x items steps, one a thread
    launches = [event for event in recorder.events if event[0] == "launch"]
    assert [event[1] for event in launches] == [k.template for k in variant.pass_kernels]
    assert [event[2] for event in launches] == [4 * chunks, 100, 4 * chunks]  # 100 sequences: four blocks across
    assert [event[3] for event in launches] == [32, 32, 32]  # 8 chunks a sequence: pass 2 in the short shape
    recorder.events.clear()
    launch("columns", (100, 20000))  # 157 chunks a sequence: the long shape, pass 2 in wider blocks
    long = variant.launch_shape("sm_90", "float32", 1, 20000, 100)
    assert long.carries.block_threads > long.block_threads == 32
    launches = [event for event in recorder.events if event[0] == "launch"]
    assert [event[3] for event in launches] == [32, long.carries.block_threads, 32]


def test_columns_lookback_launches_a_block_per_group_and_chunk_with_entries_per_sequence(recorder):
    variant = registry.resolve("columns_lookback")
    shape = variant.launch_shape("sm_90", "float32", 1, 5000, 100)
    steps = shape.steps_per_sequence
    launch("columns_lookback", (100, 5000))
    chunks = -(-5000 // steps)
    assert chunks > 1
    (launched,) = [event for event in recorder.events if event[0] == "launch"]
    assert launched[2:4] == (4 * chunks, shape.threads)  # 100 sequences: four groups of 32
    (alloc,) = [event for event in recorder.events if event[0] == "alloc"]
    assert alloc[1] >= _workspace.HEADER_BYTES + _workspace.DESCRIPTOR_BYTES * 32 * 4 * chunks


@pytest.mark.parametrize("shape,dim,reverse,expected", [
    ((1000, 64), 0, False, "columns_lookback"),  # time-major, 64 sequences
    ((1000, 64), 0, True, "columns_lookback"),   # the same reversed (time stride -64)
    ((3, 500, 16), 1, False, "columns_lookback"),  # (B, L, D) along L, D = 16: 48 sequences
    ((1000, 16), 0, False, "columns_lookback"),  # tiles of 16 sequences
    ((1000, 8), 0, False, "columns_lookback"),   # tiles of 8
    ((1000, 4), 0, False, "lookback_regs"),   # too few neighbours
    ((3, 500, 7), 1, False, "lookback_regs"),
    ((64, 1000), 1, False, "lookback_regs"),  # contiguous sequences
    ((64, 1000), 0, False, "columns_lookback"),  # the same array along dim 0: 1000 sequences of 64 steps
    ((64, 31), 0, False, "columns_lookback"),  # a tile of 32, one lane idle
])
def test_auto_takes_columns_lookback_for_time_major_batches(recorder, shape, dim, reverse, expected):
    va, vb, vout = views(shape)
    _scan._launch(None, va, vb, None, vout, dim, reverse, 5)
    (function,) = [event for event in recorder.events if event[0] == "function"]
    assert function[1] == expected
    recorder.events.clear()
    _scan._launch(None, va, vb, None, vout, dim, reverse, 5)  # the prepared launch, reused, says the same
    assert [event[1] for event in recorder.events if event[0] == "function"] == [expected]


def test_auto_sees_a_replaced_columns_lookback_entry(recorder, monkeypatch):
    va, vb, vout = views((1000, 16))  # 16 time-major sequences: columns_lookback's tiles of 16
    _scan._launch(None, va, vb, None, vout, 0, False, 5)
    first = recorder.shape
    table = registry.VARIANTS["columns_lookback"].table
    entry = table[("sm_90", "float32")]
    monkeypatch.setitem(table, ("sm_90", "float32"), {kind: dict(fields, items=2) for kind, fields in entry.items()})
    _scan._launch(None, va, vb, None, vout, 0, False, 5)
    assert recorder.shape.items == 2 and first.items != 2


def test_a_row_warp_kind_refuses_rows_longer_than_its_span(monkeypatch):
    """lookback.cu's row warps and packed rows scan one tile of each row: a table whose kind took longer
    rows (to_length past its span) would drop their ends, so prepare refuses the launch, naming the kind."""
    table = registry.VARIANTS["lookback_regs"].table
    entry = table[("sm_90", "float32")]
    assert _scan.contiguous_launch("auto", 5000, 160, "sm_90").kind == "rows_256"  # rows on their lines
    monkeypatch.setitem(table, ("sm_90", "float32"), {**entry, "rows_128": dict(entry["rows_128"], to_length=256)})
    with pytest.raises(RtscanError, match="rows_128 shape takes rows of at most 128 steps, given 160"):
        _scan.contiguous_launch("auto", 5000, 160, "sm_90")
    monkeypatch.setitem(table, ("sm_90", "float32"), {**entry, "rows_256": dict(entry["rows_256"], to_length=512)})
    with pytest.raises(RtscanError, match="rows_256 shape takes rows of at most 256 steps, given 288"):
        _scan.contiguous_launch("auto", 5000, 288, "sm_90")


def test_no_launch_when_the_scratch_cannot_grow_during_capture(recorder):
    launch("three_pass", (1, 1000))
    recorder.events.clear()
    recorder.capturing = True
    launch("three_pass", (1, 1000))  # fits the scratch it has: fine while capturing
    assert [e[0] for e in recorder.events].count("launch") == 3
    recorder.events.clear()
    with pytest.raises(RtscanError, match="capture"):
        launch("three_pass", (64, 1 << 16))
    assert not [event for event in recorder.events if event[0] == "launch"]


def test_single_pass_variants_keep_one_launch_and_no_scratch(recorder):
    launch("lookback_regs", (3, 10000))
    launches = [event for event in recorder.events if event[0] == "launch"]
    assert len(launches) == 1 and launches[0][1] == "rtscan::lookback_scan"
    assert not _workspace._scratch and not [e for e in recorder.events if e[0] == "push"]


def test_a_layout_is_prepared_once_per_tuning_entry_and_alignment(recorder, monkeypatch):
    variant = registry.resolve("lookback_regs")
    launch("lookback_regs", (3, 20000))
    first = recorder.shape
    assert first.vec == 4
    launch("lookback_regs", (3, 20000), offset=1)  # a[1:]-like addresses: 16 bytes at a time, one head step
    assert recorder.shape.vec == 4
    launch("lookback_regs", (3, 20000), offset=1, out_offset=2)  # placed differently: the scalar path
    assert recorder.shape.vec == 1
    launch("lookback_regs", (3, 20000))
    assert recorder.shape == first
    entry = variant.table[("sm_90", "float32")]
    smaller = dict(entry["short"], items=8)
    monkeypatch.setitem(variant.table, ("sm_90", "float32"), dict(entry, short=smaller))
    launch("lookback_regs", (3, 20000))  # the replaced entry is seen, not the prepared launch
    assert recorder.shape.items == 8
    tiles = [event[2] for event in recorder.events if event[0] == "launch"]
    assert tiles[-1] == 3 * -(-20000 // (256 * 8))
    assert len(_scan._prepared) == 3  # aligned (rebuilt for the new entry), one element past, mixed


def test_the_argument_block_holds_this_calls_values(recorder):
    va, vb, vout = views((2, 5000), pointer=0x9000000)
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    pointers = (ctypes.c_void_p * 8).from_address(recorder.params_address)
    values = [ctypes.c_void_p.from_address(pointers[i]).value or 0 for i in range(4)]
    assert values == [va.pointer, vb.pointer, vout.pointer, 0]
    layout = _layout.SeqLayout.from_address(pointers[4])
    assert (layout.length, layout.num_seqs, layout.in_time_stride) == (5000, 2, 1)
    tile = recorder.shape.tile
    counts = [ctypes.c_longlong.from_address(pointers[i]).value for i in (6, 7)]
    assert counts == [-(-5000 // tile), 2 * -(-5000 // tile)]
    # The kernel's parameters sit at their C offsets: 4 pointers, SeqLayout, TileWorkspace, 2 counts.
    offsets = [pointers[i] - pointers[0] for i in range(8)]
    assert offsets == [0, 8, 16, 24, 32, 32 + ctypes.sizeof(_layout.SeqLayout),
                       48 + ctypes.sizeof(_layout.SeqLayout), 56 + ctypes.sizeof(_layout.SeqLayout)]


def test_two_threads_passes_do_not_interleave(recorder, monkeypatch):
    """Two threads on one stream share its scratch: each call's three launches stay together."""
    import threading
    import time

    slow_launch = recorder.launch

    def launch_and_yield(*args):
        slow_launch(*args)
        time.sleep(0.001)  # give the other thread every chance to slip its launch in between

    monkeypatch.setattr(_driver, "launch", launch_and_yield)
    threads = [threading.Thread(target=launch, args=("three_pass", (2, 5000))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    templates = [event[1] for event in recorder.events if event[0] == "launch"]
    passes = [k.template for k in registry.resolve("three_pass").pass_kernels]
    assert templates == passes * 4


class DeviceArray:
    """A float32 array in (pretend) device memory, read through __cuda_array_interface__."""

    def __init__(self, pointer, shape, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (pointer, False),
                                         "strides": None if strides is None else tuple(4 * s for s in strides),
                                         "version": 3}


@pytest.fixture
def device_arrays(recorder, monkeypatch):
    monkeypatch.setattr(_arrays, "_device_of_pointer", lambda name, pointer: 0)
    return recorder


def launches(recorder):
    return [event for event in recorder.events if event[0] == "launch"]


def test_a_repeated_layout_with_new_pointers_is_checked_again(device_arrays):
    from rtscan import InputError, scan

    base = 0x4000000
    a, b = DeviceArray(base, (64,)), DeviceArray(base + 0x1000, (64,))
    scan(a, b, out=DeviceArray(base + 0x2000, (64,)))
    scan(a, b, out=a)  # out=a exactly is allowed
    assert len(launches(device_arrays)) == 2
    for shift in (4, -4, 252):  # the same layout, out now partly over a
        with pytest.raises(InputError, match="^out overlaps a"):
            scan(a, b, out=DeviceArray(base + shift, (64,)))
    with pytest.raises(InputError, match="^out overlaps b"):
        scan(a, b, out=DeviceArray(base + 0x1000 + 8, (64,)))
    with pytest.raises(InputError, match="^out overlaps h0"):
        scan(a, b, h0=DeviceArray(base + 0x2000 + 4, ()), out=DeviceArray(base + 0x2000, (64,)))
    # The same pointer as a, but every other element of 128: a layout of its own, and refused.
    with pytest.raises(InputError, match="^out overlaps a"):
        scan(a, b, out=DeviceArray(base, (64,), strides=(2,)))
    # out's elements must be distinct in every layout, whatever was checked before.
    with pytest.raises(InputError, match="^out has overlapping elements"):
        scan(a, b, out=DeviceArray(base + 0x2000, (64,), strides=(0,)))
    scan(a, b, out=DeviceArray(base + 256, (64,)))  # just past a's end: fine again
    assert len(launches(device_arrays)) == 3


def test_the_argument_block_follows_each_calls_layout_and_workspace(recorder):
    def block_values():
        pointers = (ctypes.c_void_p * 8).from_address(recorder.params_address)
        layout = _layout.SeqLayout.from_address(pointers[4])
        workspace = _workspace.TileWorkspace.from_address(pointers[5])
        counts = [ctypes.c_longlong.from_address(pointers[i]).value for i in (6, 7)]
        return (layout.length, layout.num_seqs), workspace.ticket, workspace.capacity, counts

    seen = []
    for shape in [(2, 20000), (3, 70000), (2, 20000), (1024, 20000), (2, 20000)]:
        launch("lookback_regs", shape)
        (length, num_seqs), ticket, capacity, (tiles_per_seq, num_tiles) = block_values()
        tile = recorder.shape.tile
        assert (num_seqs, length) == shape
        assert (tiles_per_seq, num_tiles) == (-(-length // tile), num_seqs * -(-length // tile))
        workspace = _workspace._workspaces[_workspace._key(0, 5)]
        assert (ticket, capacity) == (workspace.pointer, workspace.capacity)
        seen.append((ticket, capacity))
    # (1024, 20000) grew the workspace: the last call, of a layout the block held before, has the new one.
    assert seen[0] == seen[2] != seen[3] == seen[4] and seen[4][1] > _workspace.MIN_CAPACITY
    # The same layout on another stream: only the workspace changes, and the block follows it.
    launch("lookback_regs", (2, 20000), stream=6)
    assert block_values()[1] == _workspace._workspaces[_workspace._key(0, 6)].pointer != seen[4][0]


def test_the_argument_block_looks_a_workspace_up_only_when_its_launch_changes(recorder, monkeypatch):
    """A thread's block keeps its workspace while its launches keep their layout, device and stream
    and no workspace is replaced (P272); then it takes the stream's current one."""
    acquired, acquire = [], _workspace.acquire
    monkeypatch.setattr(_workspace, "acquire", lambda *arguments: acquired.append(arguments) or acquire(*arguments))

    def launched_workspace():
        pointers = (ctypes.c_void_p * 8).from_address(recorder.params_address)
        return _workspace.TileWorkspace.from_address(pointers[5]).ticket

    for stream, looked_up in ((5, 1), (5, 1), (6, 2), (6, 2), (5, 3)):
        launch("lookback_regs", (2, 20000), stream=stream)
        assert len(acquired) == looked_up, (stream, looked_up)
        assert launched_workspace() == _workspace._workspaces[_workspace._key(0, stream)].pointer
    acquire(0, 5, 100 * _workspace.MIN_CAPACITY)  # stream 5's workspace replaced by a larger one
    launch("lookback_regs", (2, 20000), stream=5)
    assert len(acquired) == 4
    assert launched_workspace() == _workspace._workspaces[_workspace._key(0, 5)].pointer


def launched_layout(recorder):
    pointers = (ctypes.c_void_p * 8).from_address(recorder.params_address)
    layout = _layout.SeqLayout.from_address(pointers[4])
    tiles_per_seq = ctypes.c_longlong.from_address(pointers[6]).value
    return layout, tiles_per_seq


@pytest.mark.parametrize("offset", [1, 2, 3, 17, 31])
def test_rows_equally_misaligned_start_their_tiles_at_the_line(recorder, offset):
    """P67, P196: a, b and out all `offset` elements past a 128-byte line, rows a multiple of 32
    long: the 16-byte path, each row scanned from its line with `offset` identity steps first; the
    pointers, lengths and origins stay the caller's, the tiles count from the head."""
    va, vb, vout = views((3, 20000), offset=offset)
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    layout, tiles_per_seq = launched_layout(recorder)
    assert recorder.shape.vec == 4
    assert (layout.head, layout.length, layout.in_origin, layout.out_origin) == (32, 20000, 0, 0)
    assert (layout.in_batch_stride[0], layout.out_batch_stride[0]) == (20000, 20000)
    assert tiles_per_seq == -(-(20000 + offset) // recorder.shape.tile)
    pointers = (ctypes.c_void_p * 3).from_address(recorder.params_address)
    assert [ctypes.c_void_p.from_address(pointers[i]).value for i in range(3)] == [va.pointer, vb.pointer, vout.pointer]


@pytest.mark.parametrize("length,longest", [(20001, 31), (20002, 30), (20004, 28), (33000, 24), (50000, 16),
                                            (20000, 0)])
def test_rows_of_any_length_take_the_16_byte_path_from_their_lines(recorder, length, longest):
    """P196: rows whose starts fall at different distances past a line (a row length not a multiple
    of 32) take the 16-byte path, each row from its own line (the kernel finds its head from the
    address), the tiles counted from the longest head: the boundary less the common divisor of the
    row length and 32. Rows a multiple of 32 long, from a line, take no head."""
    va, vb, vout = views((5, length))
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    layout, tiles_per_seq = launched_layout(recorder)
    assert recorder.shape.vec == 4
    assert (layout.head, layout.length, layout.in_origin) == ((32 if longest else 0), length, 0)
    assert tiles_per_seq == -(-(length + longest) // recorder.shape.tile)


def test_a_line_shared_only_to_16_bytes_takes_16_byte_heads(recorder):
    """out 16 bytes off a and b's line, or out's rows a length apart that is not a's modulo 32: the
    heads count from 16-byte boundaries (seq_layout.cuh's head 4), which a, b and out still share."""
    va, vb, vout = views((3, 20001), out_offset=4)
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    layout, tiles_per_seq = launched_layout(recorder)
    assert (recorder.shape.vec, layout.head) == (4, 4)
    assert tiles_per_seq == -(-(20001 + 3) // recorder.shape.tile)
    va, vb, vout = views((3, 20000), offset=1, out_strides=(20008, 1))
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    layout, _ = launched_layout(recorder)
    assert (recorder.shape.vec, layout.head, layout.out_batch_stride[0]) == (4, 4, 20008)


def test_row_heads_bound_every_rows_head_and_agree_in_and_out():
    """_row_heads against every row of random batches (up to three axes, random strides, in and out
    alike or off by multiples of 4 or 32, a and out anywhere in their lines): each form's boundary
    is one a, b and out share row for row, its longest head is at least every row's head (the
    tiles are counted from it), and it is reached by some row where one axis has rows enough; the
    forms are the line's first, and none where the rows share no 16-byte placement."""
    import itertools
    import random

    rng = random.Random(196)
    for _ in range(400):
        sizes = [rng.randint(1, 40) for _ in range(rng.randint(0, 3))]
        steps = rng.randint(1, 5000)
        in_strides, extent = [], steps + rng.randint(0, 40)
        for size in reversed(sizes):
            in_strides.insert(0, extent)
            extent *= size + rng.randint(0, 1)
        out_strides = [stride + rng.choice([0, 0, 4, 32, 1]) for stride in in_strides]
        shape = tuple(sizes) + (steps,)
        plan = _layout.plan(shape, tuple(in_strides) + (1,), tuple(out_strides) + (1,), len(sizes), False)
        past = rng.randint(0, 31)
        out_past = rng.choice([past, past, (past + 4) % 32, (past + 1) % 32])
        placement = _scan.pointer_placement(0x1000 + 4 * past, 0x9000 + 4 * past, 0x20000 + 4 * out_past)
        forms = _scan._row_heads(plan, placement, True)
        assert [boundary for boundary, _ in forms] == sorted((boundary for boundary, _ in forms), reverse=True)
        if placement is None:
            assert forms == []
        for boundary, longest in forms:
            heads = []
            for index in itertools.product(*(range(size) for size in sizes)):
                in_offset = sum(i * stride for i, stride in zip(index, in_strides))
                out_offset = sum(i * stride for i, stride in zip(index, out_strides))
                head = (past + in_offset) % boundary
                assert (out_past + out_offset) % boundary == head, (shape, in_strides, out_strides, boundary)
                heads.append(head)
            assert max(heads) <= longest < boundary
            if len(sizes) == 1 and sizes[0] >= boundary:  # k * stride, k < boundary: every multiple of the divisor
                assert max(heads) == longest


def test_rows_keep_their_tile_count_on_16_byte_heads_where_the_line_would_add_one(recorder):
    """Rows of five short tiles less 6 steps (too long for the tiles of one row): from their lines
    (heads up to 30) they would take a sixth, nearly empty tile; from 16-byte boundaries (heads up to
    2) they keep five (P196)."""
    tile = registry.resolve("lookback_regs").launch_shape("sm_90", "float32", 4, 1).tile
    va, vb, vout = views((3, 5 * tile - 6))
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 1, False, 5)
    layout, tiles_per_seq = launched_layout(recorder)
    assert (recorder.shape.vec, recorder.shape.tile, layout.head, tiles_per_seq) == (4, tile, 4, 5)


def test_a_head_that_adds_a_tile_to_a_row_of_many_is_taken(recorder):
    """A sequence of 256 short tiles one element past a boundary: the head makes it 257 tiles of
    16-byte steps, which ran 22 % faster than 256 scalar ones (P68's run); only a row of one tile
    keeps the scalar path (P67)."""
    tile = registry.resolve("lookback_regs").launch_shape("sm_90", "float32", 4, 1).tile
    va, vb, vout = views((256 * tile,), offset=1)
    _scan._launch(registry.resolve("lookback_regs"), va, vb, None, vout, 0, False, 5)
    layout, tiles_per_seq = launched_layout(recorder)
    assert (recorder.shape.vec, recorder.shape.tile) == (4, tile)
    assert (layout.head, tiles_per_seq) == (32, 257)


@pytest.mark.parametrize("case", ["out placed differently", "reverse", "three_pass", "blelloch", "hillis_steele",
                                  "one step a thread", "one tile into two", "one tile into two, any row"])
def test_no_head_where_the_16_byte_path_cannot_take_one(recorder, case, monkeypatch):
    name, shape, offset, out_offset, reverse = "lookback_regs", (3, 20000), 1, None, False
    tile = registry.resolve(name).launch_shape("sm_90", "float32", 4, 1).tile
    if case == "one tile into two":  # a sequence of exactly one short tile: the head would make it two (P67)
        shape = (tile,)
    elif case == "one tile into two, any row":  # rows of one short tile less one step, from a line, where
        # no tile of one row holds them with their heads (rows_6144 does since P236)
        from _gpu import without_kinds

        shape, offset = (3, tile - 1), 0
        without_kinds(monkeypatch, registry.resolve(name), "sm_90", registry.LONG_ROWS_KINDS)
    elif case == "out placed differently":
        out_offset = 0
    elif case == "reverse":
        reverse = True
    elif case in ("three_pass", "blelloch", "hillis_steele"):  # kernels that do not honour SeqLayout.head
        name = case
    elif case == "one step a thread":
        name = "lookback_warp"  # the seed's shapes: one step a thread, scalar only
    va, vb, vout = views(shape, offset=offset, out_offset=out_offset)
    _scan._launch(registry.resolve(name), va, vb, None, vout, len(shape) - 1, reverse, 5)
    assert recorder.shape.vec == 1
    if not registry.resolve(name).pass_kernels:
        layout, _ = launched_layout(recorder)
        assert (layout.head, layout.length) == (0, shape[-1])


def test_pointer_placement_is_counted_in_elements_and_must_agree():
    assert _scan.pointer_placement(0x1000, 0x2000, 0x3000) == (32, 0)
    assert _scan.pointer_placement(0x1004, 0x2004, 0x3004) == (32, 1)
    assert _scan.pointer_placement(0x107c, 0x207c, 0x307c) == (32, 31)
    assert _scan.pointer_placement(0x1004, 0x2014, 0x3004) == (4, 1)  # b 16 bytes further into its line
    assert _scan.pointer_placement(0x100c, 0x200c, 0x309c) == (4, 3)  # out 16 bytes further
    assert _scan.pointer_placement(0x1004, 0x2008, 0x3004) is None
    assert _scan.pointer_placement(0x1002, 0x2002, 0x3002) is None  # not even 4-byte aligned


@pytest.mark.parametrize("case,expected", [("rows that keep their tiles", 1), ("aligned", 0), ("reverse", 0),
                                           ("one tile into two", 0), ("rows of odd length", 1),
                                           ("far into the line", 29), ("b placed differently", 0),
                                           ("three_pass", 0)])
def test_a_new_result_is_placed_off_the_line_only_for_a_head(recorder, case, expected):
    """rtscan allocates a C-contiguous result as far past a 128-byte line as a and b only where the
    launch then takes a head (P67, P196); everywhere else on the line."""
    name, shape, offset, reverse = "lookback_regs", (3, 20000), 1, False
    if case == "aligned":
        offset = 0
    elif case == "reverse":
        reverse = True
    elif case == "one tile into two":  # one sequence: rows take rows_6144's one tile with their heads (P236)
        shape = (registry.resolve(name).launch_shape("sm_90", "float32", 4, 1).tile,)
    elif case == "rows of odd length":
        shape = (3, 20001)
    elif case == "three_pass":
        name = "three_pass"
    elif case == "far into the line":
        offset = 29
    va, vb, _ = views(shape, offset=offset)
    if case == "b placed differently":
        vb = vb._replace(pointer=vb.pointer + 4)
    assert _scan._result_offset(registry.resolve(name), va, vb, len(shape) - 1, reverse) == expected
