"""Launch parameters per GPU architecture and dtype: data, each entry citing what chose it.

Lookup falls back to the nearest older architecture present in the table, so a new GPU runs with
its predecessor's parameters until a sweep on it adds an entry. An architecture that allows a block
less shared memory than its predecessor's shapes need (sm_86, sm_120: 99 KB) has an entry of its own,
unmeasured, with shapes that fit (tests/test_registry.py checks every architecture's).
"""

from __future__ import annotations

import functools
import re

from .errors import UnsupportedError

# (arch, dtype) -> launch shapes of the `lookback_regs` kernel by kind, each citing its evidence:
#   "long":  for sequences that fill a long tile (15/16 of one or more: registry.fills_a_tile) on
#            the 16-byte path, in launches of at least `from_total_steps` steps (below that its
#            few tiles leave SMs idle); holds as many tile bytes per SM as shared memory and
#            registers allow, because the look-back's waiting blocks bound the rate
#            (profiling/PREDICTIONS.md, P1-P6);
#   "large": optional, as "long" but for launches of at least its own `from_total_steps`, where a
#            shape that loses on smaller launches wins (tried before "long"); on sm_90 the long tile
#            with the one-level look-back over tiles, which pays once a launch holds several waves of
#            tiles and loses on one wave (P39, P48, P49), atomic polls and tickets chunks first (a
#            larger tile without runs until P161);
#   "one_tile": optional, tried first: batches whose rows fit one of its tiles (from 15/16 of it:
#            registry.fills_a_tile), whose tiles then need no look-back at all (sm_90: the long
#            tile with runs, which beats the batch tiles there);
#   "mid_batch": optional, tried next: as "batch" below, for rows that fill one of its tiles, up to
#            its `to_length` (sm_90: the large kind's shape, for batches of rows longer than a long
#            tile, whose shorter ones one_tile takes, to 2^17 steps, from 2^23 in all, up to 2047
#            rows, where its fill_edge says its tiles' fill is worth the other tile's; P164-P166,
#            P168-P175, P207);
#   "long_batch": optional, tried next: as "batch", for rows of `from_length` to `to_length` steps
#            (sm_90: the long tile, chunks first, for rows of 2^17-2^18 steps from 2^25 in all,
#            however many rows past 128, with mid_batch's fill_edge: P133, P172-P175);
#   "many":  optional, tried next: as "batch", from more sequences, where the memory's locality
#            matters more than the tiles' waits (sm_90: the batch tile in sequence order, from 2048
#            rows, for the rows the kinds before it leave: up to 2^17 steps (P207), too short for
#            one_tile, and of long_batch's rows those its fill_edge refuses), where its own fill_edge
#            says its tiles' fill is worth the short tile's;
#   the kinds of registry.LONG_ROWS_KINDS, tried next: rows_ kinds (below) for rows of 4097-12288 steps, one
#            tile a row, however many steps in all, where the kinds after them would take two or three tiles a
#            row, each waiting on the one before (P235-P242);
#   "short_batch": optional, tried next: as "batch", up to its `to_total_steps` steps in all (sm_90:
#            the short tile, chunks first, for batches of 2^23-2^24 steps of rows the kinds before it
#            leave);
#   "over_wave": optional, tried next: as "batch", up to its `to_total_steps` (sm_90: short_batch's shape
#            for rows that fill a long tile, from 2^21 steps to 2^23 where the long kind would take more
#            than one wave of long tiles (its from_rival_tiles), whose part-filled last wave costs it,
#            and where its fill_edge says the short tiles are as full as the long ones: P191-P194,
#            P208, P211);
#   "batch": optional, tried next: for launches of at least `from_sequences` sequences of at most
#            `to_length` steps (and its `from_total_steps` in all), whose tiles wait on their own
#            sequence's earlier tiles; on sm_90 short tiles at two blocks an SM with tickets chunk
#            by chunk across the sequences ("chunks_first": 1, kernels_cu/seq_layout.cuh), so that a
#            tile's predecessors were drawn num_seqs tickets earlier (P114-P116), where its fill_edge
#            says its tiles' fill is worth the short tile's;
#   "short_fill": optional, tried next: as "batch", for the launches batch and many leave by their
#            fill_edge (sm_90: short_batch's shape for rows that fill the batch tile, within its
#            bounds, where the short tile is more than 4.1 % fuller than the batch tile, or more than
#            12 % fuller than many's in sequence order: P181-P186);
#   the "small_" and "rows_" kinds (registry.ROWS_KINDS): optional, tried after every other kind (no
#            other tile is short enough for their rows; but LONG_ROWS_KINDS, above), in ROWS_KINDS' order:
#            for batches of rows of at most `to_length` steps, each row one tile, the shortest that holds it
#            (`any_fill`: however little of it the row fills). sm_90: small_ for launches of up to 3 x 2^17 steps or
#            of rows that fit one wave of its tiles, 4 steps a lane on 64 to 1024 threads (one tile's
#            latency: P217, P221); rows_ above, rows of up to 3072 steps, up to 256 several to a block
#            (row warps, P222, P223; rows of at most 128 steps packed to the lanes they take, P227, and
#            those take them in small launches too, P224),
#            where the short tile ran rows of 128-3072 steps one a mostly empty tile at 0.03-0.73 of the
#            copy (P213, P215, P218); and rows of 4097-12288 steps, one tile a row in place of two or
#            three short ones, each waiting on the one before (P235-P239);
#   "short": for shorter sequences (under 15/16 of a long tile: P57 measured 73 % full tiles losing
#            5-18 %), and for the scalar path (strided or misaligned), whose registers the long
#            shape would spill.
# "fill_edge" (optional): what the kind's tile is worth at equal fill against its rival's, the next kind
# whose bounds hold the launch and whose tile a row fills (that kind's own edge not applied); the kind
# takes the launch only where the part of its tiles a row fills (registry.tile_fill, the last tile's
# empty part counted) times this edge is at least the part of the rival's tile the row fills, even where
# the rival then refuses the launch by its own edge (P186). A launch the kind refuses goes where the
# kinds after it send it. Rivals are taken before their own edges because an edge
# is measured against one rival: mid_batch's 1.082 against the batch tile holds from 300 to 700 rows,
# while against the short tile the long tile was worth more the more rows (even at 300 rows, 8 % ahead
# at 1500 where the fills gave the short tile 1.086: P182).
# "from_rival_tiles" (optional): a bound, not an edge: the kind takes a launch only where its rival (as for
# fill_edge) would take at least this many tiles (over_wave: more than one wave of long tiles, P211).
# "atomic_polls" (default 0) is how a shape's look-back polls (kernels_cu/tile_state.cuh,
# poll_relaxed_gpu): 1, by atomics, where another block's copies run on the SM while it waits; 0, by
# strong loads, where the poll's round trip is most of the wait (launches of about one wave).
_ATOMIC_POLLS_SM90 = "an A/B on an H200, 2026-11-30 (P86, P87; profiling/results/h200/p86-ab-2026-11-30.txt, p87-*.txt)"
# The 256-thread tiles below (short, short_batch, short_fill, batch, many) were measured, until
# P201, with their staging 16 bytes off a 128-byte boundary; aligned, they run 3-14 % faster
# (profiling/NOTES.md, items 121-124). Measured again since: the long kind's and one_tile's lower
# bound (P204-P206: 2^21 steps now go to the short tile), many against mid_batch (P207: from 2048
# rows, many), the band past one wave of long tiles (P208, P211: over_wave); one_tile on rows of 16384,
# mid_batch on 512 x 32768, short_batch on 4096 x 4096 and the long kind on 64 x 65536 held (P204's
# probe, profiling/results/h200/probe-bounds-2026-12-01-30.txt), long_batch held by P209's criterion
# but no more than even (the batch tile 0-2.4 % ahead at 128-512 rows). Not yet: short_batch's and
# short_fill's bounds.
_SHORT_SM90 = {
    "block_threads": 256, "items": 16, "min_blocks": 3, "lookback_depth": 1, "register_items": 0,
    "walk_lanes": 32, "segment_tiles": 32,
    "source": "hand sweep on an H200, 2026-11-29, profiling/results/h200/handsweep-2026-11-29.txt: "
              "fastest of 7 shapes at 2^28 then (0.53 of copy); with one tile per sequence it runs at "
              "1.01-1.02 of copy (65536 x 4096 and 8192 x 4096, results/h200/shapes-2026-11-29.txt)",
}
# sm_90's short tile as its batches take it: atomic polls, tickets chunk by chunk (short_batch, short_fill).
_SHORT_BATCH_SM90 = dict(_SHORT_SM90, atomic_polls=1, chunks_first=1)
# The tile of sm_90's many and batch shapes: 8192 steps, all staged in shared memory (three blocks
# an SM fit), for batches of rows up to 2^18 steps from 2^23 steps in all.
_BATCH_TILE_SM90 = {
    "block_threads": 256, "items": 32, "min_blocks": 2, "lookback_depth": 1, "register_items": 0,
    "walk_lanes": 32, "segment_tiles": 32, "atomic_polls": 1, "from_total_steps": 1 << 23, "to_length": 1 << 18,
}
# sm_90's tiles for short rows (P213, P215), one a row, each taking any row it holds (the shortest
# that does, registry.ROWS_KINDS): no register chunks; a row of one tile never polls, so the
# look-back fields are the short tile's. What pays is the bytes an SM holds in flight, blocks x tile:
# up to 256 steps several rows a block (an SM takes at most 32 blocks), to 128 as many a warp as fit,
# one warp a tile at 32 blocks an SM up to 768 steps, then as many blocks as spill-free registers (64 a
# thread at 1024 threads an SM) and shared memory allow.
_ROWS_SM90 = {"lookback_depth": 1, "register_items": 0, "walk_lanes": 32, "segment_tiles": 32, "from_sequences": 2,
              "any_fill": True}
