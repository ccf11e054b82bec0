"""rtscan/registry.py and rtscan/tuning.py: resolving variant names, launch shapes, the fallback to
the nearest older architecture, and rtscan.variants()."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import rtscan
from rtscan import InputError, _kernels, registry, tuning


def test_auto_resolves_to_a_registered_variant():
    assert registry.resolve("auto") is registry.VARIANTS[registry.AUTO]
    for name, variant in registry.VARIANTS.items():
        assert registry.resolve(name) is variant and variant.name == name


@pytest.mark.parametrize("name", ["", "Auto", "lookback", None])
def test_unknown_variant(name):
    with pytest.raises(InputError, match="variant"):
        registry.resolve(name)


@pytest.mark.parametrize("arch,newest_first", [("sm_80", "sm_80"), ("sm_86", "sm_86 sm_80"), ("sm_89", "sm_86 sm_80"),
                                               ("sm_90", "sm_90 sm_80"), ("sm_90a", "sm_90 sm_80"),
                                               ("sm_100", "sm_90 sm_80"), ("sm_120", "sm_120 sm_90 sm_80"),
                                               ("sm_121", "sm_120 sm_90 sm_80")])
def test_lookup_falls_back_to_the_nearest_older_arch(arch, newest_first):
    """`newest_first`: the table architectures `arch` may fall back to, nearest first; each variant
    takes the first its table has."""
    for variant in registry.VARIANTS.values():
        table_arch = next(a for a in newest_first.split() if (a, "float32") in variant.table)
        assert tuning.lookup(variant.table, arch, "float32") is variant.table[(table_arch, "float32")]


# The most shared memory a block may opt in to, by architecture (CUDA C++ Programming Guide,
# technical specifications per compute capability), and a bound on what the kernels' own
# __shared__ arrays add to a launch's dynamic bytes (ptxas 13.0: 12.1 KB for columns_lookback's
# 512 x 64 tile, the largest; 1.2 KB for lookback_scan's).
SHARED_OPT_IN_KB = {"sm_80": 163, "sm_86": 99, "sm_87": 163, "sm_89": 99, "sm_90": 227, "sm_100": 227,
                    "sm_120": 99, "sm_121": 99}
STATIC_SHARED_BYTES = 16 * 1024


@pytest.mark.parametrize("arch", sorted(SHARED_OPT_IN_KB))
def test_every_shape_an_arch_takes_fits_its_shared_memory(arch):
    """Else _kernels._prepare refuses the launch with UnsupportedError: an architecture that falls
    back to an entry tuned for more shared memory needs an entry of its own (tuning.py)."""
    for variant in registry.VARIANTS.values():
        for shape in variant.launch_shapes(arch, "float32"):
            for pass_shape in [kernel.shape_for(shape) for kernel in variant.pass_kernels] or [shape]:
                needed = variant.shared_bytes(pass_shape) + STATIC_SHARED_BYTES
                assert needed <= SHARED_OPT_IN_KB[arch] * 1024, (variant.name, arch, pass_shape, needed)


@pytest.mark.parametrize("arch", ["sm_70", "sm_75", "sm_52"])
def test_lookup_older_than_the_table(arch):
    for variant in registry.VARIANTS.values():
        with pytest.raises(rtscan.UnsupportedError, match=f"{arch}.*sm_80"):
            tuning.lookup(variant.table, arch, "float32")


def test_unsupported_is_an_rtscan_error_and_a_key_error():
    assert issubclass(rtscan.UnsupportedError, rtscan.RtscanError)
    assert issubclass(rtscan.UnsupportedError, KeyError)


def test_lookup_unknown_dtype():
    with pytest.raises(KeyError):
        tuning.lookup(registry.resolve("auto").table, "sm_90", "float64")


def test_lookup_bad_arch():
    with pytest.raises(ValueError):
        tuning.lookup(registry.resolve("auto").table, "ampere", "float32")


SM90_LARGEST_TILE = registry.resolve("auto").launch_shape("sm_90", "float32", 4, 1 << 40).tile


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
@pytest.mark.parametrize("vec", [1, 4])
@pytest.mark.parametrize("length", [1, 4096, SM90_LARGEST_TILE - 1, SM90_LARGEST_TILE, 2**28])
def test_launch_shapes_are_sound(arch, vec, length):
    """Each shape is one the import compiles, its shared memory matches its staged steps, the long
    shape goes only to 16-byte sequences that fill one of its tiles, and a scalar request always
    gets a scalar shape (a 16-byte request may too, when the variant has no 16-byte form)."""
    for variant in registry.VARIANTS.values():
        shape = variant.launch_shape(arch, "float32", vec, length)
        assert shape in variant.launch_shapes(arch, "float32")  # compiled
        assert 0 <= shape.register_items <= shape.items
        assert 0 <= variant.shared_bytes(shape) <= 227 * 1024
        assert shape.vec == vec or (vec == 4 and shape.vec == 1 and (shape.items % 4 or not variant.vector_steps))
        assert shape.walk_lanes in (1, 32) and 1 <= shape.segment_tiles <= 32
        assert shape.block_threads % 32 == 0 and 32 <= shape.block_threads and shape.threads <= 1024
        assert shape.items % shape.vec == 0 and shape.register_items % shape.vec == 0  # whole chunks
        assert shape.tile == shape.block_threads * shape.items
        expression = variant.name_expression(shape)
        assert expression.startswith(variant.template + "<") and f"{shape.block_threads}" in expression


def test_long_shapes_need_enough_steps_in_all():
    """sm_90's long shape leaves SMs idle up to 2^21 steps per launch (P205, P206: the short tile
    takes 2^21), and its large shape loses to the long one below 2^24 (tuning.py cites the runs): a
    tile's worth of steps is not enough. Since P161 the large shape is the long tile, with the
    one-level look-back, atomic polls and tickets chunks first."""
    variant = registry.resolve("auto")
    entry = rtscan.tuning.lookup(variant.table, "sm_90", "float32")
    large, long = (registry.entry_shape(entry[kind], 4) for kind in ("large", "long"))
    short = variant.launch_shape("sm_90", "float32", 4, 1)
    assert large.tile == long.tile > short.tile and (large.segment_tiles, long.segment_tiles) == (1, 32)
    assert (large.protocol_warp, long.protocol_warp, short.protocol_warp) == (1, 1, 0)  # P42: both long ones
    assert (large.atomic_polls, long.atomic_polls, short.atomic_polls) == (1, 0, 1)  # P86, P87: not on one wave
    assert variant.launch_shape("sm_90", "float32", 4, long.tile) == short
    assert variant.launch_shape("sm_90", "float32", 4, 2**20) == short
    assert variant.launch_shape("sm_90", "float32", 4, 2**21) == short
    assert variant.launch_shape("sm_90", "float32", 4, 32768, num_seqs=64) == short
    assert variant.launch_shape("sm_90", "float32", 4, 2**21 + 4) == long
    assert variant.launch_shape("sm_90", "float32", 4, 2**24 - 4) == long
    assert variant.launch_shape("sm_90", "float32", 4, 2**24) == large
    assert variant.launch_shape("sm_90", "float32", 4, 65536, num_seqs=64) == long
    assert variant.launch_shape("sm_90", "float32", 4, 2**19, num_seqs=32) == large  # rows past the batch shape's
    assert variant.launch_shape("sm_90", "float32", 4, 2**19, num_seqs=16) == long
    assert variant.launch_shape("sm_90", "float32", 1, 2**28) == variant.launch_shape("sm_90", "float32", 1, 1)


def test_sequences_that_fill_most_of_a_tile_take_its_shape():
    """A long or large shape takes sequences from 15/16 of its tile on (P57): 16384 steps fill 97 %
    of sm_90's long tile and take it; 12288 (73 %) do not (they take rows_12288's tile, one a row: P239)."""
    variant = registry.resolve("auto")
    entry = rtscan.tuning.lookup(variant.table, "sm_90", "float32")
    large, long = (registry.entry_shape(entry[kind], 4) for kind in ("large", "long"))
    short = variant.launch_shape("sm_90", "float32", 4, 1)
    assert variant.launch_shape("sm_90", "float32", 4, 16384, num_seqs=256) == long
    assert variant.launch_shape("sm_90", "float32", 4, 16384, num_seqs=4096) != large  # 83 % of the large tile
    assert variant.launch_kind("sm_90", "float32", 4, 12288, num_seqs=512)[0] == "rows_12288"
    least = -(-15 * long.tile // 16)
    assert variant.launch_shape("sm_90", "float32", 4, least, num_seqs=2**22 // least) == long
    assert variant.launch_shape("sm_90", "float32", 4, least - 1, num_seqs=2**22 // least) == short
    assert registry.fills_a_tile(15, 16) and not registry.fills_a_tile(14, 16)
    assert registry.tile_fill(28, 16) == 7 / 8 and registry.tile_fill(32, 16) == 1  # of two tiles
    assert registry.tile_fill(17, 16) == 17 / 32  # the first tile full, the second nearly empty


def test_batches_of_rows_the_batch_shape_bounds_take_it():
    """sm_90's batch shapes (P114-P119, P123, P164-P166, P168-P172): two sequences or more (many: 2048
    or more, long_batch: 128 or more), of at most 2^18 steps each (mid_batch and short_batch: 2^17),
    from 2^23 steps in all (short_batch: to 2^24, long_batch: from 2^25); mid_batch, the large kind's
    shape, for rows longer than one long tile (one_tile takes rows of one), up to 2047 rows (P207);
    long_batch for rows of 2^17-2^18, however many past 128; both only where their fill_edge (1.082)
    times the part of the long tiles a row fills is at least the part it fills of its rival's tile
    (the next kind's, before that kind's own edge);
    many, short_batch, over_wave (rows that fill a long tile, past one wave of them to 2^23 steps)
    and batch for the rest, batch only where 1.041 times the part of its tiles a row
    fills is at least the part of the short tile's and many only where 1.12 times it is, short_fill
    taking the others (P181-P186); the launches on either side keep their shapes."""
    variant = registry.resolve("auto")
    entry = rtscan.tuning.lookup(variant.table, "sm_90", "float32")
    batch, large, long = (registry.entry_shape(entry[kind], 4) for kind in ("batch", "large", "long"))

    def kind(length, sequences):
        return variant.launch_kind("sm_90", "float32", 4, length, sequences)[0]

    assert batch.chunks_first == large.chunks_first == 1 and long.chunks_first == 0  # large: P130
    for length, sequences in ((2**18, 64), (2**18, 32), (15000, 1500), (2**17 + 4, 200)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == batch, (length, sequences)
    mid_batch = registry.entry_shape(entry["mid_batch"], 4)  # the large kind's shape, rows of a long tile to 2^17
    assert mid_batch == large
    least = -(-15 * long.tile // 16)
    for length, sequences in ((65536, 512), (32768, 1024), (32768, 1023), (131072, 129), (65536, 256), (65536, 128),
                              (131072, 64), (131072, 128), (2 * long.tile - 4, 2**23 // long.tile), (2**17, 2047)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == mid_batch, (length, sequences)
    # Rows either side of fill_edge (P169-P175); from 2048 rows, many's (P207).
    for length, sequences, expected in (
            (40000, 3000, "many"), (40000, 1000, "batch"), (long.tile + 4, 600, "short_batch"),
            (60000, 512, "mid_batch"), (26016, 1000, "mid_batch"), (42604, 2048, "many"),
            (89840, 1000, "batch"), (89840, 128, "short_batch"), (155220, 512, "batch"),
            (5 * long.tile, 1000, "mid_batch"), (5 * long.tile + 4, 1000, "short_fill"),
            (11 * 8192, 1000, "batch"), (11 * 8192 + 4, 1000, "mid_batch"),
            # fill ratio 0.9256: long_batch at 1.082, batch at 1.08 (P175)
            (169416, 400, "long_batch"), (171904, 256, "long_batch"),
            # from 2048 rows many's, whatever the long tiles' fill (P207)
            (29508, 2048, "many"), (74360, 2048, "many"), (45368, 2048, "many")):
        assert kind(length, sequences) == expected, (length, sequences)
    short_batch = registry.entry_shape(entry["short_batch"], 4)  # the short tile chunks first, 2^23-2^24 steps
    assert short_batch == dataclasses.replace(registry.entry_shape(entry["short"], 4), chunks_first=1)
    for length, sequences in ((least - 4, 1024), (12289, 1024), (3840, 4096), (4096, 3000)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == short_batch, (length, sequences)
    # but rows of 4097-12288 steps take one tile a row, before short_batch and the batch tiles, however many steps
    # in all: two or three short tiles a row waited each on the one before (P237, P240, P242);
    # many keeps the rows whose batch tiles its fill_edge says are worth the row's own tile
    for length, sequences, expected in ((4097, 4000, "rows_6144"), (4500, 2000, "rows_6144"), (6144, 2700, "rows_6144"),
                                        (6148, 2000, "rows_8192"), (7680, 1100, "rows_8192"), (8192, 1024, "rows_8192"),
                                        (12000, 1024, "rows_12288"), (10000, 4000, "rows_12288"),
                                        (9000, 16384, "rows_12288"), (8192, 8192, "many"), (12288, 2048, "rows_12288")):
        assert kind(length, sequences) == expected, (length, sequences)
    # over_wave: the same shape, from 2^21 to 2^23 steps, for rows that fill a long tile, where the long
    # kind would take more than one wave of long tiles (264 on 132 SMs; P191-P194, P208, P211), and where
    # the short tiles are as full as the long ones (fill_edge 1.0: rows of two full long tiles fill nine
    # short ones to 0.917); one wave keeps the long kind, however many steps
    assert registry.entry_shape(entry["over_wave"], 4) == short_batch
    for length, sequences, expected in (
            (65536, 69, "over_wave"), (65536, 80, "over_wave"), (65536, 127, "over_wave"), (30000, 200, "over_wave"),
            (long.tile + 4, 400, "over_wave"), (70000, 100, "over_wave"), (65536, 68, "over_wave"),
            (65536, 67, "over_wave"), (20000, 200, "over_wave"), (17000, 250, "over_wave"), (66000, 66, "long"),
            (65536, 66, "long"), (17000, 132, "long"), (17000, 133, "over_wave"),
            (2 * long.tile, 133, "long"), (2 * long.tile, 152, "long"), (2 * long.tile, 176, "long"),
            (least - 4, 400, "short"), (5000, 1000, "rows_6144"), (5000, 200, "rows_6144"), (65536, 128, "mid_batch")):
        assert kind(length, sequences) == expected, (length, sequences)
    # short_fill: the same shape, where batch's tile is emptier than the short tile by more than its
    # fill_edge 1.041: fill ratios 1.034 (P182, P183) and 26/25 (a tie at 1.04, P186) on its one side, 1.047
    # (P182) on the other; the rows of ratio 1.037 and 1.0435, fourteen and twelve batch tiles, go to mid_batch
    assert registry.entry_shape(entry["short_fill"], 4) == short_batch
    for length, sequences in ((20000, 2047), (18432, 1000), (20480, 2000), (85504, 2000)):
        assert kind(length, sequences) == "short_fill", (length, sequences)
    for length, sequences in ((118784, 1500), (118784, 2000), (101432, 1000), (101436, 1000)):
        assert kind(length, sequences) == "batch", (length, sequences)
    # mid_batch weighs its tile against the batch tile, its rival, not against where batch sends the
    # launch: the long tile ran 1.5-8 % faster than the short one here (P182)
    for length, sequences in ((75776, 1500), (25088, 2047)):
        assert kind(length, sequences) == "mid_batch", (length, sequences)
    many = registry.entry_shape(entry["many"], 4)  # the same tile in sequence order, from 2048 sequences
    assert dataclasses.replace(many, chunks_first=1) == batch
    for length, sequences in ((8192, 4096), (least - 4, 2048), (40000, 3000), (32768, 2048), (65536, 2048),
                              (131072, 8192)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == many, (length, sequences)
    # many's fill_edge 1.12 against the short tile: fill ratios 1.111 and 1.06 stay, 1.143 and more move
    # (P184, P185), where batch's 1.041 would have moved all of them
    for length, sequences in ((34500, 3000), (34024, 4096), (68024, 2048)):
        assert kind(length, sequences) == "many", (length, sequences)
    for length, sequences in ((18000, 6000), (20000, 4096), (18432, 2048)):
        assert kind(length, sequences) == "short_fill", (length, sequences)
    # rows of at most 12288 steps: against their own tile, one a row (P242)
    for length, sequences in ((10000, 8192), (9000, 4096), (12024, 2048)):
        assert kind(length, sequences) == "rows_12288", (length, sequences)
    # from 2048 rows, rows of two long tiles 73-85 % full go to short_fill, where many's fill_edge sends
    # them: it ran 2-2.7 % faster than the long tile on 2048 x 26024 and even on 4096 x 27000 (P186); at
    # 2047 rows they take the long tile
    for length, sequences in ((26024, 2048), (27000, 2500)):
        assert kind(length, sequences) == "short_fill", (length, sequences)
    assert kind(25088, 2047) == "mid_batch"
    long_batch = registry.entry_shape(entry["long_batch"], 4)  # the long tile chunks first (P133)
    assert long_batch == dataclasses.replace(long, chunks_first=1, run_chunks=4)
    for length, sequences in ((2**18, 128), (2**18, 1024), (2**17 + 4096, 512), (200000, 256), (2**17 + 4, 2048),
                              (2**18, 4096)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == long_batch, (length, sequences)
    # under 2^25 steps in all, rows of 2^17, rows past 2^18
    for length, sequences in ((2**18, 64), (2**17, 512), (2**18 + 4, 2048)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) != long_batch, (length, sequences)
    assert variant.launch_shape("sm_90", "float32", 4, 65536, 64) == long  # 2^22 steps: one wave of long tiles
    assert variant.launch_shape("sm_90", "float32", 4, 2**19, 64) == large  # rows past to_length
    assert variant.launch_shape("sm_90", "float32", 4, 2**23, 1) == long  # one sequence
    assert variant.launch_shape("sm_90", "float32", 4, 4096, 8192) == variant.launch_shape("sm_90", "float32", 4, 1)
    assert variant.launch_shape("sm_90", "float32", 1, 65536, 256).vec == 1  # the scalar path: short
    assert {batch, many, mid_batch, short_batch, long_batch} <= set(variant.launch_shapes("sm_90", "float32"))


def test_rows_of_one_long_tile_take_it_in_any_batch():
    """sm_90's one_tile kind (P145): batches whose rows fill one long tile (15/16 of it to all of
    it) take the long tile with runs, whatever the batch shapes' bounds, past 2^21 steps in all (P206);
    rows one element past a 16-byte boundary too (the head counts: scan.py passes length + head)."""
    variant = registry.resolve("auto")
    entry = rtscan.tuning.lookup(variant.table, "sm_90", "float32")
    one_tile, long = (registry.entry_shape(entry[kind], 4) for kind in ("one_tile", "long"))
    assert one_tile == long and one_tile.run_chunks == 2
    for length, sequences in ((16384, 512), (16384, 1024), (16384, 4096), (16385, 1024), (16896, 2048), (15840, 600)):
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) == one_tile, (length, sequences)
    for length, sequences in ((16897, 1024), (15839, 1024), (16384, 128)):  # two tiles, too short, up to 2^21 steps
        assert variant.launch_shape("sm_90", "float32", 4, length, sequences) != one_tile, (length, sequences)


def test_every_tuning_entry_cites_its_source():
    for variant in registry.VARIANTS.values():
        for (arch, dtype), entry in variant.table.items():
            assert "short" in entry and set(entry) <= {*registry.SHAPE_KINDS, "short"}, f"{variant.name} {arch}/{dtype}"
            for kind, shape in entry.items():
                assert shape.get("source"), f"{variant.name} {arch}/{dtype} {kind} has no source"


def test_short_rows_take_a_tile_of_their_length():
    """sm_90's kinds for short rows (P213, P215, P217, P221-P224, P227): launches of two rows or more of at
    most 128 steps take packed rows, as many a warp as fit on the lanes their 16-byte vectors take; of longer rows, at most 3 x 2^17 steps in
    all or at most one wave of the tile, a tile of 4 steps a lane, the shortest that holds a row; larger
    batches of rows of at most 3072 steps a tile of the rows_ kinds, the shortest that holds the row (head
    counted), however little of it the row fills, rows of 129-256 steps four to a block, a warp each;
    rows of 1024 on 128 x 8 to 1024 rows, 64 x 16 from there; rows of 2049-3072 from 512 rows; rows of
    4097-6144 a 256 x 24 tile, from two rows (P235, P236), of 6145-8192 256 x 32, of 8193-12288 512 x 24
    (P238, P239), however many steps in all (P242). One sequence, rows past 12288 steps, and rows of
    2049-4096 steps outside the bounds keep the short tile."""
    variant = registry.resolve("auto")
    assert sorted(registry.SHAPE_KINDS) == sorted(set(registry.SHAPE_KINDS))
    for length, sequences, kind, threads, items in (
            (100, 2, "rows_128", 128, 4), (1000, 2, "small_1024", 256, 4), (4096, 2, "small_4096", 1024, 4),
            (3000, 128, "small_4096", 1024, 4), (500, 2, "small_512", 128, 4), (512, 768, "small_512", 128, 4),
            (200, 1536, "small_256", 64, 4), (2048, 192, "small_2048", 512, 4), (3000, 132, "small_4096", 1024, 4),
            (2048, 264, "small_2048", 512, 4), (128, 4224, "rows_128", 128, 4), (60, 2, "rows_128", 128, 4),
            (20, 3000, "rows_128", 128, 4), (8, 5000, "rows_128", 128, 4), (12, 5000, "rows_128", 128, 4),
            (40, 5000, "rows_128", 128, 4), (32, 5000, "rows_128", 128, 4), (33, 5000, "rows_128", 128, 4),
            (128, 131072, "rows_128", 128, 4), (100, 4300, "rows_128", 128, 4), (129, 4096, "rows_256", 128, 8),
            (256, 65536, "rows_256", 128, 8), (300, 4096, "rows_384", 32, 12), (512, 32768, "rows_512", 32, 16),
            (385, 3000, "rows_512", 32, 16), (640, 4096, "rows_768", 32, 24), (1024, 1024, "rows_1024_few", 128, 8),
            (769, 1024, "rows_1024_few", 128, 8), (1024, 1025, "rows_1024", 64, 16), (900, 16384, "rows_1024", 64, 16),
            (1300, 640, "rows_1536", 64, 24), (1536, 10922, "rows_1536", 64, 24), (1537, 512, "rows_2048", 128, 16),
            (2048, 8192, "rows_2048", 128, 16), (2049, 4096, "rows_3072", 128, 24), (3072, 512, "rows_3072", 128, 24),
            (4097, 2, "rows_6144", 256, 24), (6144, 200, "rows_6144", 256, 24), (5001, 1000, "rows_6144", 256, 24),
            (6145, 2, "rows_8192", 256, 32), (8192, 500, "rows_8192", 256, 32), (7000, 4000, "rows_8192", 256, 32),
            (8193, 2, "rows_12288", 512, 24), (12288, 600, "rows_12288", 512, 24)):
        chosen, shape = variant.launch_kind("sm_90", "float32", 4, length, sequences)
        assert (chosen, shape.block_threads, shape.items) == (kind, threads, items), (length, sequences)
        # Packed rows (P227): a row takes a lane a 4 steps, a warp as many rows as its 32 lanes hold, a block
        # four warps' rows. Row warps (P222): a row a warp.
        packed = {8: 64, 12: 40, 20: 24, 32: 16, 33: 12, 40: 12, 60: 8, 100: 4, 128: 4}
        rows_a_block = packed[length] if kind == "rows_128" else 4 if kind == "rows_256" else 1
        assert shape.sequences_per_tile == {"rows_128": 0, "rows_256": 4}.get(kind, 1)
        assert variant.rows_a_block(shape, length) == rows_a_block, (length, sequences)
        assert variant.tile_counts(shape, sequences, length) == (1, -(-sequences // rows_a_block))
    for length, sequences in ((1000, 1), (12289, 2), (5000, 1), (10000, 1), (2049, 300), (3000, 133), (3073, 4096)):
        assert variant.launch_kind("sm_90", "float32", 4, length, sequences)[0] == "short", (length, sequences)


def test_kinds_of_any_fill_take_rows_of_one_tile():
    """A kind that takes rows however little of its tile they fill (any_fill) must stop at its tile's
    length: past it, rows would take several nearly empty tiles each. A kind of row warps (lookback.cu's
    SEQUENCES_PER_TILE) must stop at one warp's span, which is all the kernel scans of a row."""
    for variant in registry.VARIANTS.values():
        for (arch, dtype), entry in variant.table.items():
            for kind, fields in entry.items():
                shape = registry.entry_shape(fields, 4) if kind in registry.SHAPE_KINDS or kind == "short" else None
                if fields.get("any_fill") or (shape is not None and variant.row_warps(shape)):
                    assert fields["to_length"] <= shape.steps_per_sequence, (variant.name, arch, kind)


