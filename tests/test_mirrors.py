"""The CPU mirror of the look-back kernel (tests/mirrors/lookback_mirror.cpp), built by the host C++
compiler from the kernels' own headers, and its broken twins.

- The mirror agrees with the float64 reference, and gives the same bits whichever segments its
  look-back finds finished (the determinism argument of kernels_cu/tile_state.cuh). The carry into
  a tile has two levels: the composed maps of the earlier tiles of its segment of 32, applied to the
  end state of the previous segment, which a look-back over segments finds. Launch shape 4 has
  tiles so small that short inputs span dozens of segments.
- Each broken twin is the mirror built against a copy of kernels_cu/ with one deliberate mistake
  in the shared code (operands swapped, an index off by one): every one of them must be caught.
- On a GPU, the kernel's output equals the mirror's bit for bit.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import _checks
import _mirrors
from _mirrors import SEGMENT_TILES
from rtscan import registry

pytestmark = _mirrors.needs_compiler

# Launch shapes compiled into the mirror (see rtscan_mirror_scan): id -> (block_threads, items,
# vec, depth, walk lanes, tiles per segment, protocol warp, chunks first, run chunks, register items
# where there are runs, else 0)
SHAPES = {0: (256, 16, 4, 1, 32, 32, 0, 0, 1, 0), 1: (256, 16, 1, 1, 32, 32, 0, 0, 1, 0),
          2: (64, 8, 4, 2, 32, 32, 0, 0, 1, 0), 3: (64, 8, 1, 4, 32, 32, 0, 0, 1, 0),
          4: (32, 2, 1, 2, 32, 32, 0, 0, 1, 0), 5: (384, 44, 4, 1, 32, 32, 0, 0, 1, 0),
          6: (64, 1, 1, 1, 1, 1, 0, 0, 1, 0), 7: (64, 1, 1, 2, 32, 1, 0, 0, 1, 0),
          8: (256, 1, 1, 1, 1, 1, 0, 0, 1, 0), 9: (256, 1, 1, 1, 32, 1, 0, 0, 1, 0),
          10: (352, 56, 4, 1, 32, 32, 1, 0, 1, 0), 11: (64, 8, 1, 2, 32, 32, 1, 0, 1, 0),
          12: (352, 48, 4, 1, 32, 32, 1, 0, 1, 0), 13: (352, 56, 4, 1, 32, 1, 1, 0, 1, 0),
          14: (256, 32, 4, 1, 32, 32, 0, 1, 1, 0), 15: (32, 2, 1, 2, 32, 32, 0, 1, 1, 0),
          16: (256, 32, 4, 1, 32, 32, 0, 0, 1, 0), 17: (256, 16, 4, 1, 32, 32, 0, 1, 1, 0),
          18: (352, 56, 4, 1, 32, 1, 1, 1, 1, 0), 19: (352, 48, 4, 1, 32, 32, 1, 1, 1, 0),
          20: (352, 48, 4, 1, 32, 32, 1, 0, 2, 16), 21: (352, 48, 4, 1, 32, 32, 1, 0, 4, 16),
          22: (352, 48, 4, 1, 32, 32, 1, 0, 8, 16), 23: (352, 48, 4, 1, 32, 32, 1, 1, 4, 16),
          24: (352, 48, 4, 1, 32, 1, 1, 1, 2, 16), 25: (32, 4, 4, 1, 32, 32, 0, 0, 1, 0),
          26: (128, 8, 4, 1, 32, 32, 0, 0, 1, 0), 27: (128, 16, 4, 1, 32, 32, 0, 0, 1, 0),
          28: (32, 8, 4, 1, 32, 32, 0, 0, 1, 0), 29: (32, 12, 4, 1, 32, 32, 0, 0, 1, 0),
          30: (32, 16, 4, 1, 32, 32, 0, 0, 1, 0), 31: (32, 24, 4, 1, 32, 32, 0, 0, 1, 0),
          32: (64, 16, 4, 1, 32, 32, 0, 0, 1, 0), 33: (64, 24, 4, 1, 32, 32, 0, 0, 1, 0),
          34: (64, 4, 4, 1, 32, 32, 0, 0, 1, 0), 35: (256, 4, 4, 1, 32, 32, 0, 0, 1, 0),
          36: (512, 4, 4, 1, 32, 32, 0, 0, 1, 0), 37: (1024, 4, 4, 1, 32, 32, 0, 0, 1, 0),
          38: (128, 4, 4, 1, 32, 32, 0, 0, 1, 0), 39: (128, 24, 4, 1, 32, 32, 0, 0, 1, 0),
          40: (256, 24, 4, 1, 32, 32, 0, 0, 1, 0), 41: (256, 32, 4, 1, 32, 32, 0, 0, 1, 0),
          42: (512, 24, 4, 1, 32, 32, 0, 0, 1, 0)}

# (file under kernels_cu/, exact text, replacement): one deliberate mistake each.
BROKEN_TWINS = {
    "compose_operands_swapped": ("affine.cuh", "multiply_add(later.a, earlier.b, later.b)",
                                 "multiply_add(earlier.a, later.b, earlier.b)"),
    "compose_product_wrong_factor": ("affine.cuh", "{later.a * earlier.a,", "{later.a * earlier.b,"),
    "lane_step_off_by_one": ("indexing.cuh", "return span_start + chunk * WARP_SIZE * VEC + lane * VEC;",
                             "return span_start + chunk * WARP_SIZE * VEC + lane * VEC + 1;"),
    "run_read_striped": ("indexing.cuh", "(lane * RUN + j) * VEC;", "(lane + j * WARP_SIZE) * VEC;"),
    "warp_span_off_by_one": ("indexing.cuh", "return warp * WARP_SIZE * ITEMS;",
                             "return warp * WARP_SIZE * ITEMS + 1;"),
    "scan_round_strict": ("indexing.cuh", "return lane >= offset;", "return lane > offset;"),
    "lookback_skips_nearest": ("indexing.cuh", "return 1 + lane + LANES * d", "return 2 + lane + LANES * d"),
    "window_position_off_by_one": ("indexing.cuh", "return LANES * d + lane;", "return LANES * d + lane + 1;"),
    "segment_place_off_by_one": ("indexing.cuh", "return int(chunk % SEGMENT);",
                                 "return int((chunk + 1) % SEGMENT);"),
    "segment_of_off_by_one": ("indexing.cuh", "return chunk / SEGMENT;", "return (chunk + 1) / SEGMENT;"),
    "batch_axes_forward": ("seq_layout.cuh", "for (int axis = int(layout.batch_rank) - 1; axis >= 0; --axis) {",
                           "for (int axis = 0; axis < int(layout.batch_rank); ++axis) {"),
    "batch_index_off_by_one": ("seq_layout.cuh", "const long long index = seq % size;",
                               "const long long index = (seq + 1) % size;"),
    "strided_tickets_last_chunk_first": ("seq_layout.cuh",
                                         "return (ticket - chunk * layout.num_seqs) * tiles_per_seq + chunk;",
                                         "return (ticket - chunk * layout.num_seqs) * tiles_per_seq + "
                                         "(tiles_per_seq - 1 - chunk);"),
}


build_mirror = functools.partial(_mirrors.Mirror, "lookback_mirror.cpp", "rtscan_mirror_scan")
mirror = _mirrors.module_fixture(build_mirror)


def tile_of(shape_id):
    block_threads, items = SHAPES[shape_id][:2]
    return block_threads * items


def segment_steps(shape_id):
    return SEGMENT_TILES * tile_of(shape_id)


# (shape id, array shape, dim, reverse, with h0): lengths across tile, warp, chunk and segment
# edges, batches whose axes do not merge (strided time, two batch axes), reverse, h0. A window of
# shape 4's look-back holds 64 segments, so 70 segments cross into a second one; a length of whole
# segments ends on a segment's last tile, which has no successor and publishes nothing.
def cases():
    small, big, segment = tile_of(2), tile_of(0), segment_steps(4)
    return [
        (4, (70 * segment + 5,), -1, False, True),
        (4, (2, 40 * segment + 3), -1, True, False),
        (4, (3, 6 * segment), -1, False, True),
        (2, (37 * small + 5,), -1, False, False),
        (3, (40 * small - 1,), -1, True, True),
        (2, (3, 9 * small + 33), -1, False, True),
        (3, (3, 2 * small + 7, 4), 1, False, True),  # time stride 4, batch axes (3, 4) not mergeable
        (3, (2, 3, 5 * small + 1), 0, True, False),  # dim 0 of a 3-d array: two batch axes
        (4, (2 * segment + 5, 3), 0, False, True),  # time-major: tickets take chunk c of every sequence first
        (0, (3 * big + 1,), -1, False, False),
        (0, (SEGMENT_TILES * big + 2 * big - 9,), -1, False, True),  # the tuned shape across a segment edge
        (1, (2, 2 * big + 31), -1, True, True),
        (5, (2 * tile_of(5) + 37,), -1, False, True),  # 12 warps, 11 chunks
        (10, (2 * tile_of(10) + 37,), -1, False, True),  # sm_90's large shape before P161: 11 warps and a protocol warp
        (10, (SEGMENT_TILES * tile_of(10) + 2 * tile_of(10) + 5,), -1, True, False),
        (12, (2 * tile_of(12) + 41,), -1, False, True),  # the sm_90 long shape: 11 warps and a protocol warp
        (13, (40 * tile_of(13) + 37,), -1, True, True),  # one-level over tiles with a protocol warp: a window crossed
        (18, (2, 20 * tile_of(18) + 37), -1, False, True),  # the same chunks first: sm_90's large shape before P161
        (19, (3, 34 * tile_of(19) + 5), -1, True, False),  # the long tile chunks first (long_batch), across a segment
        # the long tile with runs of 2, 4 and 8 staged chunks, the last tile cut inside a run
        (20, (2 * tile_of(20) + 9000,), -1, False, True),
        (21, (2, 2 * tile_of(21) + 13000), -1, True, False),
        (22, (3 * tile_of(22) + 16000,), -1, False, True),
        (23, (3, 34 * tile_of(23) + 5), -1, False, True),  # runs, chunks first, across a segment
        (24, (2, 20 * tile_of(24) + 9037), -1, False, True),  # sm_90's large and mid_batch shape: runs, one level
        # sm_90's tiles for short rows (P213, P215): a row a tile, and rows across tiles (one-warp
        # tiles across a segment's edge)
        (25, (5, tile_of(25) - 12), -1, False, True),
        (26, (3, tile_of(26)), -1, True, False),
        (27, (2, 3 * tile_of(27) + 37), -1, False, True),
        (28, (3, tile_of(28)), -1, True, False),
        (29, (2, 40 * tile_of(29) + 37), -1, False, True),
        (30, (4, tile_of(30) - 100), -1, False, True),
        (31, (2, 3 * tile_of(31) + 5), -1, True, True),
        (32, (3, tile_of(32) - 1), -1, False, False),
        (33, (2, 2 * tile_of(33) + 37), -1, False, True),
        # the tiles for small launches (P217): 4 steps a lane, one sequence, rows, rows across tiles
        (34, (3, tile_of(34) - 7), -1, False, True),
        (35, (tile_of(35) - 24,), -1, True, False),
        (36, (2, 3 * tile_of(36) + 9), -1, False, True),
        (37, (2, tile_of(37)), -1, False, False),
        (38, (4, tile_of(38) - 3), -1, True, True),
        (39, (3, tile_of(39) - 900), -1, False, True),  # rows_3072's tile, a row of 2172 steps
        (40, (3, tile_of(40) - 1143), -1, False, True),  # rows_6144's tile, a row of 5001 steps
        (41, (3, tile_of(41) - 1192), -1, False, True),  # rows_8192's tile, a row of 7000 steps
        (42, (3, tile_of(42) - 2287), -1, False, True),  # rows_12288's tile, a row of 10001 steps
        (11, (40 * small + 3,), -1, False, True),  # a protocol warp on the scalar path
        # chunks first on contiguous rows: the sm_90 batch shape (14), and tiny tiles (15) whose
        # batches span dozens of segments, on two batch axes and in reverse
        (14, (3, 2 * tile_of(14) + 37), -1, False, True),
        (16, (3, 2 * tile_of(16) + 37), -1, True, True),  # the sm_90 "many" shape: the batch tile in sequence order
        (17, (3, 40 * tile_of(17) + 5), -1, False, True),  # "short_batch": the short tile, chunks first
        (15, (3, 40 * segment_steps(15) + 3), -1, False, True),
        (15, (2, 3, 3 * segment_steps(15) + 7), -1, True, False),
        (11, (3, 2 * small + 7, 2), 1, True, True),
        # the seed's one-level look-backs: serial (6) and warp (7) walks over 64-step tiles, a warp
        # window of 64 tiles crossed; the 256-step tiles of their tuning entries (8, 9)
        (6, (300 * tile_of(6) + 17,), -1, False, True),
        (7, (2, 150 * tile_of(7) + 3), -1, True, False),
        (8, (40 * tile_of(8) + 7,), -1, True, True),
        (9, (3, 33 * tile_of(9) - 1), -1, False, True),
    ]


@pytest.mark.parametrize("case", cases(), ids=_mirrors.case_id)
def test_mirror_matches_reference_and_is_deterministic(mirror, case):
    problems = _mirrors.check_case(mirror, np.random.default_rng(), case)
    assert not problems, problems


@pytest.mark.parametrize("head", [32, 4])
@pytest.mark.parametrize("shape_id,tiles", [(2, 3), (17, 2), (20, 1), (24, 2)])
def test_mirror_scans_rows_from_their_boundaries(mirror, shape_id, tiles, head):
    """seq_layout.cuh's head (P196): 33 rows of an odd length, so their starts fall at every distance
    past a boundary and each row is scanned from the one before it, the steps between the identity
    and unwritten: the reference's values, with h0, and the same bits whichever segments the
    look-back finds finished, on small tiles and on the short, long-with-runs and mid_batch tiles;
    rows a little short of whole tiles and a little past them."""
    rng = np.random.default_rng()
    # the first: rows 1-21 steps short of `tiles` tiles, so that the rows with the shortest heads have
    # an empty last tile (tiles are counted from the longest head); the second: rows past them
    for length in (tiles * tile_of(shape_id) - 2 * int(rng.integers(0, 11)) - 1,
                   tiles * tile_of(shape_id) + 2 * int(rng.integers(0, 300)) + 1):
        scan_rows_from_boundaries(mirror, rng, shape_id, length, head)


def scan_rows_from_boundaries(mirror, rng, shape_id, length, head):
    a, b = _mirrors.draw(rng, (33, length))
    h0 = _mirrors.draw_h0(rng, (33, length), -1, False)
    outputs = [mirror.scan(shape_id, a, b, h0, finished=p, seed=seed, head=head)
               for p in _mirrors.FINISHED_PROBABILITIES for seed in (1, 2)]
    assert all(np.array_equal(outputs[0], other) for other in outputs[1:])
    _checks.assert_close(outputs[0], _checks.expected(a, b, h0, -1, False), _checks.running_scale(a, b, h0, -1, False),
                         f"33 x {length} from boundaries of {head}")


@pytest.mark.parametrize("run", [1, 2, 4, 8])
def test_staged_layout_is_a_permutation_without_bank_conflicts(mirror, run):
    """indexing.cuh's staged_vector_slot, as lookback.cu uses it (16-byte vectors, a warp's staged
    chunks in runs of `run`): within every warp's staged steps each vector gets a slot of its own,
    and the eight lanes of a quarter warp, which share a 16-byte shared-memory access, reach eight
    different bank groups (slot modulo 8) both in a chunk's sweep (lane l: vector 32 * chunk + l)
    and in a run's reads (lane l: vector 32 * run * r + run * l + j)."""
    slot = mirror.library.rtscan_mirror_staged_vector_slot
    for staged_chunks in range(run, 4 * run + 1, run):  # one to four runs, as lookback.cu allows
        vectors = 32 * staged_chunks
        slots = [slot(run, q) for q in range(vectors)]
        assert sorted(slots) == list(range(vectors)), (run, staged_chunks)
        sweeps = [[32 * c + lane for lane in range(32)] for c in range(staged_chunks)]
        runs = [[32 * run * r + run * lane + j for lane in range(32)]
                for r in range(staged_chunks // run) for j in range(run)]
        for access in sweeps + (runs if run > 1 else []):
            for quarter in range(4):
                groups = {slots[q] % 8 for q in access[8 * quarter:8 * quarter + 8]}
                assert len(groups) == 8, (run, access[8 * quarter:8 * quarter + 8])


@pytest.mark.parametrize("twin", sorted(BROKEN_TWINS))
def test_every_broken_twin_is_caught(twin, tmp_path):
    _mirrors.assert_twin_caught(build_mirror, twin, BROKEN_TWINS[twin], cases(), tmp_path)


# The tuning kinds for batches of two rows or more (registry.SHAPE_KINDS).
BATCH_KINDS = ("mid_batch", "long_batch", "many", "short_batch", "batch")


@pytest.mark.gpu
@pytest.mark.parametrize("name,path,tiles", [
    ("lookback_regs", "many", 3), ("lookback_regs", "mid_batch", 6), ("lookback_regs", "short_batch", 3),
    ("lookback_regs", "short_batch", 30),
    ("lookback_regs", "long_batch", 3), ("lookback_regs", "long_batch", 40),
    ("lookback_regs", "batch", 1), ("lookback_regs", "batch", 3), ("lookback_regs", "batch", 20),
    ("lookback_regs", "large", 1), ("lookback_regs", "large", 3), ("lookback_regs", "large", 40),
    ("lookback_regs", "long", 1), ("lookback_regs", "long", 3), ("lookback_regs", "long", 40),
    ("lookback_regs", "short", 2)] + [("lookback_regs", kind, 1) for kind in registry.ROWS_KINDS] + [
    ("lookback_regs", "scalar", 1), ("lookback_regs", "scalar", 3),
    ("lookback_regs", "scalar", 40), ("lookback_serial", "scalar", 300), ("lookback_warp", "scalar", 300)])
def test_gpu_equals_mirror_bitwise(mirror, name, path, tiles, monkeypatch):
    """The kernel and the mirror run the same arithmetic in the same order: equal bits. Each of
    the GPU's launch shapes: mid_batch, long_batch, many, short_batch and batch (two sequences:
    many's and long_batch's bounds on sequences and row lengths are lifted; short_fill and over_wave run
    short_batch's shape), large and long (16-byte path, long sequences), the rows kinds (16-byte
    path, a row a tile; their bounds on sequences lifted), short (16-byte path,
    sequences short of 15/16 of a long tile) and scalar (strided input), and the seed's one-level
    look-backs. The shapes tried before the one tested are taken out of the table, which leaves the
    rest of the entry as tuned."""
    from _gpu import without_kinds
    from rtscan import _kernels, tuning

    variant = registry.resolve(name)
    arch = _kernels.device_arch(0)
    entry = tuning.lookup(variant.table, arch, "float32")
    if path in BATCH_KINDS + ("large",) + registry.ROWS_KINDS and path not in entry:
        pytest.skip(f"{name} has no {path} shape on {arch}")
    tried_before = registry.SHAPE_KINDS[:registry.SHAPE_KINDS.index(path)] if path in registry.SHAPE_KINDS \
        else registry.SHAPE_KINDS
    without_kinds(monkeypatch, variant, arch, tried_before)
    if path in ("many", "long_batch") + registry.ROWS_KINDS:
        key = next(k for k, e in variant.table.items() if e is tuning.lookup(variant.table, arch, "float32"))
        bounds = ("from_sequences", "to_sequences")
        if path not in registry.ROWS_KINDS:
            bounds += ("from_length", "to_length")
        monkeypatch.setitem(variant.table, key, {**variant.table[key],
                                                 path: {k: v for k, v in entry[path].items() if k not in bounds}})
    vec = 1 if path == "scalar" else 4
    if path == "short":
        long_tile = variant.launch_shape(arch, "float32", 4, 1 << 40).tile
        length = (15 * long_tile // 16 - 1) // 4 * 4  # the longest that registry.fills_a_tile refuses
    elif path in registry.ROWS_KINDS:  # a row a tile, 32 steps short of full (half full if it holds 64 at
        # most): the second row starts on a line (a head would move the row to a longer tile), or 64 bytes on
        row_steps = registry.entry_shape(entry[path], 4).steps_per_sequence
        length = row_steps - 32 if row_steps > 64 else row_steps // 2
    else:  # the second row 28 past its line on the 16-byte path (P196), off 16 bytes on the scalar one
        length, sequences = (1 << 17, 2) if path in BATCH_KINDS else (1 << 40, 1)
        tile = variant.launch_shape(arch, "float32", vec, length, sequences).tile
        length = _mirrors.gpu_length(tile, tiles, vec)
        if path in entry and "fill_edge" in entry[path]:  # a last tile 124 steps short of full, not 124 long
            length = (tiles + 1) * tile - 124
    # assert_gpu_equals_mirror scans two sequences of `length`.
    shape = variant.launch_shape(arch, "float32", vec, length, 2)
    kind = path if path in registry.SHAPE_KINDS else "short"  # the scalar path runs the short entry's scalar form
    assert shape == registry.entry_shape(entry[kind], vec), f"{length} steps do not take {kind}'s shape"
    wanted = _mirrors.launch_key(shape)
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(SHAPES, wanted), name, length, vec == 1, shape)


@pytest.mark.gpu
@pytest.mark.parametrize("length,sequences", [(8, 77), (12, 77), (20, 77), (28, 77), (33, 77), (50, 77), (64, 77),
                                              (96, 77), (128, 9), (20, 2), (50, 2)])
def test_packed_rows_equal_the_mirror_bitwise(mirror, length, sequences):
    """rows_128's packed rows (P227): a row of q lanes, floor(32 / q) rows a warp, lanes past the warp's
    rows and rows past the last idle, gives the bits of the one-warp mirror tile over that row, the
    rows 16-byte aligned (lengths that are multiples of 4) or each from its 16 bytes (33 and 50 steps)."""
    from rtscan import _kernels

    arch = _kernels.device_arch(0)
    shape = registry.resolve("lookback_regs").launch_shape(arch, "float32", 4, length, sequences)
    if shape.sequences_per_tile != 0:
        assert arch != "sm_90", f"{sequences} x {length} took {shape} on sm_90, not packed rows"
        pytest.skip(f"lookback_regs on {arch} has no packed rows for {sequences} x {length}")
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(SHAPES, _mirrors.launch_key(shape)),
                                      "lookback_regs", length, False, shape, sequences)


@pytest.mark.gpu
@pytest.mark.parametrize("run,chunks_first", [(2, 0), (4, 0), (8, 0), (4, 1)])
@pytest.mark.parametrize("tiles", [1, 3, 40])
def test_gpu_equals_mirror_bitwise_with_runs(mirror, run, chunks_first, tiles, monkeypatch):
    """The long tile with its staged chunks read back in runs (lookback.cu's RUN_CHUNKS), tuned or
    not: the GPU's bits are the mirror's, sequences ending in the middle of a run included."""
    from _gpu import without_kinds
    from rtscan import _kernels, tuning

    variant = registry.resolve("lookback_regs")
    arch = _kernels.device_arch(0)
    entry = without_kinds(monkeypatch, variant, arch, registry.SHAPE_KINDS[:registry.SHAPE_KINDS.index("long")])
    if "long" not in entry or not entry["long"].get("protocol_warp") or not entry["long"]["register_items"]:
        pytest.skip(f"lookback_regs' long shape on {arch} lacks a protocol warp or register chunks, which runs need")
    key = next(k for k, e in variant.table.items() if e is tuning.lookup(variant.table, arch, "float32"))
    long_shape = {k: v for k, v in entry["long"].items() if k != "from_total_steps"}
    monkeypatch.setitem(variant.table, key, {**variant.table[key],
                                             "long": dict(long_shape, run_chunks=run, chunks_first=chunks_first)})
    length = _mirrors.gpu_length(variant.launch_shape(arch, "float32", 4, 1 << 40).tile, tiles, 4) + 5000
    shape = variant.launch_shape(arch, "float32", 4, length, 2)
    wanted = _mirrors.launch_key(shape)
    assert wanted[-2] == run
    _mirrors.assert_gpu_equals_mirror(mirror, _mirrors.built_shape_id(SHAPES, wanted), "lookback_regs", length, False,
                                      shape)


# The register claims in rtscan/tuning.py: every shape compiled for the architecture, spill-free.
# Not lookback_regs on sm_80, which runs sm_90's short shape untuned: its scalar form spills 8
# bytes there (4 when compiled beside the 16-byte form; ptxas 13.0).
@_mirrors.needs_nvcc
@pytest.mark.parametrize("name,arch", [("lookback_regs", "sm_90"), ("lookback_warp", "sm_80"), ("lookback_warp", "sm_90"),
                                       ("lookback_serial", "sm_80"), ("lookback_serial", "sm_90")])
def test_registered_shapes_do_not_spill(name, arch, tmp_path):
    variant = registry.resolve(name)
    _mirrors.assert_spill_free(arch, variant.source, variant.expressions(variant.launch_shapes(arch, "float32")),
                               tmp_path)