_P213 = ("sweep.py on an H200, 2026-12-02, each tile forced on rows of its length, 2^24 steps in all (P213, "
         "profiling/results/h200/shortrows-2026-12-02-31.txt): rows of 2048 on 128 x 16 0.97 of copy (256 x 8 "
         "0.85), rows of 1024 on 128 x 8 0.89 (256 x 4 0.50), rows of 512 on 128 x 4 0.50, where the short tile "
         "ran them at 0.58, 0.28 and 0.14. auto's A/B, two rounds (P213, profiling/results/h200/p213-ab-2026-12-02-31"
         ".txt), scan time: 16384 x 1024 176.2/175.6 -> 55.2/55.7 us, 2048 x 1024 24.8/24.7 -> 7.2/7.2, 16384 x 1000 "
         "178.7/177.4 -> 57.0/57.2, 8192 x 2048 85.2/84.9 -> 50.7/50.4, 1024 x 2048 12.6/12.6 -> 6.2/6.2, 32768 x 512 "
         "361.0/361.9 -> 74.3/74.4, 131072 x 512 1434.9/1435.1 -> 286.9/286.9")
_P215 = ("sweep.py on an H200, 2026-12-02, each tile forced on rows of its length, 2^24 steps in all (P214, P215; "
         "profiling/results/h200/p214-sweep-, p215-sweep-2026-12-02-32.txt): rows of 128 on 32 x 4 at 32 blocks an SM "
         "0.53 of copy; of 256 on 32 x 8 at 32 0.82 (64 x 4 at 16 0.56); of 512 on 32 x 16 at 32 0.97 (64 x 8 at 16 "
         "0.83, 128 x 4 at 8 0.66); of 1024 on 64 x 16 at 16 0.98 (32 x 32, 22 resident, 0.92; 128 x 8 at 8 0.89). "
         "auto's A/B against the tiles before, two rounds (profiling/results/h200/p215-ab-2026-12-02-32.txt), scan "
         "time: 131072 x 128 1463.6 -> 93.0 us, 65536 x 256 726.6 -> 59.2-59.5, 43690 x 384 482 -> 50.5, 32768 x 512 "
         "74.0 -> 50.4, 21845 x 768 236 -> 50.8-50.9, 16384 x 1024 54.8-55.1 -> 50.3, 10922 x 1536 113 -> 50.8-50.9, "
         "rows between the tiles (200, 300, 450, 640, 900, 1300, 1800 steps) 1.6-9.8x")
_P217 = ("sweep.py on an H200, 2026-12-02, 2 and 32 rows of 512-2048 steps (P217, profiling/results/h200/"
         "p217-sweep-2026-12-02-32.txt): one tile a row took 2.71-3.08 us at 4 steps a lane, 3.02-3.14 at 8, "
         "3.59-3.76 at 16. auto's A/B, two rounds (profiling/results/h200/p217-ab-2026-12-02-32.txt), scan time: "
         "2 x 500 5.1-5.2 -> 3.0 us, 32 x 500 5.4-5.5 -> 3.1, 2 x 1500 4.7 -> 3.2, 2 x 3000 4.3-4.4 -> 3.6-3.7, "
         "128 x 3000 4.7 -> 4.1, 256 x 1500 5.3 -> 4.0, 64 x 4096 3.9 -> 3.8; but near 2^20 steps behind "
         "(1024 x 1024 4.3 -> 5.7, 300 x 3000 5.9 -> 9.4-9.5, 256 x 4096 5.0 -> 7.2): bounded at 3 x 2^17 steps, just "
         "above the largest launch measured ahead (128 x 3000, 384,000 steps)")
_P221 = ("a wave of its tiles as a bound besides the steps: auto's A/B on an H200, two rounds (P220, P221; "
         "profiling/results/h200/p220-ab-, p221-ab-2026-12-02-33.txt), scan time: 900 x 512 4.0 -> 3.3 us, 1000 x "
         "480 4.3 -> 3.7, 240 x 1800 4.4 -> 3.8, 130 x 3300 4.7 -> 4.1, 230 x 2048 4.0-4.1 -> 3.6-3.7, 110 x 4096 and "
         "450 x 1024 even to +3 %; a bound of a wave alone lost past a wave to the 24-step rows_ tiles (600 x 600 "
         "5.3 -> 5.5)")
_P222 = ("row warps, a row a warp (lookback.cu's SEQUENCES_PER_TILE): auto's A/B on an H200, two rounds (P222, "
         "profiling/results/h200/p222-ab-2026-12-02-33.txt), scan time against one-warp tiles (32 x 4, 32 x 8 at 32 "
         "blocks an SM): 131072 x 128 92.8-93.1 -> 51.4-51.8 us (0.53 -> 0.95 of copy), 262144 x 64 231 -> 144, "
         "100000 x 100 89.6 -> 58.8, 8192 x 128 7.8 -> 4.4, 65536 x 256 60.0-60.2 -> 49.6-49.8, 50000 x 200 58.0 -> "
         "39.5-39.9, 4096 x 256 5.7 -> 3.8; blocks of 4 rows ran rows of 128 2-5 % ahead of blocks of 2 (64 x 4 at "
         "32), rows of 256 even (64 x 8 at 24)")
_P223 = ("rows of 16 and 8 lanes (row warps of part of a warp): auto's A/B on an H200, two rounds (P223, profiling/"
         "results/h200/p223-ab-2026-12-02-33.txt), scan time against rows_128's warps: 262144 x 64 144.5 -> 50.3 us "
         "(0.34 -> 0.97 of copy), 524288 x 32 285.7 -> 49.5 (0.17 -> 0.99), 600000 x 20 348.4 -> 80.6, 200000 x 50 "
         "122 -> 64.5, 65536 x 64 37.6 -> 13.8, 16384 x 64 10.5 -> 4.2")

_P227 = ("packed rows, as many a warp as fit on the lanes their spans take: auto's A/B on an H200, two rounds (P227, "
         "profiling/results/h200/p227-ab-2026-12-02-34.txt), scan time against rows_32, rows_64 and rows_128's "
         "power-of-two lanes: 1000000 x 8 144.2-144.6 -> 24.5-24.6 us, 1000000 x 12 132.2-132.7 -> 49.8-49.9, 600000 x "
         "20 80.7-81.0 -> 50.6 (0.49 -> 0.80 of copy), 300000 x 40 90.6-91.0 -> 51.3-51.4, 400000 x 24 54.5-54.8 -> "
         "40.5-41.1, 200000 x 60 56.5-56.9 -> 51.1; 131072 x 128 51.3-51.7 -> 48.9-49.0, 262144 x 64 +3-4 %, 524288 x "
         "32 even; 200000 x 50 (each row from its 16 bytes, two a warp either way) 64.3-64.7 -> 66.8-67.0, the one "
         "loss")
# The kernel since (not a choice of this table): lanes that hold no step skip the one-step loops (P228).
_P228 = ("and since P228 (lanes holding no step skip the one-step loops; profiling/results/h200/"
         "p228-ab-2026-12-02-35.txt, two rounds): 600000 x 20 50.0-50.1 -> 37.2 us (1.05-1.06 of copy), rows of 12, "
         "24, 40 and 60 1.33-1.36x faster, 100000 x 100 1.28-1.29x, 200000 x 50 1.09x, 524288 x 32 and 1000000 x 8 "
         "within 1.5 %")
# And since P231 (the one-step loops at unit stride), P232 (_scan.prepare: rows of 65-100 from their 16 bytes)
# and P233 (the longest row head passed in the layout).
_P231_P233 = ("P231: 200000 x 50 60.5-60.6 -> 51.0-51.6 us, 1000000 x 10 58.9-59.6 -> 50.2-50.7, 300000 x 30 45.1 -> "
              "38.4-38.6, no control behind by over 1.5 % in both rounds; P232: 100000 x 100 44.5-44.7 -> 36.6 (0.92 "
              "of copy), 147000 x 68 65.2-65.3 -> 51.1-51.3, 120000 x 84 53.9-54.0 -> 42.5-42.7 (profiling/results/"
              "h200/p231-p232-ab-2026-12-02-36.txt, two rounds each); P233: rows with a head 1.04-1.08x (200000 x 50 "
              "51.1-51.5 -> 48.4-48.6, 150000 x 66 70.3-70.7 -> 65.2-65.3), 100000 x 100 -1 to -2 % "
              "(p233-ab-2026-12-02-36.txt)")