def test_every_tuning_field_is_a_known_one():
    """Every field of every tuning entry is a LaunchShape field, a bound launch_shape reads, fill_edge
    or the source: a misspelt one would otherwise be ignored without a word."""
    shape_fields = {f.name for f in dataclasses.fields(registry.LaunchShape)} - {"vec"}
    routing = {"from_total_steps", "to_total_steps", "any_total_to_sequences", "from_sequences", "to_sequences",
               "from_length", "to_length", "fill_edge", "from_rival_tiles", "any_fill", "source"}
    for variant in registry.VARIANTS.values():
        for (arch, dtype), entry in variant.table.items():
            for kind, shape in entry.items():
                unread = set(shape) - shape_fields - routing
                assert not unread, f"{variant.name} {arch}/{dtype} {kind}: {unread}"


def test_public_variants_listing():
    listing = rtscan.variants()
    assert [v["name"] for v in listing] == list(registry.VARIANTS)
    assert {v["name"] for v in listing if v["auto"]} == {"lookback_regs", "columns_lookback"}
    for entry in listing:
        assert entry["description"] and entry["passes"] >= 1 and entry["tuning"]


def test_traffic_model():
    variant = registry.resolve("auto")
    assert variant.traffic_bytes(1000, 4) == 12000


# Pass 2 of a three-pass variant takes these through LaunchShape.carries; every other kernel leaves
# them out and assumes them 0.
CARRY_FIELDS = {"carry_threads": 0, "carry_items": 0}
# A tile of one sequence's steps: every variant but columns_lookback (lanes across sequences) and
# lookback.cu's (row warps), whose templates take sequences_per_tile.
ONE_SEQUENCE = {"sequences_per_tile": 1}


