"""Per-tile timeline of `columns_lookback` on a time-major batch, and where each tile's time went.

An instrumented copy of kernels_cu/columns_lookback.cu (the file is not changed) stamps
%globaltimer at the moments profiling/timeline.py stamps in lookback_scan, in the same layout, so
its analysis applies: block entry (before the ticket), start (ticket drawn), thread 0's steps
loaded and composed, the aggregate about to be published and the carry known (lane 0 of warp 0,
so sequence 0 of the tile's group), end (thread 0). Tiles are indexed by ticket, chunk-major, so a
batch of one group (SEQUENCES or fewer sequences) is one chain and "earlier tiles" are exactly a
tile's predecessors; with several groups they include other chains' tiles.

With --inside, lane 0's look-back (kernels_cu/lane_lookback.cuh, instrumented in a temporary
copy of kernels_cu/ as profiling/protocol_timeline.py does) also records how many rounds of polls
it took, in which window it found a finished predecessor, when it found it (the fold after that is
"carry - found") and when its first round of polls came back.

Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/columns_timeline.py --shape 512x64r32b1d2s16 --row 16x1048576 [--inside]
(--shape in profiling/columns_sweep.py's form; --row SxL: S sequences of L steps laid out (L, S).)
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # timeline.py and columns_sweep.py beside this script
import protocol_timeline  # noqa: E402
import timeline  # noqa: E402
from columns_sweep import parse_row, parse_shape  # noqa: E402

# (anchor in columns_lookback.cu, text put in its place): each anchor must occur exactly once.
_EDITS = (
    ("namespace rtscan {\n", "namespace rtscan {\n" + timeline.STAMP_HELPER),
    ("columns_lookback_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,\n"
     "                      const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, "
     "long long tiles_per_seq,\n"
     "                      long long num_tiles) {",
     "columns_lookback_scan_timeline(const float* __restrict__ a, const float* __restrict__ b,\n"
     "                      float* __restrict__ out, const float* __restrict__ h0, SeqLayout layout, "
     "TileWorkspace ws,\n"
     "                      long long tiles_per_seq, long long num_tiles, unsigned long long* times) {"),
    ("    if (threadIdx.x == 0) {\n        long long ticket;\n",
     "    const unsigned long long entered = stamp();\n    if (threadIdx.x == 0) {\n        long long ticket;\n"),
    ("    const unsigned generation = shared_generation;\n",
     "    const unsigned generation = shared_generation;\n    const unsigned long long started = stamp();\n"
     "    unsigned long long* const stamps = times + shared_ticket * 7;\n"),
    ("    span_maps[span][column] = running;\n",
     "    span_maps[span][column] = running;\n    if (threadIdx.x == 0) {\n        unsigned sm;\n"
     "        asm(\"mov.u32 %0, %smid;\" : \"=r\"(sm));\n        stamps[0] = started;\n        stamps[4] = sm;\n"
     "        stamps[5] = stamp();\n        stamps[6] = entered;\n    }\n"),
    ("        const long long slot = lane_slot<SEQUENCES>(tile, tiles_per_seq, lane);\n",
     "        if (lane == 0) stamps[1] = stamp();\n"
     "        const long long slot = lane_slot<SEQUENCES>(tile, tiles_per_seq, lane);\n"),
    ("        if (lane < SEQUENCES) shared_carry[lane] = carry;\n",
     "        if (lane == 0) stamps[2] = stamp();\n        if (lane < SEQUENCES) shared_carry[lane] = carry;\n"),
    ("}\n\n}  // namespace rtscan", "    if (threadIdx.x == 0) stamps[3] = stamp();\n}\n\n}  // namespace rtscan"),
)


def instrument(text: str) -> str:
    """columns_lookback.cu's text with the stamps added, as kernel template
    `columns_lookback_scan_timeline`."""
    return timeline.apply_edits(text, _EDITS, "columns_lookback.cu", "columns_timeline.py")


INSIDE_STAMPS = 4  # per tile, lane 0: poll rounds, window of the finished predecessor, found, first return
_NOTHING = "    const PredecessorView nothing = {false, false, 0.0f, 0.0f, 0.0f};\n"
_READY = "            if (ready) break;\n"
_FOUND = "        float state = 0.0f;\n"
_INSIDE_EDITS = (
    ("namespace rtscan {\n", "namespace rtscan {\n" + timeline.STAMP_HELPER
     + "__device__ unsigned long long* lane_stamps;  // set by each block's thread 0\n"),
    (_NOTHING, _NOTHING + "    unsigned long long rounds = 0, first_return = 0;\n"),
    (_READY, "            if (++rounds == 1) first_return = stamp();  // this round's polls are back\n" + _READY),
    (_FOUND, "        if ((threadIdx.x & 31) == 0) {\n"
             "            unsigned long long* const mine = lane_stamps + slot / SEQUENCES * 4;\n"
             "            mine[0] = rounds;\n            mine[1] = (unsigned long long)window;\n"
             "            mine[2] = stamp();\n            mine[3] = first_return;\n        }\n" + _FOUND),
)
# After _EDITS: each block points lane_stamps past the main stamps (the helper is lane_lookback.cuh's).
_STARTED = "    const unsigned long long started = stamp();\n"


def instrument_lane_lookback(text: str) -> str:
    """lane_lookback.cuh's text with lane 0's look-back stamps."""
    return timeline.apply_edits(text, _INSIDE_EDITS, "lane_lookback.cuh", "columns_timeline.py")


def instrument_with_inside(text: str) -> str:
    """instrument(text) without its stamp helper (the instrumented lane_lookback.cuh has it),
    pointing lane_stamps at the second part of the stamp buffer."""
    text = instrument(text).replace(timeline.STAMP_HELPER, "", 1)
    return text.replace(_STARTED, _STARTED + f"    if (threadIdx.x == 0) lane_stamps = times + {timeline.STAMPS} "
                        "* num_tiles;\n", 1)


def launch_shape(shape_text: str):
    """The LaunchShape of a columns_sweep.py shape text, its other fields from sm_90's short entry."""
    from rtscan import registry, tuning

    fields = dict(tuning.COLUMNS_LOOKBACK[("sm_90", "float32")]["short"], **parse_shape(shape_text, "columns_lookback"))
    return registry.entry_shape(fields, 1)