def _rows(threads: int, items: int, min_blocks: int, source: str, rows_a_block: int = 1, **bounds) -> dict:
    """A rows kind's entry: a tile of `threads` x `items` steps, taking rows up to its length, within
    any further `bounds`; with `rows_a_block`, a block of that many rows of threads x items / rows_a_block
    steps at most, a warp each; with 0, packed rows of at most a warp's span, as many a warp as fit
    (lookback.cu's SEQUENCES_PER_TILE)."""
    row_warps = {"sequences_per_tile": rows_a_block} if rows_a_block != 1 else {}
    to_length = threads * items // rows_a_block if rows_a_block else 32 * items
    return dict(_ROWS_SM90, block_threads=threads, items=items, min_blocks=min_blocks,
                to_length=to_length, source=source, **row_warps, **bounds)


# sm_90's long tile: 352 x 48 with a protocol warp, the two-level look-back, strong-load polls.
_LONG_TILE_SM90 = {"block_threads": 352, "items": 48, "min_blocks": 2, "lookback_depth": 1, "register_items": 16,
                   "walk_lanes": 32, "segment_tiles": 32, "protocol_warp": 1}
# sm_90's large shape since P161, also its mid_batch: the long tile with runs of 2, the one-level
# look-back over tiles, atomic polls, tickets chunks first.
_LARGE_SM90 = {**_LONG_TILE_SM90, "segment_tiles": 1, "atomic_polls": 1, "chunks_first": 1, "run_chunks": 2}
_P140 = ("sweep.py on an H200, 2026-12-01, two rounds (P140; profiling/results/h200/"
         "p140-sweep-2026-12-01-20.txt)")
_P206 = ("auto's A/B on an H200, 2026-12-01, two rounds a launch, a process a row (P205, P206; profiling/results/"
         "h200/p205-ab-, p206-ab-2026-12-01-30.txt)")
_P115_P118 = ("sweep.py on an H200, 2026-11-30, fifteenth session (P115, P116, P118; profiling/results/h200/"
              "p115-batch-shapes-2026-11-30-15.txt, p116-batch-boundary-2026-11-30-15.txt, "
              "p118-spread-2026-11-30-15.txt)")
_P173_P175 = (
    "auto's A/B on an H200, 2026-12-01, two rounds a launch (P173-P175; profiling/results/h200/p173-ab-, p174-ab-, "
    "p175-ab-2026-12-01-25.txt), against row_fill 7/8 (mid_batch only). To the long tile from the batch tile: 1000 x "
    "26016 (77 % full against 79 %) 0.691/0.705 -> 0.777/0.788, 700 x 42040 0.735/0.739 -> 0.798/0.797, 512 x 57832 "
    "0.727/0.719 -> 0.773/0.775, 400 x 58568 0.775/0.768 -> 0.812/0.816, 1500 x 42980 0.797/0.789 -> 0.808/0.804, 300 x "
    "57692 even. Off it, to the batch tile: 700 x 88996 (88 % against 99 %) 0.821/0.829 -> 0.901/0.889, 300 x 122708 "
    "0.844/0.849 -> 0.926/0.913, 512 x 122532 0.848/0.841 -> 0.902/0.912, 512 x 155220 (long_batch) 0.832/0.839 -> "
    "0.901/0.900, 700 x 137156 (long_batch) 0.827/0.824 -> 0.890/0.889, 1000 x 89840 even, 1500 x 103600 "
    "0.835/0.834 -> 0.817/0.818 (the rule's worst); to the short tile 160 x 61124 0.817/0.818 -> 0.885/0.873, 200 x "
    "44712 0.816/0.822 -> 0.837/0.839, 128 x 89840 0.752/0.749 -> 0.741/0.747; to many's tile 2048 x 138988 "
    "0.835/0.834 -> 0.907/0.909, 2048 x 90064 0.837/0.845 -> 0.863/0.860, 2048 x 122680 even. The edge 1.082 lies "
    "between 512 x 155220 (fill ratio 0.921, the batch tile 8 % faster) and 400 x 169416 and 256 x 171904 (0.926, "
    "the long tile 1.2-1.5 % faster). Against many's tile the fill ratio did not decide: at 0.97 the long tile lost "
    "3.5 % at 84-87 % full (2048 x 42604, 2048 x 29508) and won 3.5-9 % at 88 % and more (2048 x 74360, 2048 x "
    "45368, 2048 x 140000, 2048 x 32768), hence many's fill_to_take_over of 7/8 until P207 gave rows of up to 2^17 "
    "steps at 2048 rows and more to many (long_batch's rows fill at least 8/9 of their long tiles, so the bound "
    "no longer decided any launch and was removed)")