# What each kernel assumes for the launch-shape fields its template does not take
# (kernels_cu/hillis_steele.cu: one step per thread; both use tile_carry's warp walk over
# segments of 32 tiles, tile_state.cuh, run by their warp 0: no protocol warp).
# The three-pass kernels have no look-back: their placeholders say so (tuning.py).
NO_LOOKBACK = {"lookback_depth": 0, "register_items": 0, "walk_lanes": 1, "segment_tiles": 1, "protocol_warp": 0,
               "atomic_polls": 0, "chunks_first": 0, "run_chunks": 1}
FIXED_BY_THE_KERNEL = {
    "lookback_serial": dict(CARRY_FIELDS),
    "lookback_warp": dict(CARRY_FIELDS),
    "lookback_regs": dict(CARRY_FIELDS),
    "hillis_steele": {"items": 1, "register_items": 0, "walk_lanes": 32, "segment_tiles": 32, "protocol_warp": 0,
                      "chunks_first": 0, "run_chunks": 1, **CARRY_FIELDS, **ONE_SEQUENCE},
    "blelloch": {"register_items": 0, "walk_lanes": 32, "segment_tiles": 32, "protocol_warp": 0, "chunks_first": 0,
                 "run_chunks": 1, **CARRY_FIELDS, **ONE_SEQUENCE},
    "three_pass": dict(NO_LOOKBACK, **ONE_SEQUENCE),
    "three_pass_reduce": dict(NO_LOOKBACK, **ONE_SEQUENCE),
    # one step at a time, whatever the layout (kernels_cu/columns.cu)
    "columns": dict(NO_LOOKBACK, vec=1, **ONE_SEQUENCE),
    # one step a load, each lane walking its own sequence one level over tiles, tickets chunk by
    # chunk over groups of lanes (columns_lookback_index.cuh), which the field does not choose
    "columns_lookback": {"vec": 1, "walk_lanes": 1, "segment_tiles": 1, "protocol_warp": 0, "chunks_first": 0,
                         "run_chunks": 1, **CARRY_FIELDS},
}