def capture(shape_text: str, sequences: int, length: int, instrument=instrument,
            extra_stamps: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Stamps of every tile of a time-major batch (length, sequences) from the third launch:
    (tiles x timeline.STAMPS indexed by ticket, tiles x extra_stamps indexed by group and chunk),
    int64; `instrument` makes the kernel's text from columns_lookback.cu's."""
    from rtscan import _bench, _compile, _driver, _kernels, _layout, _workspace, registry

    variant = registry.resolve("columns_lookback")
    shape = launch_shape(shape_text)
    _driver.make_current(0)
    expression = variant.name_expression(shape).replace("_scan<", "_scan_timeline<")
    text = instrument((_compile.kernels_dir() / "columns_lookback.cu").read_text()).encode()
    module = _compile.nvrtc_compile("columns_lookback.cu", (expression,),
                                    _compile.CompileOptions(arch=_kernels.device_arch(0)), text=text)
    function = _driver.get_function(_driver.load_module(module.cubin), module.lowered_names[expression])
    shared_bytes = variant.shared_bytes(shape)
    _driver.allow_shared_memory(function, shared_bytes)

    n = sequences * length
    tiles_per_seq, tiles = variant.tile_counts(shape, sequences, length)
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    a, b, out = (_bench.DeviceBuffer(n) for _ in range(3))
    a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
    b.fill(rng.standard_normal(n, dtype=np.float32), stream)
    times = _bench.DeviceBuffer(2 * (timeline.STAMPS + extra_stamps) * tiles)  # 64-bit stamps, float32-counted
    plan = _layout.plan((length, sequences), (sequences, 1), (sequences, 1), 0, False)
    workspace = _workspace.acquire(0, stream, tiles * shape.sequences_per_tile)
    arguments = (ctypes.c_void_p(a.pointer), ctypes.c_void_p(b.pointer), ctypes.c_void_p(out.pointer),
                 ctypes.c_void_p(0), plan.layout, workspace, ctypes.c_longlong(tiles_per_seq),
                 ctypes.c_longlong(tiles), ctypes.c_void_p(times.pointer))
    pointers = (ctypes.c_void_p * len(arguments))(*(ctypes.addressof(x) for x in arguments))
    for _ in range(3):  # the last launch's stamps are kept: caches and clocks warm
        _driver.launch(function, tiles, shape.threads, shared_bytes, stream, ctypes.addressof(pointers))
    stamps = np.empty((timeline.STAMPS + extra_stamps) * tiles, np.int64)
    _driver.copy_to_host(stamps.ctypes.data, times.pointer, stamps.nbytes, stream)
    _driver.synchronize(stream)
    _driver.destroy_stream(stream)
    split = timeline.STAMPS * tiles
    return stamps[:split].reshape(tiles, timeline.STAMPS), stamps[split:].reshape(tiles, extra_stamps)


def analyse_inside(main: np.ndarray, inside: np.ndarray) -> list[str]:
    """Lane 0's look-back, for tiles past their sequence's first chunk (one group: indexed alike)."""
    origin = main[:, 6].min()
    walked = inside[:, 2] > 0  # chunk 0 never looks back
    aggregate, carry = main[walked, 1] - origin, main[walked, 2] - origin
    rounds, window, found, first_return = inside[walked, 0], inside[walked, 1], inside[walked, 2] - origin, \
        inside[walked, 3] - origin

    def row(name, values, scale=1e3):
        return f"  {name:<38}" + " ".join(f"{np.percentile(values, p) / scale:7.2f}" for p in timeline.PERCENTILES)

    return [f"lane 0's look-back on {int(walked.sum())} tiles; percentiles     "
            + " ".join(f"{p:>6}%" for p in timeline.PERCENTILES),
            row("poll rounds", rounds, 1), row("window of the finished one", window, 1),
            row("first round back - aggregate (us)", first_return - aggregate),
            row("found - aggregate (us)", found - aggregate),
            row("fold: carry - found (us)", carry - found)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="512x64r32b1d2s16",
                        help="BLOCKxITEMS[rREG]bMIN_BLOCKSdDEPTH[a1][sSEQUENCES]")
    parser.add_argument("--row", default="16x1048576", help="SxL: S sequences of L steps, laid out (L, S)")
    parser.add_argument("--out", type=Path, help="folder for the raw stamps (.npy)")
    parser.add_argument("--inside", action="store_true", help="also stamp lane 0's look-back (one group only)")
    args = parser.parse_args(argv)
    (length, sequences), dim = parse_row(args.row)
    if dim != 0:
        parser.error("--row must be SxL")
    launch_shape(args.shape)  # a bad shape fails here, before the GPU is asked for
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/columns_timeline.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    if args.inside:
        if sequences > launch_shape(args.shape).sequences_per_tile:
            parser.error("--inside indexes its stamps by chunk: one group of sequences only")
        with protocol_timeline.instrumented_kernels(instrument_lane_lookback, "lane_lookback.cuh"):
            stamps, inside = capture(args.shape, sequences, length, instrument_with_inside, INSIDE_STAMPS)
    else:
        stamps, inside = capture(args.shape, sequences, length)
    if args.out:
        timeline.save_stamps(args.out, f"columns-timeline-{args.shape}-{args.row}", np.hstack([stamps, inside]))
    print(f"timeline of columns_lookback {args.shape} on time-major {args.row}")
    print("\n".join(timeline.analyse(stamps) + (analyse_inside(stamps, inside) if args.inside else [])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