LOOKBACK_REGS = {
    ("sm_80", "float32"): {
        "long": dict(_SHORT_SM90, source="not measured on sm_80: the sm_90 short shape, which needs no more "
                                         "than 48 KB of shared memory per block"),
        "short": dict(_SHORT_SM90, source="not measured on sm_80: copied from sm_90; its scalar form spills 8 "
                                          "bytes there (ptxas 13.0, tests/test_mirrors.py)"),
    },
    ("sm_90", "float32"): {
        "one_tile": dict(
            # from_sequences 2: a single row of one tile is under 2^21 steps anyway, and stays off this
            # kind where the tests lift from_total_steps (conftest.py)
            _LONG_TILE_SM90, run_chunks=2, from_sequences=2,
            to_length=_LONG_TILE_SM90["block_threads"] * _LONG_TILE_SM90["items"], from_total_steps=(1 << 21) + 1,
            source=(
                "the long tile with runs of 2 against the batch tiles on rows of 16384 steps: sweep.py on an "
                "H200, 2026-12-01 (P145, profiling/results/h200/p145-sweep-2026-12-01-20.txt): 512 x 16384 "
                "0.851 against 0.779 (short_batch's tile), 1024 x 16384 0.910 against 0.820 and 0.821 (many's "
                "tile), 4096 x 16384 1.018 against 0.897 (many's). Past 2^21 steps in all, as the long shape "
                f"({_P206}: 128 x 16384 0.514/0.514 -> 0.550/0.549 on the short tile); "
                "rows one element past a 16-byte boundary fit it too (16385 steps from the boundary), where "
                "short_batch took five short tiles a row (1024 x 16384 0.54, "
                "results/h200/misaligned-2026-12-01-20.txt). auto's A/B, two rounds (results/h200/"
                "p145-ab-2026-12-01-20.txt): 1024 x 16384 0.913/0.918 against 0.814/0.814, 4096 x 16384 "
                "1.009/1.002 against 0.890/0.883, one element past a boundary 0.915/0.908 against 0.541/0.539")),
        "mid_batch": dict(
            _LARGE_SM90, from_sequences=2, to_sequences=2047, to_length=1 << 17, from_total_steps=1 << 23,
            fill_edge=1.082, source=(
                "the large kind's shape for batches of rows that fill a long tile, up to 2^17 steps, from 2^23 "
                "steps in all, in place of short_batch (to 2^24) and batch (above): sweep.py on an H200, two "
                "rounds (P164, P165; profiling/results/h200/p164-sweep-2026-12-01-23.txt, "
                "p165-sweep-2026-12-01-23.txt): 256 x 32768 0.819/0.819 against 0.776/0.774, 64 x 131072 "
                "0.757/0.757 against 0.728/0.723, 512 x 32768 0.874/0.875 against 0.821/0.821, 128 x 131072 "
                "0.846/0.847 against 0.804/0.806, 128 x 65536 0.767/0.765 against 0.752/0.752, 256 x 65536 "
                "0.843/0.840 against 0.827/0.820 (at 2^23 the long kind's form, sequence order and two levels, "
                "was ahead on rows of 65536 and 131072: 0.787/0.786 and 0.780/0.776); against the batch "
                "tile 1024 x 32768 0.941/0.937 against 0.871/0.874, 512 x 65536 0.881/0.872 against "
                "0.861/0.851, 256 x 131072 0.907/0.907 against 0.860/0.862, 1024 x 65536 0.902/0.914 against "
                "0.863/0.869, 512 x 131072 0.903/0.901 against 0.842/0.849; auto's A/B, two rounds (P166, "
                "profiling/results/h200/p166-ab-2026-12-01-23.txt): +3-10 % on nine such batches, 1024 x 32768 "
                "0.930/0.927 against 0.845/0.857, controls even. To 2047 rows: from 2048, many's batch tile (in "
                "sequence order), aligned since P201, won back what P168-P170 had given mid_batch, auto's A/B "
                "on an H200, 2026-12-01, two rounds, a process a row (P207, profiling/results/h200/"
                "p207-ab-2026-12-01-30.txt), scan time: 2048 x 32768 201.5/201.8 -> 197.9/199.3 us, 4096 x "
                "32768 396.6/394.8 -> 383.3/384.5, 8192 x 32768 773.4/772.5 -> 755.6/756.7 (1.005/1.007 of "
                "the copy), 2048 x 65536 408.3/409.2 -> 389.8/391.3, 2048 x 45368 308.7/309.5 -> "
                "299.1/300.2, 2048 x 74360 509.2/509.6 -> 493.0/492.3, 2048 x 131072 803.8/797.6 -> "
                "794.7/797.5 (even in round 2). Before P201, however many rows: against many's batch tile "
                "in sequence order, sweep.py on an H200, two rounds (P168, profiling/results/h200/"
                "p168-sweep-2026-12-01-24.txt), 2048 x 32768 0.954/0.946 against 0.885/0.886, 4096 x 32768 "
                "0.967/0.963 against 0.904/0.898, 2048 x 65536 0.927/0.934 against 0.894/0.893, 8192 x 32768 "
                "0.984/0.992 against 0.913/0.918, 2048 x 131072 0.947/0.955 against 0.871/0.881; auto's A/B, two "
                "rounds (P169, P170; profiling/results/h200/p169-ab-2026-12-01-24.txt, p170-ab-2026-12-01-24.txt): "
                "2048 x 32768 0.956/0.958 against 0.875/0.881, 8192 x 32768 0.996/0.997 against 0.912/0.913, "
                "2048 x 131072 0.947/0.951 against 0.883/0.883. Rows whose last tile is part-empty: rows of 40000 steps, "
                "three long tiles 79 % full, lost to the batch tile 98 % full, 0.770/0.771 against 0.877/0.873 "
                "(3000 rows) and 0.753/0.755 against 0.818/0.821 (1024 rows), rows of 16900 (two tiles, 50 %) ran "
                "0.52 against 0.77 on the short tile (P169-P171). fill_edge 1.082, the long tiles' fill against the "
                f"other tile's: {_P173_P175}")),
        "long_batch": dict(
            _LONG_TILE_SM90, chunks_first=1, run_chunks=4, from_sequences=128, from_length=(1 << 17) + 1,
            to_length=1 << 18, fill_edge=1.082,
            from_total_steps=1 << 25, source=(
                "the long tile, chunks first, beside the batch tile: sweep.py on an H200, 2026-12-01 (P131, "
                "P132; profiling/results/h200/p131-sweep-2026-12-01-18.txt, p132-sweep-2026-12-01-18.txt). "
                "Rows of 2^18: 128 x 262144 0.849 against 0.837, 256 x 262144 0.888 against 0.868, 512 x "
                "262144 0.906 against 0.872, 1024 x 262144 0.915 against 0.875; at 2^24 it lost (64 x 262144 "
                "0.778 against 0.795). Rows of 2^17 tied (512 x 131072 0.858 against 0.859, 1024 x 131072 "
                "0.886 against 0.876); rows of 2^19 went to the large tile (0.897 against 0.884 at 128 x "
                "524288). Between them, P134's A/B (results/h200/p134-ab-2026-12-01-19.txt): rows of 196608 "
                "0.891 against 0.869 at 1024 rows, 0.872 against 0.859 at 512, even at 256; rows of 393216 "
                "stay with the large tile (0.922 against 0.895 at 256 rows). from_sequences 128: the fewest "
                "measured, and what rows of at most 2^18 steps need for 2^25 in all anyway; two rows lifted "
                "to any total (tests/conftest.py, sanitize.sh's any_total cases) stay on the batch tile. auto's "
                "A/B (P133, results/h200/p133-ab-2026-12-01-18.txt): 1024 x 262144 0.918/0.916 against "
                "0.875/0.877, 512 x 262144 0.892/0.901 against 0.868/0.867. Runs of 4 staged chunks "
                f"(lookback.cu's RUN_CHUNKS), {_P140}: 512 x 262144 0.929/0.928 against 0.902/0.901 without, "
                "0.925/0.923 with runs of 2. Tried before many (P172, profiling/results/h200/"
                "p172-ab-2026-12-01-24.txt, auto's A/B, two rounds): 2048 x 262144 0.948/0.953 against "
                "0.866/0.857 on many's batch tile, 3000 x 180000 0.920/0.914 against 0.867/0.867, 2048 x 140000 "
                "0.859/0.859 against 0.825/0.836. fill_edge as mid_batch's: "
                f"{_P173_P175}")),
        "many": dict(_BATCH_TILE_SM90, from_sequences=2048, fill_edge=1.12, source=(
            "the batch tile in sequence order, from 2048 sequences: sweep.py on an H200, 2026-11-30 "
            "(P115, P116; profiling/results/h200/p115-batch-shapes-2026-11-30-15.txt, "
            "p116-batch-boundary-2026-11-30-15.txt): 2048 x 32768 0.882 against 0.860 with chunks "
            "first, 4096 x 16384 0.892 against 0.870; with 1024 sequences the orders tied "
            "(0.864-0.868 on 1024 x 32768, 0.867 on 1024 x 65536)"
            "; auto's A/B (P119, results/h200/p119-many-2026-11-30-15.txt): 4096 x 16384 0.894 against "
            f"0.865, 2048 x 32768 0.886 against 0.864. Against mid_batch's long tile before P207: {_P173_P175}. "
            "fill_edge 1.12 against short_fill's short tile (chunks first), between the fill "
            "ratios 1.111 and 1.143 (nothing lies between them from rows of 7680 steps): auto's A/B on an H200, "
            "2026-12-01, two rounds a launch, a process a row (P184, P185; profiling/results/h200/p184-ab-, "
            "p185-ab-2026-12-01-26.txt): the short tile ran 8192 x 10000 (1.33) 0.709/0.714 against "
            "0.528/0.529, 4096 x 9000 0.633/0.634 against 0.488/0.480, 6000 x 18000 (1.20) 0.760/0.767 against "
            "0.694/0.691, 2048 x 26024 (1.143) 0.748/0.756 against 0.721/0.725, 2500 x 27000 0.817/0.813 against "
            "0.785/0.770; 4096 x 34024 (1.111) 0.769/0.767 against 0.774/0.775, 2048 x 68024 (1.06) 0.794/0.791 "
            "against 0.826/0.816")),
        "short_batch": dict(
            _SHORT_BATCH_SM90, from_sequences=2, to_length=1 << 17, from_total_steps=1 << 23,
            to_total_steps=1 << 24, source=(
                f"{_P115_P118}: chunks first, beside the batch tile on batches of 2^23-2^24 steps, 64 x "
                "131072 0.727 against 0.705, 128 x 65536 0.738 and 0.758 against 0.721, 256 x 32768 0.768 "
                "against 0.738, 128 x 131072 0.797 against 0.768, 512 x 32768 0.828 and 0.823 against 0.805 "
                "and 0.804, 256 x 65536 0.822 and 0.821 against 0.806 and 0.807, 1024 x 16384 0.822 against "
                "0.812; not at 262144 steps a row (64 x 262144 0.761 against 0.780) nor from 2^25 (1024 x "
                "32768 0.844 against 0.868). auto's A/B (P123, profiling/results/h200/p123-short-batch-"
                "2026-11-30-16.txt): +2-5 % on 7 such batches (128 x 65536 0.754 against 0.717, 1024 x 16384 "
                "0.825 against 0.807). Rows of 4097-12288 steps go to the tiles of one row before it (P237, P240, "
                "P242; their sources)")),
        "over_wave": dict(
            _SHORT_BATCH_SM90, from_sequences=2,
            from_length=-(-15 * _LONG_TILE_SM90["block_threads"] * _LONG_TILE_SM90["items"] // 16),
            to_length=1 << 17, from_total_steps=(1 << 21) + 1, to_total_steps=(1 << 23) - 1,
            from_rival_tiles=2 * 132 + 1, fill_edge=1.0,
            source=(
                "short_batch's shape where the long kind took batches of rows filling long tiles under 2^23 steps, "
                "past one wave of them, where the short tiles are at least as full (fill_edge 1.0 against the long "
                "kind). From 2^21 steps where the long kind takes more than 264 tiles (P211, profiling/results/h200/"
                "p211-ab-2026-12-02-31.txt, two rounds, a process a row), scan time: 67 x 65536 20.1/20.4 -> "
                "18.8/18.9 us, 68 x 65536 21.3/21.3 -> 19.3/19.3, 100 x 40000 19.5/19.5 -> 16.4/16.5, 200 x 20000 "
                "24.3/24.3 -> 15.9/16.0, 140 x 30000 20.6/20.6 -> 18.3/18.4, 250 x 17000 29.3/29.0 -> 20.1/20.2, "
                "90 x 45000 18.7/18.4 -> 16.5/16.6, 142 x 31312 21.6/21.3 -> 19.0/19.0; 66 x 66000 (264 long "
                "tiles, one wave) stays on the long kind. Past one wave counted in steps at full fill: "
                "auto's A/B on an H200, 2026-12-01, two rounds, a process a row (P208, profiling/results/"
                "h200/p208-ab-2026-12-01-30.txt), scan time: 69 x 65536 (1.01 waves) 21.7/21.5 -> 19.4/19.5 us, "
                "72 x 65536 23.1/23.1 -> 20.2/20.3, 80 x 65536 26.3/26.1 -> 22.3/22.3, 112 x 65536 31.4/31.3 -> "
                "28.3/28.2, 120 x 49152 28.7/28.5 -> 24.3/24.3, 200 x 40000 36.5/36.2 -> 30.4/30.3, 170 x 40000 "
                "29.3/29.2 -> 27.2/27.2, 110 x 70000 34.4/34.2 -> 31.9/32.2, 95 x 70000 29.9/29.9 -> 28.9/28.9, "
                "100 x 70000 30.4/30.2 -> 29.6/29.5, 300 x 20000 35.3/35.4 -> 24.1/24.0, 400 x 16900 45.1/44.7 -> "
                "30.4/30.4; 152 x 33792 (short tiles 0.917 full against 1.0, kept on the long kind by the edge) "
                "23.2/23.0 on it. Before P201 aligned the short tile's staging, the same kind lost on 100 x 70000 "
                "(-2 to -5 %, P194) and with a rising edge on 95 x 70000, 110 x 70000 and 170 x 40000 (P198; "
                "attempts/over-wave-edge.patch), and 133 x 33792 (1.008 waves, two full long tiles a row) ran "
                "0.926/0.910 on the long tile against 0.750/0.750 on the short one (P192, profiling/results/"
                "h200/p192-ab-2026-12-01-27.txt), which the edge refuses; rows shorter than a long "
                "tile keep the short kind (P192)")),
        # to_sequences 2047: many is tried first from 2048 rows, and batch, the same tile, must not be its
        # rival there, or many's fill_edge could never refuse a launch
        "batch": dict(
            _BATCH_TILE_SM90, chunks_first=1, from_sequences=2, to_sequences=2047, fill_edge=1.041, source=(
            "sweep.py on an H200, 2026-11-30, fifteenth session, four shapes in both ticket orders "
            "on 20 batches (P114-P116; profiling/results/h200/p115-batch-shapes-2026-11-30-15.txt, "
            "p116-batch-boundary-2026-11-30-15.txt): on rows of 16384-262144 steps from 2^23 steps "
            "in all, within 2 % of the large or long shape auto took (64 x 131072 0.705 against "
            "0.708, 4096 x 16384 0.870 against 0.886) and up to 30 % faster (512 x 32768 0.805 "
            "against 0.636, 1024 x 65536 0.867 against 0.696, 256 x 65536 0.806 against 0.657); "
            "rows of 2^19 steps and more keep the large shape (32 x 524288 0.747 against 0.753, "
            "64 x 1048576 0.849 against 0.888), launches of 2^22 the long one (64 x 65536 0.57 "
            "against 0.72). Chunks first (kernels_cu/seq_layout.cuh): +3-8 % on 256 sequences or "
            "fewer, -2.5 to +1 % on more; auto's A/B (P117, results/h200/p117-batch-auto-2026-11-30-15.txt): "
            "256 x 65536 0.805 against 0.660, 2048 x 32768 0.863 against 0.663. fill_edge 1.041 against "
            "short_fill's short tile: auto's A/B on an H200, 2026-12-01, two rounds a launch (P182, P183; "
            "profiling/results/h200/p182-ab-, p183-ab-2026-12-01-26.txt): the short tile ran 1500 x 118784 "
            "(fill ratio 1.034) 1.3 % slower, 2000 x 85504 (1.047) even or 0.7 % slower and 200 x 84992 (1.048) "
            "7-8 % faster; at equal fill 1200 x 20500 even and 2000 x 12500 1.5 % slower (P181, "
            "p181-short-ab-2026-12-01-26.txt). 1.041, not 1.04: rows of 13 batch tiles and 25 short ones, fill "
            "ratio 26/25, stay on the batch tile whatever the rounding (P186)")),
        "short_fill": dict(
            _SHORT_BATCH_SM90, from_sequences=2,
            from_length=_BATCH_TILE_SM90["block_threads"] * _BATCH_TILE_SM90["items"] * 15 // 16,
            to_length=_BATCH_TILE_SM90["to_length"], from_total_steps=_BATCH_TILE_SM90["from_total_steps"], source=(
                "the short tile where batch's fill_edge sends a launch (many's: P184, P185, in many's source): auto's "
                "A/B on an H200, 2026-12-01, two rounds a launch, a process a row (P183; "
                "profiling/results/h200/p183-ab-2026-12-01-26.txt): 1000 x 18432 (fills 0.90 against 0.75) 0.775/0.772"
                " against 0.619/0.623 on the batch tile, 2000 x 10240 0.735/0.731 against 0.528/0.527, 512 x 34304 "
                "0.778/0.782 against 0.676/0.684, 700 x 52736 0.836/0.838 against 0.763/0.777, 200 x 84992 0.799/0.799"
                " against 0.739/0.746; the same in P182 (p182-ab-2026-12-01-26.txt) with 1500 x 12288 +31 % and 1500 x"
                " 36352 +8-11 %. from_length: rows that fill the batch tile (15/16 of 8192 steps), the only ones batch"
                " and many weigh; shorter rows keep the short kind")),
        "large": {
            **_LARGE_SM90, "from_total_steps": 1 << 24,
            "source": "the long tile with runs of 2 staged chunks (lookback.cu's RUN_CHUNKS) in place of 352 x 56 "
                      "without: sweep.py on an H200, two rounds (P161, profiling/results/h200/"
                      "p161-sweep-2026-12-01-23.txt), 2^24 0.833/0.819 against 0.726/0.722, 2^25 0.896/0.890 "
                      "against 0.830/0.826, 2^26 0.942/0.923 against 0.893/0.894, 2^28 0.981/0.982 against "
                      "0.955/0.947 (runs of 4: 2^28 0.990/0.990, 2^24 0.813/0.799; the long tile without runs "
                      "lost from 2^26). What chose the rest, on 352 x 56: "
                      "the tile: sweep.py on an H200, 2026-11-30 (today: sweep.py --shapes 352x56r16b2p1), "
                      "profiling/results/h200/sweep-p36-split-2026-11-30.json and -30b.json: fastest of 8 "
                      "two-level shapes at 2^26 and 2^28 in both rounds (2^28: 0.763 and 0.771 of the copy, against "
                      "0.702 for 384x44r12b2 without a protocol warp, sweep-p36-regs-*.json); 80 registers, no "
                      "spills (results/h200/ptxas-2026-11-30.txt). The one-level look-back over tiles "
                      "(segment_tiles 1): an A/B of rtscan bench against the same tile two-level, two rounds "
                      "(results/h200/p49-ab-2026-11-30.txt, P48-P49): 2^25 +5 %, 2^26 +3 %, 2^27 +4-5 %, 2^28 "
                      "+1 % (0.838/0.836 against 0.832/0.826). From 2^24 steps in all (P50, "
                      "results/h200/p50-p52-sweeps-2026-11-30.txt): 2^24 0.683 against 0.656/0.667 for the "
                      "two-level long shape; at 2^23 the long shape wins (0.674/0.682 against 0.613). Atomic "
                      f"polls, {_ATOMIC_POLLS_SM90}, two rounds: 2^28 0.950/0.951 against 0.851/0.848, "
                      "2^26 0.874/0.872 against 0.791/0.792, 2^24 0.744/0.730 against 0.704/0.709. Tickets "
                      "chunks first (the same tiles for one sequence): an A/B of rtscan bench, two rounds "
                      "(P130, results/h200/p130-ab-2026-12-01-18.txt), 128 x 524288 0.895/0.892 against "
                      "0.882/0.875, 64 x 1048576 0.896/0.888 against 0.880/0.881, 8 x 4194304 0.843/0.832 "
                      "against 0.825/0.822; 16 and 32 sequences and one sequence within the rounds' spread",
        },
        "long": {
            **_LONG_TILE_SM90, "run_chunks": 2, "from_total_steps": (1 << 21) + 1,
            "source": "sweep.py on an H200, 2026-11-30, after P38 (profiling/results/h200/p42-sweep-2026-11-30.txt; "
                      "sweep-p42-s1-2026-11-30.json, sweep-p42-s64-2026-11-30.json): fastest at 2^21-2^24 of 5 "
                      "shapes for one sequence (2^24: 0.679 of the copy timed before the sweep against 0.630 for "
                      "384x44r12b2, the long shape before it) and of 7 shapes on 64 x 65536 (0.758 against "
                      "0.690); 80 registers, no spills. Past 2^21 steps in all: with its staging on a 128-byte "
                      f"boundary (P201) the short tile took 2^21 ({_P206}), one sequence 0.404/0.401 -> "
                      "0.434/0.435, 2 x 1048576 0.388/0.391 -> 0.446/0.448, 64 x 32768 0.437/0.437 -> 0.534/0.532, "
                      "and lost above it, 1 x 2621440 0.409/0.407 -> 0.365/0.364, 48 x 65536 0.561/0.555 -> "
                      "0.523/0.520 (before P201 it ran 2^21 at 0.274 against this one's 0.375, "
                      "sweep-2026-11-30d.csv). Strong-load "
                      f"polls: with atomic ones ({_ATOMIC_POLLS_SM90}, two rounds) 2^22 ran 0.676/0.677 against "
                      "0.696/0.700, 2^23 0.670/0.674 against 0.680/0.682, 64 x 65536 0.717/0.736 against 0.740/0.740; "
                      "in a sweep after it (sweep-atomic-long-2026-11-30.txt) 2^21-2^23 0.375/0.691/0.668 against "
                      "0.367/0.675/0.662, 64 x 65536 0.747 against 0.729. Runs of 2 staged chunks (lookback.cu's "
                      f"RUN_CHUNKS), {_P140}: 64 x 65536 0.804/0.801 against 0.738/0.739 without (runs of 4 "
                      "0.801/0.794, of 8 0.768/0.764), 256 x 16384 0.855/0.855 against 0.739/0.736, 2^21-2^24 "
                      "0.409/0.725/0.692/0.704 against 0.362/0.671/0.658/0.682 (runs of 4 within 1.5 %: 2^21 0.418, "
                      "2^24 0.710; runs of 8 behind from 2^22). Re-swept in the final form, without the rewrite "
                      "(P141, profiling/results/h200/p141-sweep-2026-12-01-20.txt, one round): runs of 2 64 x 65536 "
                      "0.828, 256 x 16384 0.914, 2^22 0.752; of 4 0.824, 0.898, 0.749; of 8 0.790, 0.846, 0.726",
        },
        # Small launches of short rows (P217): one tile's latency, which follows the steps a lane scans in
        # turn, so 4 a lane, while all its tiles fit one wave (132 SMs x its blocks an SM, P221) or the launch
        # has at most 3 x 2^17 steps (a bound of a wave alone lost 1.5-4 % past it to the rows_ tiles of 24
        # steps a lane, P220). 132: an H200's SMs; sm_100 falls back to this entry (a B200 has 148), not
        # measured there.
        **{f"small_{4 * threads}": _rows(threads, 4, min_blocks, f"{_P217}; {_P221}", to_total_steps=3 << 17,
                                         any_total_to_sequences=132 * min_blocks)
           for threads, min_blocks in ((64, 16), (128, 8), (256, 4), (512, 2), (1024, 1))},
        # Rows of at most 128 steps, as many a warp as fit, each on the lanes its 16-byte vectors take (P227).
        "rows_128": _rows(128, 4, 16, f"{_P222}; {_P223}; {_P227}; {_P228}; {_P231_P233}", rows_a_block=0),
        "rows_256": _rows(128, 8, 12, _P222, rows_a_block=4),
        "rows_384": _rows(32, 12, 32, _P215),
        "rows_512": _rows(32, 16, 32, _P215),
        "rows_768": _rows(32, 24, 32, _P215),
        # Under about a wave of 64 x 16 tiles, 128 x 8 (P213's) keeps more warps an SM: 1024 x 1024 4.3 us
        # against 4.7 (p215-rows-); from 1280 rows 64 x 16 leads, 1280 x 1024 5.2 against 5.7-5.8 (p217-ab-),
        # 2048 x 1024 6.2 against 7.1-7.2, 8192 x 1024 26.9 against 29.2 (profiling/results/h200/*-2026-12-02-32.txt).
        "rows_1024_few": _rows(128, 8, 8, _P213, to_sequences=1024),
        "rows_1024": _rows(64, 16, 16, _P215),
        "rows_1536": _rows(64, 24, 16, f"{_P215}; against rows of 1025-1536 on rows_2048's tile, two rounds "
                           "(profiling/results/h200/p215-rows-2026-12-02-32.txt): 1024 x 1536 6.5-6.6 -> 6.0-6.1 us, "
                           "2048 x 1536 11.6 -> 8.1-8.2, 8192 x 1536 43.6-43.8 -> 38.9-39.2, 1024 x 1300 6.8-6.9 -> "
                           "6.2-6.3"),
        "rows_2048": _rows(128, 16, 6, _P213),
        # Rows of 2049-3072 steps, from 512 rows: fewer rows ran behind the short tile (P216).
        "rows_3072": _rows(128, 24, 8, "auto's A/B on an H200, two rounds, scan time (P216, P218; profiling/"
                           "results/h200/p216-ab-, p216-small-, p217-sweep-2026-12-02-32.txt, p218-ab-2026-12-02-33"
                           ".txt): 512 x 3000 7.0 -> 6.4-6.5 us, 1024 x 3072 11.6 -> 8.3, 2048 x 2200 23.0-23.3 -> "
                           "18.2-18.4, 8192 x 2500 83.4-83.7 -> 64.3-64.8; 256 x 3000 5.3 -> 5.5, 128 x 3000 and 2 x "
                           "3000 behind too", from_sequences=512),
        # Rows of 4097-6144 steps: one 256 x 24 tile a row (the bytes an SM holds of rows_3072's tile at 8
        # blocks), 67-100 % full and no look-back, where two short tiles a row were 50-75 % full; from 2 rows
        # (P236), and before short_batch and the batch tiles (registry.LONG_ROWS_KINDS; P237, P242).
        "rows_6144": _rows(256, 24, 4, "auto's A/B on an H200, two rounds, scan time (P235; profiling/results/h200/"
                           "p234-p235-ab-2026-12-02-36.txt) against two short tiles a row: 1000 x 5001 24.3-24.4 "
                           "-> 17.4-17.5 us (0.78 -> 1.10 of copy), 4000 x 5000 82.2-82.6 -> 59.9-60.0, 1000 x 4500 "
                           "23.6-23.8 -> 15.9-16.1, 512 x 4097 12.3 -> 7.3-7.4, 500 x 6000 12.2-12.3 -> 8.0-8.1, "
                           "8000 x 6000 166.3-167.2 -> 136.7-137.0, 300 x 6144 9.6 -> 6.8, 256 x 5000 7.1 -> 5.5-5.6. "
                           "Under 256 rows too, against two short tiles a row (P236; p236-p237-ab-2026-12-02-37.txt): "
                           "200 x 5000 6.7 -> 5.3 us, 128 x 5000 5.7 -> 4.2-4.3, 64 x 5000 5.0-5.1 -> 4.1, 16 x 5000 "
                           "4.9 -> 4.0, 2 x 5000 4.7-4.8 -> 4.0. In short_batch's band, against two short tiles a "
                           "row (P237, the same file): 2000 x 4500 45.4-45.7 -> 29.1-29.2 us (0.68 -> 1.07 of copy), "
                           "3000 x 5000 66.9-67.3 -> 45.8-46.1, 1500 x 6000 36.5 -> 28.9-29.0, 2000 x 6144 46.5-47.3 "
                           "-> 38.0-38.1, 2700 x 6144 62.4-63.5 -> 49.8-50.2, 4000 x 4097 86.6-87.6 -> 49.5-49.8",
                           from_length=4097),
        # Rows of 6145-8192 and 8193-12288 steps: one tile a row at the bytes an SM holds of rows_6144, where two
        # or three short tiles a row were as full and waited each on the one before (P238, P239), before
        # short_batch and the batch tiles too (P240, P242). 512 x 32 for rows of 12289-16384 lost on 2 and 100 rows
        # (P241).
        "rows_8192": _rows(256, 32, 3, "auto's A/B on an H200, two rounds, scan time (P238; profiling/results/h200/"
                           "p238-p239-ab-2026-12-02-37.txt) against two short tiles a row: 1000 x 6500 26.2-26.4 -> "
                           "23.8 us, 4000 x 7000 91.7-92.4 -> 83.5-84.2, 200 x 8000 7.0 -> 6.3-6.4, 1000 x 7000 "
                           "27.0-27.1 -> 24.7-25.2, 1100 x 7600 30.5-30.7 -> 28.8-28.9, 64 x 7000 5.2 -> 4.9, 500 x "
                           "8192 14.8-15.2 -> 14.2-14.4, 2 x 7000 4.8 -> 4.7. In short_batch's band (P240, P242; "
                           "p240-p242-ab-2026-12-02-37.txt): 2500 x 6500 59.0-59.2 -> 50.8, 1300 x 6500 33.2 -> "
                           "29.2, 2000 x 7000 49.2-49.3 -> 44.4-44.5, 2300 x 7200 57.5-57.9 -> 51.3-51.4, 2000 x "
                           "7800 52.0-52.1 -> 48.5-48.6, 1500 x 8000 40.1-40.2 -> 38.1-38.3", from_length=6145),
        "rows_12288": _rows(512, 24, 2, "auto's A/B on an H200, two rounds, scan time (P239; profiling/results/h200/"
                            "p238-p239-ab-2026-12-02-37.txt) against three short tiles a row: 100 x 10000 6.4 -> "
                            "5.0-5.1 us, 600 x 9000 24.4 -> 19.4-19.5, 800 x 10000 31.6-31.9 -> 26.6-27.0, 500 x "
                            "12000 24.1-24.2 -> 21.5-21.7, 2 x 10000 4.7 -> 4.5-4.6. Before short_batch and the "
                            "batch tiles (P242, p240-p242-ab-2026-12-02-37.txt), against three short tiles a row: "
                            "16384 x 9000 562.2-563.8 -> 408.8-410.2 us, 4000 x 10000 145.7-147.1 -> 115.9-116.3, "
                            "2000 x 10000 74.1-74.7 -> 60.5, 3000 x 12000 116.4-116.7 -> 105.7-106.5, 1000 x 12000 "
                            "41.8 -> 38.0-38.2", from_length=8193),
        "short": dict(_SHORT_SM90, atomic_polls=1,
                      source=f"{_SHORT_SM90['source']}. Atomic polls, {_ATOMIC_POLLS_SM90}, two rounds: 2^20 "
                             "0.340/0.338 against 0.328/0.327 warm, 0.496/0.491 against 0.476/0.481 cold. Its scalar "
                             "form, by rtscan bench --time-major, two rounds (P95, results/h200/p95-ab-2026-11-30-12.txt): "
                             "2 x 524288 0.240/0.241 against 0.231/0.231, 2 x 4194304 0.298/0.297 against 0.282/0.282, "
                             "8 to 256 sequences within 2 %"),
    },
}

# sm_120 (and sm_121) allow a block 99 KB of shared memory, where sm_90's long, one_tile, long_batch
# and large tiles need 105-113 KB: without an entry of its own it would fall back to sm_90's and
# refuse those launches (tests/test_registry.py checks every architecture's shapes fit).
LOOKBACK_REGS[("sm_120", "float32")] = {
    kind: dict(_SHORT_SM90, source="not measured on sm_120: the sm_90 short shape, 32 KB of shared memory a "
                                    "block where sm_120 allows 99 KB; its scalar form spills 32 bytes there "
                                    "(ptxas 13.0), its 16-byte form none")
    for kind in ("long", "short")}

# The seed's first two look-backs: one step per thread, a one-level look-back over tiles, walked
# by one thread (serial) or by a warp. Their shapes are the seed's, not tuned: these variants are
# the baselines the tuned kernel is measured against. min_blocks 4: 48-53 registers, no spills
# (ptxas, sm_90); 8 blocks would cap them at 32 registers and spill.
_SEED_LOOKBACK = {"block_threads": 256, "items": 1, "min_blocks": 4, "lookback_depth": 1, "register_items": 0,
                  "segment_tiles": 1, "source": "the seed's shape (one step per thread), not measured"}
LOOKBACK_SERIAL = {("sm_80", "float32"): {kind: dict(_SEED_LOOKBACK, walk_lanes=1) for kind in ("long", "short")}}
LOOKBACK_WARP = {("sm_80", "float32"): {kind: dict(_SEED_LOOKBACK, walk_lanes=32) for kind in ("long", "short")}}


# Hillis-Steele, register-resident: one step per thread, log-step scans across the tile, tiles
# joined by lookback_regs' two-level look-back. The shape is not measured; min_blocks 3 at 512
# threads caps it at 40 registers, spill-free on sm_80-sm_100 (ptxas, tests/test_hillis_steele_mirror.py).
# On sm_90 its look-back polls by atomics, the one field measured there.
HILLIS_STEELE = {("sm_80", "float32"): {kind: {
    "block_threads": 512, "items": 1, "min_blocks": 3, "lookback_depth": 1, "register_items": 0,
    "walk_lanes": 32, "segment_tiles": 32, "source": "spill-free by ptxas on sm_80-sm_100; not measured",
} for kind in ("long", "short")}}
HILLIS_STEELE[("sm_90", "float32")] = {kind: dict(
    shape, atomic_polls=1,
    source=f"{shape['source']}, but its atomic polls: {_ATOMIC_POLLS_SM90}, one round: 2^24 0.128 of the copy "
           "against 0.108, 2^26 0.128 against 0.107") for kind, shape in
    HILLIS_STEELE[("sm_80", "float32")].items()}


# Blelloch: the work-efficient tree in shared memory, tiles joined by lookback_regs' two-level
# look-back. The shape is not measured; 256 x 8 at min_blocks 3 is spill-free on sm_80-sm_100 (ptxas,
# reported with tests/test_blelloch_mirror.py; min_blocks 4 spilled 12 B on sm_100 with VEC 1). On
# sm_90 its look-back polls by atomics, the one field measured there.
BLELLOCH = {("sm_80", "float32"): {kind: {
    "block_threads": 256, "items": 8, "min_blocks": 3, "lookback_depth": 1, "register_items": 0,
    "walk_lanes": 32, "segment_tiles": 32, "source": "spill-free by ptxas on sm_80-sm_100; not measured",
} for kind in ("long", "short")}}
BLELLOCH[("sm_90", "float32")] = {kind: dict(
    shape, atomic_polls=1,
    source=f"{shape['source']}, but its atomic polls: {_ATOMIC_POLLS_SM90}, one round: 2^24 0.326 of the copy "
           "against 0.279, 2^26 0.337 against 0.278") for kind, shape in
    BLELLOCH[("sm_80", "float32")].items()}


# The three-pass forms (kernels_cu/three_pass.cu): no look-back, so the look-back fields are
# placeholders (depth 0, one walking lane, one tile per segment: tiles never wait for one another).
# Not measured; 256 x 16 at min_blocks 2 is spill-free on sm_80-sm_100 for every pass, 16-byte and
# scalar (ptxas, tests/test_three_pass_mirror.py; at most 128 registers, the rescan on the scalar path).
_THREE_PASS_SHAPE = {
    "block_threads": 256, "items": 16, "min_blocks": 2, "lookback_depth": 0, "register_items": 0,
    "walk_lanes": 1, "segment_tiles": 1, "source": "not measured: spill-free by ptxas on sm_80-sm_100",
}
THREE_PASS = {("sm_80", "float32"): {kind: dict(_THREE_PASS_SHAPE) for kind in ("long", "short")}}

# The columns form (kernels_cu/columns.cu): a block of BLOCK threads takes BLOCK neighbouring
# sequences over a chunk of BLOCK x ITEMS steps, one thread a sequence; its kernels read one step at
# a time whatever the layout (registry: vector_steps False). Pass 2 (three_pass_carries, one block
# per sequence) walks a sequence's chunk aggregates BLOCK x ITEMS at a time: 128 a round in the
# short shape. The long shape, for sequences of more than one such round (more than 128 chunks,
# from `from_length` steps), runs pass 2 in blocks of carry_threads x carry_items = 2048 a round.
_COLUMNS_SWEEPS = ("profiling/columns_sweep.py on an H200, 2026-11-30, thirteenth session, two rounds "
                   "(profiling/results/h200/columns-sweep-p100b-2026-11-30-13.txt, with walk_column; "
                   "columns-sweep-p100-2026-11-30-13.txt before it)")
_COLUMNS_SHORT = dict(_THREE_PASS_SHAPE, block_threads=32, items=4, min_blocks=32,
                      source=f"{_COLUMNS_SWEEPS}: best or within 2 % of the best of 6 shapes on every row from 8 "
                             "sequences but one, (64, 4096, 16) along 4096 (0.44 against 64 x 1's 0.51): time-major "
                             "64 x 262144 0.472/0.480 of copy, 1024 x 16384 0.520/0.512, 4096 x 16384 0.546/0.547, "
                             "64 x 65536 0.420/0.430, 16 x 1048576 0.298/0.299; (8, 4096, 512) along 4096 "
                             "0.500/0.503. 56 registers, no spills (ptxas, sm_90)")
_COLUMNS_LONG = dict(_COLUMNS_SHORT, carry_threads=256, carry_items=8, from_length=128 * 128 + 1,
                     source="the short shape, with pass 2 in blocks of 256 x 8 (P102, profiling/results/h200/"
                            "p102-columns-2026-11-30-13.txt, two rounds against pass 2 in the short shape's own "
                            "32 x 4): 16 x 1048576 0.392/0.391 of copy against 0.294/0.300, 8 x 2097152 "
                            "0.263/0.261 against 0.183/0.179, 64 x 262144 0.515/0.514 against 0.471/0.472; on "
                            "sequences of at most 128 chunks, where the short pass 2 needs one round, the wide "
                            "one lost: (8, 4096, 512) along 4096 0.422 against 0.50, 1024 x 16384 0.50 against "
                            "0.52. 71 registers at one block an SM, no spills (ptxas, sm_90)")
COLUMNS = {("sm_80", "float32"): {"long": _COLUMNS_LONG, "short": _COLUMNS_SHORT}}
# The one-pass columns form (kernels_cu/columns_lookback.cu): a tile of sequences_per_tile sequences
# over block_threads x items / sequences_per_tile steps of each, register_items of a thread's in
# registers and the rest staged in shared memory; lookback_depth predecessors a lane reads per
# round; walk_lanes 1: one lane walks each sequence. Shapes by how many sequences (so chains of
# tiles) the launch has: the long one from `from_sequences`, the large one (sm_90: the long tile) from
# its fewer `from_sequences` where the launch has its `from_total_steps`, the few ones up to
# `to_sequences`. The 32-sequence ones poll by strong loads: a lane's first poll nearly always finds
# its predecessor finished, and atomic polls, whose round trip is longer, lost 2-32 % (P111,
# profiling/results/h200/p111-polls-2026-11-30-14.txt).
_COLUMNS_LOOKBACK_SWEEPS = ("profiling/columns_sweep.py --variant columns_lookback on an H200, 2026-11-30, "
                            "fourteenth session (P109, P112: profiling/results/h200/p109-sweep-2026-11-30-14.txt, "
                            "-b-, -c-, p112-staged-2026-11-30-14.txt, -b-, and their JSON)")
_COLUMNS_LOOKBACK_SHORT = {
    "block_threads": 512, "items": 64, "register_items": 32, "min_blocks": 1, "lookback_depth": 2,
    "walk_lanes": 1, "segment_tiles": 1, "sequences_per_tile": 32,
    "source": f"{_COLUMNS_LOOKBACK_SWEEPS}: best of 28 shapes on time-major rows of 32-1024 sequences (P112's second "
              "sweep): 32 x 524288 0.562 of copy, 64 x 65536 0.598, 64 x 262144 0.610, 256 x 65536 0.656, 1024 x "
              "16384 0.720 (columns 0.51, 0.44, 0.52, 0.50, 0.51; the register-only 256 x 32 0.52 and 0.61-0.69 "
              "on the rows it ran); 1024-step tiles keep few tiles of each chain in flight. 128 registers, no "
              "spills (ptxas, sm_90)"}
_COLUMNS_LOOKBACK_LONG = dict(
    _COLUMNS_LOOKBACK_SHORT, block_threads=256, items=32, register_items=16, min_blocks=3, lookback_depth=1,
    from_sequences=2048,
    source="profiling/columns_sweep.py --variant columns_lookback on an H200, 2026-12-02, thirty-eighth session, two "
           "sweeps of two rounds (P247, P248: profiling/results/h200/p247-columns-sweep-, "
           "p248-columns-sweep-2026-12-02-38.txt): of 16 shapes on seven (B, L, D) rows along L and three time-major "
           "ones, the nearest the best over all ten (the best's ratio at most 2.3 % above its own from 1024 sequences, "
           "3.9 % on 256 x 65536; 256 x 24 at 4 blocks 1.9 % and 9 %), ahead of the tile before it (128 x 48 at 5 "
           "blocks an SM, P109-P112's) on all ten in all four rounds by 0.9-7.2 %: (8, 2048, 1536) "
           "0.801/0.804/0.800/0.797 against 0.791/0.792/0.793/0.782, (16, 1024, 768) 0.789/0.768/0.785/0.777 against "
           "0.736/0.728/0.735/0.730, 4096 x 16384 0.874/0.877/0.872/0.871 against 0.850/0.854/0.851/0.853; chunks of "
           "64-96 steps (smaller tiles, more blocks) lost on all but one row and round, up to 65 %, and chunks of "
           "320-512 steps trailed on most rows (512 x 32 by 10-30 %). auto's A/B, two rounds, scan time (P249, "
           "profiling/results/h200/p249-ab-2026-12-02-38.txt): 16384 x 1024 64.5/64.4 -> 60.8/60.6 us, 2048 x 8192 "
           "66.5/66.1 -> 63.1/63.2, 4096 x 4096 63.7/63.4 -> 60.7/60.7, 4096 x 16384 227.7/226.5 -> 220.5/221.0, 12288 "
           "x 2048 90.6/90.8 -> 89.2/89.6; from 2048 sequences as before (from 1024 in launches of 2^24 steps: the "
           "large kind below). 80 registers, no spills (ptxas, sm_90)")
# From 8192 sequences (256 groups of 32 and more) the long tile at four blocks an SM: 8 of a thread's 32
# steps in registers, 64 registers, 48 KB of dynamic shared memory a block (218 KB an SM with the static
# arrays; P256-P258).
_COLUMNS_LOOKBACK_MANY = dict(
    _COLUMNS_LOOKBACK_LONG, register_items=8, min_blocks=4, from_sequences=8192,
    source="profiling/columns_sweep.py --variant columns_lookback on an H200, 2026-12-03, thirty-ninth session (P256: "
           "profiling/results/h200/p256-columns-sweep-2026-12-03-39.txt, one round), beside the long tile: 16384 x "
           "1024 0.862 against 0.841 of copy, 32768 x 2048 0.897/0.871, (16, 2048, 2048) 0.894/0.867, (8, 2048, 1536) "
           "0.823/0.811; as every launch's long tile (P257, profiling/results/h200/p257-ab-2026-12-03-39.txt) it "
           "gained 8192-32768 sequences 1-4 % and lost 2048 x 8192 0.5-1.4 %, hence the bound; auto's A/B with it: "
           "P258 (profiling/results/h200/p258-ab-2026-12-03-39.txt). 64 registers, no spills (ptxas, sm_90)")
# The long tile for 1024-2047 sequences where a launch has 2^24 steps: its chains are long enough there;
# in smaller launches of so few sequences the short tile's 1024-step chunks keep them shorter (P251).
_COLUMNS_LOOKBACK_LARGE = dict(
    _COLUMNS_LOOKBACK_LONG, from_sequences=1024, from_total_steps=1 << 24,
    source="auto's A/B on an H200, 2026-12-02, two rounds, scan time, against the short tile (P252, profiling/results/"
           "h200/p252-ab-2026-12-02-38.txt): 1500 x 16384 131.2/128.9 -> 109.3/110.6 us (0.55 -> 0.65 of copy), 2000 "
           "x 8400 85.1/85.5 -> 71.5/71.2, 1024 x 65536 267.3/265.7 -> 235.5/235.5 (0.72 -> 0.81), 1200 x 20000 "
           "111.8/111.2 -> 100.9/100.9, 1024 x 16384 68.0/68.4 -> 65.7/66.1; 1024 x 8192 (2^23 steps, the short tile "
           "either way) even. Without the bound on steps the long tile lost 1024 x 8192 5-6 % (P251, p250-p251-"
           "2026-12-02-38.txt) and, from 256 sequences, 512 x 16384 10 % (P249)")
# Launches of 16 sequences or fewer: a tile of 16 (or 8), two (four) lanes a sequence, so that a
# warp's load is whole rows of 64 (32) bytes and no lane idles.
_P120 = "profiling/results/h200/p120-few-sequences-2026-11-30-16.txt (P120, seven shapes, one run)"
_COLUMNS_LOOKBACK_FEW = dict(
    _COLUMNS_LOOKBACK_SHORT, sequences_per_tile=16, to_sequences=16,
    source=f"{_P120}: time-major 16 x 1048576 0.516 of copy, 12 x 1048576 0.418, the best on both (columns 0.394 "
           "and 0.294; 32-sequence tiles 0.366 and 0.296; 128 x 48 tiles, more of one chain in flight, 0.17-0.22). "
           "128 registers, no spills (ptxas, sm_90)")
_COLUMNS_LOOKBACK_FEWEST = dict(
    _COLUMNS_LOOKBACK_SHORT, block_threads=256, min_blocks=2, sequences_per_tile=8, to_sequences=8,
    source=f"{_P120}: time-major 8 x 2097152 0.421 of copy (512 threads 0.427, tiles of 16 0.313-0.337, columns "
           "0.253), 8 x 262144 0.236 (0.223, 0.161-0.205, 0.163), best or within 2 % of it. 128 registers, no "
           "spills (ptxas, sm_90)")
COLUMNS_LOOKBACK = {
    ("sm_80", "float32"): {kind: dict(shape, source=f"not measured on sm_80: sm_90's {kind} shape")
                           for kind, shape in (("short", _COLUMNS_LOOKBACK_SHORT), ("few", _COLUMNS_LOOKBACK_FEW),
                                               ("fewest", _COLUMNS_LOOKBACK_FEWEST))},
    ("sm_90", "float32"): {"many": _COLUMNS_LOOKBACK_MANY, "large": _COLUMNS_LOOKBACK_LARGE,
                           "long": _COLUMNS_LOOKBACK_LONG,
                           "short": _COLUMNS_LOOKBACK_SHORT,
                           "few": _COLUMNS_LOOKBACK_FEW, "fewest": _COLUMNS_LOOKBACK_FEWEST},
}
# sm_86 and sm_120 (and, falling back to them, sm_87, sm_89 and sm_121) allow a block as little as
# 99 KB of shared memory, where the short and few tiles need 128 KB: there the long tile (32 KB)
# takes every launch but those of at most 8 sequences, which keep the fewest tile (64 KB). Neither
# is measured there.
COLUMNS_LOOKBACK.update({
    (arch, "float32"): {
        "short": {field: value for field, value in _COLUMNS_LOOKBACK_LONG.items() if field != "from_sequences"}
        | {"source": f"not measured on {arch}: sm_90's long tile, 32 KB of shared memory a block where "
                     f"{arch} allows 99 KB"},
        "fewest": dict(_COLUMNS_LOOKBACK_FEWEST, source=f"not measured on {arch}: sm_90's fewest tile, 64 KB of "
                                                        f"shared memory a block where {arch} allows 99 KB")}
    for arch in ("sm_86", "sm_120")})
THREE_PASS_REDUCE = {("sm_80", "float32"): {kind: dict(_THREE_PASS_SHAPE) for kind in ("long", "short")}}


@functools.lru_cache(maxsize=None)  # every scan() looks its shape up: keep the regex off that path
def arch_number(arch: str) -> int:
    """An architecture's number as the table orders them: sm_90 and sm_90a -> 90."""
    match = re.match(r"^sm_(\d+)", arch)
    if not match:
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    return int(match.group(1))


def lookup(table: dict, arch: str, dtype: str) -> dict:
    """The entry for (arch, dtype), else the nearest older architecture's entry for dtype."""
    exact = table.get((arch, dtype))
    if exact is not None:
        return exact
    wanted = arch_number(arch)
    candidates = [(arch_number(a), a) for (a, d) in table if d == dtype and arch_number(a) <= wanted]
    if not candidates:
        raise UnsupportedError(f"rtscan has no kernel for {dtype} on {arch}: it needs sm_80 or newer "
                               f"(cp.async) and one of the dtypes {sorted({d for _, d in table})}")
    return table[(max(candidates)[1], dtype)]