@pytest.mark.parametrize("name", sorted(FIXED_BY_THE_KERNEL))
def test_fields_a_kernel_does_not_take_have_the_values_it_assumes(name):
    variant = registry.resolve(name)
    fixed = FIXED_BY_THE_KERNEL[name]
    assert not set(fixed) & set(variant.arguments)
    for arch in ("sm_80", "sm_90", "sm_100"):
        for shape in variant.launch_shapes(arch, "float32"):
            assert {field: getattr(shape, field) for field in fixed} == fixed, (arch, shape)


@pytest.mark.parametrize("name,first,last", [("three_pass", "tile_pairs", "apply_pairs"),
                                             ("three_pass_reduce", "tile_aggregates", "rescan")])
def test_three_pass_variants_name_one_kernel_per_pass(name, first, last):
    variant = registry.resolve(name)
    assert variant.passes == 3 == len(variant.pass_kernels) and variant.source == "three_pass.cu"
    assert [k.template for k in variant.pass_kernels] == [f"rtscan::three_pass_{first}", "rtscan::three_pass_carries",
                                                          f"rtscan::three_pass_{last}"]
    assert [k.grid for k in variant.pass_kernels] == ["tiles", "sequences", "tiles"]
    assert [k.range_name.split(" (")[0] for k in variant.pass_kernels] == [f"{name} pass {i}" for i in (1, 2, 3)]
    assert variant.keeps_pairs == (name == "three_pass")
    for arch in ("sm_80", "sm_90", "sm_100"):
        for shape in variant.launch_shapes(arch, "float32"):
            expressions = variant.name_expressions(shape)
            assert expressions[0] == variant.name_expression(shape)
            assert expressions[1] == f"rtscan::three_pass_carries<{shape.block_threads}, {shape.items}, " \
                                     f"{shape.min_blocks}>"
            assert expressions[2] == expressions[0].replace(first, last)
    # The scalar and 16-byte shapes share pass 2's kernel: one program instantiates it once.
    shapes = variant.launch_shapes("sm_90", "float32")
    assert len(variant.expressions(shapes)) == 2 * len(shapes) + 1


