"""Which part of a tile's own work lengthens a launch: twins of timeline.py's instrumented
lookback.cu with one part removed, and each twin's span (first block's entry to last block's end).

The twins compute wrong results and are for timing only:
  norewrite    the data warps skip the rewrite they do while the protocol warp waits (each step's
               map from its warp span's start), so the second pass applies the unrewritten maps;
               only for shapes without runs (RUN_CHUNKS 1), which alone have a rewrite
  nofirstscan  the first pass composes each chunk's (and each run's) maps without the warp scan
  nocarry      the protocol warp takes a carry of 0 without the look-back (no tile waits, none
               publishes)
  all          all of these together
against `base`, the instrumented kernel as it is. NOTES 90 holds what the first run found, NOTES
94 what the run on the long shape with runs found.

Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/ablation.py [--shape 352x48r16b2d1p1u2] [--log2 22] [--sequences 64,256,1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # timeline.py beside this script, also under python -P
import timeline  # noqa: E402

# (anchor in the instrumented lookback.cu, its replacement): each anchor must occur exactly once.
_NO_REWRITE = ("    } else if (PROTOCOL_WARP && RUN == 1) {", "    } else if (PROTOCOL_WARP && RUN == 1 && tile < 0) {")
_NO_FIRST_SCAN = ("            const Affine<float> prefix = chunk_prefix(maps, warp_running);",
                  "            const Affine<float> prefix = maps[0];\n"
                  "            warp_running = compose(maps[VEC - 1], warp_running);")
_NO_RUN_SCAN = ("            kept(REGISTER_CHUNKS + r) = lane_prefix_of(lane_map, warp_running);",
                "            kept(REGISTER_CHUNKS + r) = lane_map;\n"
                "            warp_running = compose(lane_map, warp_running);")
_NO_CARRY = ("        const float carry = tile_carry<", "        const float carry = tile >= 0 ? 0.0f : tile_carry<")
TWINS = {"base": (), "norewrite": (_NO_REWRITE,), "nofirstscan": (_NO_FIRST_SCAN, _NO_RUN_SCAN),
         "nocarry": (_NO_CARRY,), "all": (_NO_REWRITE, _NO_FIRST_SCAN, _NO_RUN_SCAN, _NO_CARRY)}


def twins_for(shape_text: str) -> dict:
    """The twins that remove something from `shape_text`'s kernel: with runs it has no rewrite."""
    if timeline.parse_shape(shape_text).get("run_chunks", 1) == 1:
        return TWINS
    return {name: tuple(edit for edit in edits if edit is not _NO_REWRITE)
            for name, edits in TWINS.items() if name != "norewrite"}


CAPTURES = 5  # launches' spans a twin and shape; the median is printed


def instrument(twin: str):
    """The text maker timeline.capture takes: lookback.cu instrumented, then `twin`'s edits."""
    def make(text: str) -> str:
        return timeline.apply_edits(timeline.instrument(text), TWINS[twin], "lookback.cu", "ablation.py")
    return make


def spans(stamps: np.ndarray) -> tuple[float, list[float]]:
    """A launch's span in us, and the medians of its tiles' start, own-done, aggregate, carry and end
    (us from the first block's entry)."""
    origin = stamps[:, 6].min()
    medians = [float(np.median(stamps[:, k] - origin)) / 1e3 for k in (0, 5, 1, 2, 3)]
    return float(stamps[:, 3].max() - origin) / 1e3, medians


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="352x48r16b2d1p1u2", help="as timeline.py's (default: sm_90's long shape)")
    parser.add_argument("--log2", type=int, default=22, help="2^LOG2 steps in all")
    parser.add_argument("--sequences", default="64,256,1", help="comma-separated row counts")
    args = parser.parse_args(argv)
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/ablation.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    print(f"ablation twins of {args.shape} at 2^{args.log2} steps; span and phase medians (us), "
          f"median of {CAPTURES} launches")
    for twin in twins_for(args.shape):
        for sequences in (int(s) for s in args.sequences.split(",")):
            measured = [spans(timeline.capture(args.shape, args.log2, instrument=instrument(twin),
                                               sequences=sequences)[0]) for _ in range(CAPTURES)]
            phases = np.median(np.array([m[1] for m in measured]), axis=0)
            print(f"{twin:12s} {sequences:5d} rows: span {np.median([m[0] for m in measured]):6.2f} "
                  f"(min {min(m[0] for m in measured):6.2f}); start {phases[0]:.2f} own-done {phases[1]:.2f} "
                  f"aggregate {phases[2]:.2f} carry {phases[3]:.2f} end {phases[4]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
