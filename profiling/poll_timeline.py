"""Each poll of the one-level look-back, tile by tile, on one long sequence: slow round trips, or
polls that saw too little?

profiling/timeline.py's stamps, plus, inside lookback_carry (kernels_cu/tile_state.cuh), when each
of a tile's first TIMED_POLLS polls of its nearest window was issued and when its reads had
returned, and how many polls and windows the walk took. From timeline.py's stamps the script
also dates the moment a tile's carry became determinable: some earlier tile had published its end
state (its carry stamp) and every tile between had published its aggregate (NOTES item 52).

It compiles copies of lookback.cu and tile_state.cuh with the stamps added, in a temporary folder
(kernels_cu/ is not changed). For the one-level shapes (SEGMENT 1, sm_90's large shape), where a
segment is a tile. Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/poll_timeline.py --log2 24 --out /tmp/polls
(--out saves the raw stamps, per tile and per poll, as .npy).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # timeline.py and protocol_timeline.py beside this script
import protocol_timeline  # noqa: E402
import timeline  # noqa: E402

TIMED_POLLS = 8
POLL_STAMPS = 2 * TIMED_POLLS + 1  # per tile: (issued, returned) per timed poll, then polls | windows << 32
_SLOT = f"poll_stamps[segment * {POLL_STAMPS}"
# (anchor in tile_state.cuh, text put in its place): each anchor must occur exactly once.
_EDITS = (
    ("namespace rtscan {\n", "namespace rtscan {\n" + timeline.STAMP_HELPER
     + "__device__ unsigned long long* poll_stamps;  // set by each block's thread 0\n"),
    ("    for (long long window = 0;; ++window) {\n", "    unsigned polls = 0;\n    for (long long window = 0;; ++window) {\n"),
    ("        while (true) {\n", "        while (true) {\n            const unsigned long long issued = stamp();\n"),
    ("            if (__all_sync(0xffffffffu, ready)) break;\n",
     f"            if (lane == 0 && window == 0 && polls < {TIMED_POLLS}) {{\n"
     f"                {_SLOT} + 2 * polls] = issued;\n"
     f"                {_SLOT} + 2 * polls + 1] = stamp();\n"
     "            }\n"
     "            if (window == 0) ++polls;\n"
     "            if (__all_sync(0xffffffffu, ready)) break;\n"),
    ("        return state;\n",
     f"        if (lane == 0) {_SLOT} + {2 * TIMED_POLLS}] = polls | ((unsigned long long)window << 32);\n"
     "        return state;\n"),
)
_POINT = protocol_timeline._STARTED + (
    "\n    if (threadIdx.x == 0) poll_stamps = times + " + str(timeline.STAMPS) + " * num_tiles;")


def instrument_tile_state(text: str) -> str:
    """tile_state.cuh's text with the poll stamps in lookback_carry."""
    return timeline.apply_edits(text, _EDITS, "tile_state.cuh", "poll_timeline.py")


def instrument_lookback(text: str) -> str:
    """timeline.py's instrumented lookback.cu, without its stamp helper (tile_state.cuh has it)
    and pointing poll_stamps at the second part of the stamp buffer."""
    return protocol_timeline.instrument_lookback(text).replace(protocol_timeline._POINT, _POINT)


def determinable(aggregate: np.ndarray, carry: np.ndarray) -> np.ndarray:
    """For each tile, the first moment some earlier tile had its carry (so its end state was out)
    and every tile between had its aggregate out: when a walk could have settled its carry. Tile 0
    (which needs none) gets 0."""
    ready = np.zeros(len(carry))
    for k in range(1, len(carry)):
        best, between = np.inf, -np.inf  # between: the latest aggregate of the tiles after j
        for j in range(k - 1, -1, -1):
            best = min(best, max(carry[j], between))
            between = max(between, aggregate[j])
            if between >= best:  # no farther j can settle it sooner
                break
        ready[k] = best
    return ready


def analyse(main: np.ndarray, polls: np.ndarray) -> list[str]:
    """Lines of text: timeline.py's analysis, then the polls of the first wave (tiles started before
    any tile ended) and of the later tiles (microseconds)."""
    lines = timeline.analyse(main)
    origin = main[:, 0].min()
    start, aggregate, carry, end = (main[:, k] - origin for k in range(4))
    counts = (polls[:, 2 * TIMED_POLLS] & 0xFFFFFFFF).astype(np.int64)
    windows = polls[:, 2 * TIMED_POLLS] >> 32
    issued, returned = polls[:, 0:2 * TIMED_POLLS:2] - origin, polls[:, 1:2 * TIMED_POLLS:2] - origin
    ready = determinable(aggregate, carry)
    timed = np.arange(TIMED_POLLS)[None, :] < np.minimum(counts, TIMED_POLLS)[:, None]
    first_wave = timeline.in_first_wave(start, end)
    first_wave[0] = False
    later = ~first_wave
    later[0] = False
    # The poll that settled the carry: the last one, when it was timed and the walk stayed in its window.
    settled = (counts <= TIMED_POLLS) & (windows == 0) & (counts > 0)
    last = np.clip(counts - 1, 0, TIMED_POLLS - 1)
    last_issued = issued[np.arange(len(counts)), last]

    def row(name, values, unit=1e3):  # stamps in ns, printed in us; counts with unit 1
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0:
            return f"  {name:<44} (none)"
        return f"  {name:<44}" + " ".join(f"{np.percentile(values, p) / unit:7.2f}" for p in (5, 25, 50, 75, 95))

    for name, chosen in (("first wave", first_wave), ("later tiles", later)):
        lines += [
            f"{name}: {int(chosen.sum())} tiles; percentiles (us)          5%     25%     50%     75%     95%",
            row("round trip of a poll", (returned - issued)[chosen[:, None] & timed]),
            row("polls of the nearest window (count)", counts[chosen], unit=1),
            row("windows walked past (count)", windows[chosen], unit=1),
            row("determinable - own aggregate", (ready - aggregate)[chosen]),
            row("carry - determinable", (carry - ready)[chosen]),
            row("settling poll issued - determinable", (last_issued - ready)[chosen & settled]),
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="352x48r16b2d1s1p1a1c1u2",
                        help="as profiling/timeline.py's --shape, one-level (default: sm_90's large shape since P161)")
    parser.add_argument("--log2", type=int, default=24, help="one sequence of 2^LOG2 steps")
    parser.add_argument("--out", type=Path, help="folder for the raw stamps (.npy)")
    args = parser.parse_args(argv)
    if timeline.parse_shape(args.shape)["segment_tiles"] != 1:
        parser.error("the polls are stamped per tile: the shape must walk one level (s1)")
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/poll_timeline.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    with protocol_timeline.instrumented_kernels(instrument_tile_state):
        main_part, polls = timeline.capture(args.shape, args.log2, instrument=instrument_lookback,
                                            extra_stamps=POLL_STAMPS)
    if args.out:
        stem = f"poll-timeline-{args.shape}-log2-{args.log2}"
        timeline.save_stamps(args.out, f"{stem}-tiles", main_part)
        timeline.save_stamps(args.out, f"{stem}-polls", polls)
    print(f"poll timeline of {args.shape} on one sequence of 2^{args.log2}")
    print("\n".join(analyse(main_part, polls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