def test_listing_gives_each_variant_its_device_traffic():
    listing = {entry["name"]: entry for entry in rtscan.variants()}
    assert listing["three_pass"]["traffic_bytes_per_element"].startswith("7 * itemsize")
    assert listing["three_pass_reduce"]["traffic_bytes_per_element"].startswith("5 * itemsize")
    assert listing["lookback_regs"]["traffic_bytes_per_element"].startswith("3 * itemsize")


def test_every_field_left_out_of_a_template_is_pinned():
    fields = set(registry.LaunchShape.__dataclass_fields__)
    for variant in registry.VARIANTS.values():
        left_out = fields - set(variant.arguments)
        if any(kernel.on_carries for kernel in variant.pass_kernels):
            left_out -= set(CARRY_FIELDS)
        assert left_out <= set(FIXED_BY_THE_KERNEL.get(variant.name, {})), (
            f"{variant.name} ignores {sorted(left_out)} without saying what it assumes")


def test_pass_range_names_are_plain_for_nsight():
    """ncu --nvtx-include reads "/", "@" and "]" as syntax, so a pass's NVTX range name has none."""
    for variant in registry.VARIANTS.values():
        for kernel in variant.pass_kernels:
            assert not set(kernel.range_name) & set("/@]"), kernel.range_name


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", ["lookback_regs", "lookback_serial", "lookback_warp"])
def test_mirror_is_built_for_every_tuned_shape(name, arch):
    """tests/test_mirrors.py's GPU-vs-mirror test skips a launch shape the mirror lacks; on the
    architectures the tuning table covers none may be missing, or a retune would silently drop
    that check (no compiler needed, so this cannot be skipped with it)."""
    import _mirrors
    from test_mirrors import SHAPES

    for shape in _kernels.shapes_for(registry.resolve(name), arch):
        wanted = _mirrors.launch_key(shape)
        assert wanted in SHAPES.values(), f"{name} on {arch} launches {wanted}: add it to SHAPES and the mirror"


