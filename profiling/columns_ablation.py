"""Where columns_lookback loses on time-major rows off 128-byte lines: twins of columns_timeline.py's
instrumented kernel, each changing one thing, and each twin's span on rows on and off the lines.

Rows of 8184 or 8191 sequences put step t of sequence s at t * N + s, so most of a warp's 128-byte
row segments straddle two lines (8184: whole 32-byte sectors; 8191: cut ones), and the scan lost
15-25 % there where a plain column copy lost 1-20 % (NOTES 163; P264 put the loss in the finish, its
stores' phase 1.9 -> 3.2-3.5 us a tile). The twins compute wrong results and are for timing only:
  nocarry        every tile takes a carry of 0 without the look-back (no tile waits, none publishes)
  csstores       the stores are st.global.cs, as the column copy's
  alignedstores  each warp stores its row segment to the 128-byte line its group's segment starts in
                 (the same bytes a step, inside the same rows' span of memory, but whole lines)
  alignedloads   each warp loads from that line likewise (registers and staged copies)
  aligned        both
  alignedstaged  only the staged steps' copies (cp.async, 4 bytes a lane) load from that line
  alignedregisters  only the registers' loads (ld.global.cg) do
  pairsnext      odd warps copy the even warp's staged steps of the next group (32 sequences on), so
                 two warps of one SM copy neighbouring rows, which share a line off the lines
  pairsfar       the same two groups on (no line shared): pairsnext's control
against `base`, the instrumented kernel as it is. The line twins are for time-major rows of one
batch axis (a sequence's column its offset in the row); on 8192 sequences they read the base's
addresses but not its code (their arithmetic cost that row 2-12 %: P268, P269), so each twin's rows
compare with its own 8192. What they found: NOTES 166 and 167 (a row's second line is the price,
most of it in the staged copies).

Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/columns_ablation.py [--shape 256x32r16b3d1] [--rows 8192x2048,8184x2048,8191x2048]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # the timeline scripts beside this one, also under python -P
import columns_timeline  # noqa: E402
import timeline  # noqa: E402
from ablation import spans  # noqa: E402
from columns_sweep import parse_row  # noqa: E402

_STORE = "            out[out_offset + (first + i) * layout.out_time_stride] = state;\n"
_NO_CARRY = ("        if (has_seq && lane < SEQUENCES) {\n",
             "        if (has_seq && lane < SEQUENCES && chunk < 0) {\n")
_CS_STORES = (_STORE, "            __stcs(out + out_offset + (first + i) * layout.out_time_stride, state);\n")
_ALIGNED_STORES = (_STORE, "            out[((out_offset - column + (first + i) * layout.out_time_stride) & ~31LL)"
                           " + column] = state;\n")
# Step i's element for this lane in the line its group's row segment starts in.
_FIRST_OFFSET = "    const long long first_offset = in_offset + first * layout.in_time_stride;\n"
_ON_LINE = (_FIRST_OFFSET, _FIRST_OFFSET + "    auto on_line = [&](int i) {\n"
            "        return ((in_offset - column + (first + i) * layout.in_time_stride) & ~31LL) + column;\n    };\n")
_STAGED_LOADS = ("        stage_steps<1>(staged_a + staged_slot(i), a + first_offset, layout.in_time_stride, i, "
                 "count);\n"
                 "        stage_steps<1>(staged_b + staged_slot(i), b + first_offset, layout.in_time_stride, i, "
                 "count);\n",
                 "        const long long moved = on_line(i) - i * layout.in_time_stride;\n"
                 "        stage_steps<1>(staged_a + staged_slot(i), a + moved, layout.in_time_stride, i, count);\n"
                 "        stage_steps<1>(staged_b + staged_slot(i), b + moved, layout.in_time_stride, i, count);\n")
_REGISTER_LOADS = ("        const long long offset = in_offset + (first + i) * layout.in_time_stride;\n",
                   "        const long long offset = on_line(i);\n")
_ALIGNED_LOADS = (_ON_LINE, _STAGED_LOADS, _REGISTER_LOADS)


def _paired(columns: int) -> tuple:
    """Odd warps copy their staged steps from the even warp's steps `columns` sequences on (where
    that group exists): two warps of one SM copying one step's rows of neighbouring groups at once."""
    return ((_FIRST_OFFSET, _FIRST_OFFSET
             + f"    const bool paired = (warp & 1) && tile.group + {columns // 32} < "
             "lane_groups<SEQUENCES>(layout.num_seqs);\n"
             "    const long long staged_offset =\n"
             f"        paired ? in_offset + (first - ITEMS) * layout.in_time_stride + {columns} : first_offset;\n"),
            (_STAGED_LOADS[0], _STAGED_LOADS[0].replace("+ first_offset", "+ staged_offset")))
TWINS = {"base": (), "nocarry": (_NO_CARRY,), "csstores": (_CS_STORES,), "alignedstores": (_ALIGNED_STORES,),
         "alignedloads": _ALIGNED_LOADS, "aligned": _ALIGNED_LOADS + (_ALIGNED_STORES,),
         "alignedstaged": (_ON_LINE, _STAGED_LOADS), "alignedregisters": (_ON_LINE, _REGISTER_LOADS),
         "pairsnext": _paired(32), "pairsfar": _paired(64)}
CAPTURES = 3  # launches' spans a twin and row; the median is printed


def instrument(twin: str):
    """The text maker columns_timeline.capture takes: columns_lookback.cu instrumented, then `twin`'s edits."""
    def make(text: str) -> str:
        return timeline.apply_edits(columns_timeline.instrument(text), TWINS[twin], "columns_lookback.cu",
                                    "columns_ablation.py")
    return make


def finish(stamps: np.ndarray) -> float:
    """The median of the tiles' finish (end - carry), us."""
    return float(np.median(stamps[:, 3] - stamps[:, 2])) / 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="256x32r16b3d1", help="as columns_sweep.py's (default: sm_90's long tile)")
    parser.add_argument("--rows", default="8192x2048,8184x2048,8191x2048",
                        help="comma-separated SxL rows: S sequences of L steps, laid out (L, S)")
    parser.add_argument("--twins", default=",".join(TWINS), help="comma-separated, of " + ", ".join(TWINS))
    args = parser.parse_args(argv)
    rows = [parse_row(row) for row in args.rows.split(",")]
    if any(dim != 0 for _, dim in rows):
        parser.error("--rows must be SxL")
    twins = args.twins.split(",")
    if not set(twins) <= set(TWINS):
        parser.error(f"--twins: unknown {sorted(set(twins) - set(TWINS))}")
    columns_timeline.launch_shape(args.shape)  # a bad shape fails here, before the GPU is asked for
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/columns_ablation.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    print(f"ablation twins of columns_lookback {args.shape}; span and the tiles' median finish (us), "
          f"median of {CAPTURES} launches")
    for twin in twins:
        for (length, sequences), _ in rows:
            measured = [columns_timeline.capture(args.shape, sequences, length, instrument=instrument(twin))[0]
                        for _ in range(CAPTURES)]
            span = np.median([spans(stamps)[0] for stamps in measured])
            finishes = np.median([finish(stamps) for stamps in measured])
            print(f"{twin:16s} {sequences}x{length}: span {span:7.2f}, finish {finishes:5.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