def test_any_total_lifts_only_the_launch_thresholds():
    """What the GPU tests and the sanitizer cases run: the one_tile, mid_batch, long_batch, many, short_batch,
    batch, large and long shapes from one of their tiles on, whatever the launch's total; everything else as
    tuned (over_wave's bounds, from_total_steps and from_rival_tiles, are lifted too, but short_batch, the
    same shape, comes first)."""
    variant = registry.resolve("auto")
    entry = tuning.lookup(variant.table, "sm_90", "float32")
    lifted = registry.any_total(entry)
    sizes = ("from_total_steps", "from_rival_tiles")
    assert all(not set(sizes) & set(lifted[kind]) for kind in registry.SHAPE_KINDS if kind in lifted)
    assert {kind: {k: v for k, v in shape.items() if k not in sizes} for kind, shape in entry.items()} == lifted
    assert "from_total_steps" in entry["long"] and "from_rival_tiles" in entry["over_wave"]  # the entry is left alone
    for blelloch_entry in registry.resolve("blelloch").table.values():
        assert registry.any_total(blelloch_entry) == blelloch_entry


@pytest.mark.parametrize("length,lifted,kind", [(66000, "any_total", "mid_batch"), (13000, "any_total", "short_batch"),
                                               (140000, "any_total", "batch"),
                                               (140000, "long_batch", "long_batch"), (300000, "any_total", "large"),
                                               (5300000, "any_total", "large"), (1048580, None, "long"),
                                               (10001, "rows", "rows_12288"), (7000, "rows", "rows_8192"),
                                               (5001, "rows", "rows_6144"),
                                               (3072, "rows", "rows_3072"), (2048, "rows", "rows_2048"),
                                               (1536, "rows", "rows_1536"),
                                               (1024, "rows", "rows_1024"), (1024, "few_rows", "rows_1024_few"),
                                               (768, "rows", "rows_768"), (512, "rows", "rows_512"),
                                               (384, "rows", "rows_384"),
                                               (256, "rows", "rows_256"), (128, "rows", "rows_128"),
                                               (64, "rows", "rows_128"), (32, "rows", "rows_128"),
                                               (20, "rows", "rows_128"), (8, "rows", "rows_128"),
                                               (10, "rows", "rows_128"), (100, "rows", "rows_128"),
                                               (50, "head", "rows_128"),
                                               (4000, "plain", "small_4096"), (2048, "plain", "small_2048"),
                                               (256, "plain", "small_256")])
def test_sanitizer_cases_reach_the_shapes_they_name(length, lifted, kind):
    """profiling/sanitize.sh's cases on sm_90 (two sequences of `length`, lifted as
    sanitize_case.py's third argument `lifted` lifts them; None: the loop over every variant, "plain": a
    case of its own with the tuning as it is, "few_rows": without the small_ kinds, "rows": without
    those and the _few ones) run the shapes its comments name, so that a retune cannot quietly drop a
    shape from the tools."""
    variant = registry.resolve("auto")
    entry = tuning.lookup(variant.table, "sm_90", "float32")
    any_sequences = ("long_batch",) if lifted == "long_batch" else ()
    if lifted in ("rows", "few_rows"):
        chosen_entry = registry.as_a_batch(entry, few_rows=lifted == "few_rows")
    else:
        chosen_entry = entry if lifted in (None, "plain") else registry.any_total(entry, any_sequences)
    table = {("sm_90", "float32"): chosen_entry}
    chosen = dataclasses.replace(variant, table=table).launch_shape("sm_90", "float32", 4, length, 2)
    assert chosen == registry.entry_shape(entry[kind], 4)
    case = {None: f"for length in 4100 {length}; do", "plain": f'echo "$tool lookback_regs {length}"'}.get(
        lifted, f"lookback_regs {length} {lifted}")
    assert case in (Path(__file__).parents[1] / "profiling" / "sanitize.sh").read_text()


@pytest.mark.parametrize("kind", ["long", "many"])
def test_sanitizer_case_reaches_its_time_major_tile(kind):
    """sanitize.sh's `columns_lookback 3000 long` and `3000 many`: with the kind's sequence count lifted,
    its two rows and its time-major batches of 100 and 12 sequences take its tile (the long tile, P249's
    256 x 32; the many kind's, the same at four blocks an SM, P258)."""
    variant = registry.resolve("columns_lookback")
    entry = tuning.lookup(variant.table, "sm_90", "float32")
    lifted = dataclasses.replace(variant, table={("sm_90", "float32"): registry.any_total(entry, (kind,))})
    for sequences in (2, 100, 12):
        assert lifted.launch_shape("sm_90", "float32", 1, 3000, sequences) == registry.entry_shape(entry[kind], 1)
    assert f"columns_lookback 3000 {kind}" in (Path(__file__).parents[1] / "profiling" / "sanitize.sh").read_text()


@pytest.mark.parametrize("shape,in_strides,out_strides,dim,expected", [
    ((1000, 64), (64, 1), (64, 1), 0, True),
    ((1000, 256), (256, 1), (256, 1), 0, True),
    ((1000, 64), (64, 1), (1, 1000), 0, False),     # out keeps its sequences contiguous instead
    ((1000, 64), (128, 2), (128, 2), 0, False),     # neighbouring sequences two elements apart
    ((4, 1000, 16), (16000, 16, 1), (16000, 16, 1), 1, True),
    ((4, 1000, 8), (8000, 8, 1), (8000, 8, 1), 1, True),
    ((8, 1000, 4), (4000, 4, 1), (4000, 4, 1), 1, False),  # 4 neighbours, though 32 sequences
    ((64, 1000), (1000, 1), (1000, 1), 1, False),   # contiguous sequences
    ((1000,), (1,), (1,), 0, False),
])
def test_auto_gives_columns_lookback_the_time_major_batches(shape, in_strides, out_strides, dim, expected):
    from rtscan import _layout

    layout = _layout.plan(shape, in_strides, out_strides, dim, False).layout
    assert registry.columns_suits(layout) is expected
    assert registry.auto_variant(layout).name == ("columns_lookback" if expected else registry.AUTO)


def test_columns_lookback_takes_its_long_shape_from_its_sequences():
    """The long tile from 2048 sequences whatever the steps, and from 1024 where the launch has 2^24 (the
    large kind, P252); the short tile below either; from 8192 the long tile at four blocks an SM (the many
    kind, P258)."""
    variant = registry.resolve("columns_lookback")
    entry = variant.table[("sm_90", "float32")]
    many, fewer, steps = (entry["long"]["from_sequences"], entry["large"]["from_sequences"],
                          entry["large"]["from_total_steps"])
    long, short, most = (registry.entry_shape(entry[kind], 1) for kind in ("long", "short", "many"))
    assert long != short and registry.entry_shape(entry["large"], 1) == long
    assert (most.block_threads, most.items, most.min_blocks) == (long.block_threads, long.items, 4)
    assert variant.launch_shape("sm_90", "float32", 1, 10, entry["many"]["from_sequences"]) == most
    assert variant.launch_shape("sm_90", "float32", 1, 10, entry["many"]["from_sequences"] - 1) == long
    assert variant.launch_shape("sm_90", "float32", 1, 10, many) == long
    assert variant.launch_shape("sm_90", "float32", 1, -(-steps // fewer), fewer) == long
    assert variant.launch_shape("sm_90", "float32", 1, (steps - 1) // (many - 1), many - 1) == short
    assert variant.launch_shape("sm_90", "float32", 1, 10**6, fewer - 1) == short


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_100"])
def test_columns_lookback_takes_tiles_of_fewer_sequences_for_few(arch):
    """Up to 8 sequences a tile of 8, up to 16 a tile of 16, else of 32; the tile's steps a
    sequence grow as its sequences shrink (two or four lanes a sequence)."""
    variant = registry.resolve("columns_lookback")
    tiles = {n: variant.launch_shape(arch, "float32", 1, 10**6, n).sequences_per_tile for n in (1, 8, 9, 16, 17, 5000)}
    assert tiles == {1: 8, 8: 8, 9: 16, 16: 16, 17: 32, 5000: 32}
    few = variant.launch_shape(arch, "float32", 1, 10**6, 16)
    assert few.steps_per_sequence == few.block_threads * few.items // 16
    assert variant.tile_counts(few, 16, 10**6) == (-(-10**6 // few.steps_per_sequence),) * 2



def test_runs_keep_prefixes_beside_the_staged_steps_on_the_16_byte_path_only():
    """lookback.cu's RUN_CHUNKS: the dynamic shared memory adds 8 bytes a thread for each register
    chunk and each run (the kept prefixes), and the scalar form of an entry with runs has none."""
    entry = {"block_threads": 352, "items": 48, "min_blocks": 2, "lookback_depth": 1, "register_items": 16,
             "walk_lanes": 32, "segment_tiles": 32, "protocol_warp": 1}
    staged = 2 * 4 * 352 * 32
    assert registry.staged_tile_bytes(registry.entry_shape(entry, 4)) == staged
    for run, runs in ((2, 4), (4, 2), (8, 1)):
        with_runs = dict(entry, run_chunks=run)
        assert registry.staged_tile_bytes(registry.entry_shape(with_runs, 4)) == staged + 8 * 352 * (4 + runs)
        assert registry.entry_shape(with_runs, 1).run_chunks == 1
        assert registry.staged_tile_bytes(registry.entry_shape(with_runs, 1)) == staged
