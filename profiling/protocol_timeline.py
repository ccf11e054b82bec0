"""Where the look-back protocol's time goes, tile by tile, on one long sequence.

profiling/timeline.py's stamps, plus two inside tile_carry (kernels_cu/tile_state.cuh): when the
segment mates' aggregates had all been seen, and when the look-back over segments returned. A
segment's map is published by its last tile right after it has seen its own mates, so these
stamps also date the words the look-back waits for. The script prints how long each wait lasted
after the word it waited for was written: what one observation of a published word costs.

It compiles copies of lookback.cu and tile_state.cuh with the stamps added, in a temporary folder
(kernels_cu/ is not changed). Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/protocol_timeline.py --shape 352x56r16b2p1 --log2 28
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # timeline.py and sweep.py beside this script
import timeline  # noqa: E402

INSIDE_STAMPS = 2  # per tile: mates seen, look-back done


def _inside_stamp(k: int) -> str:
    return f"    if (lane == 0) protocol_stamps[tile * {INSIDE_STAMPS} + {k}] = stamp();\n"


_PREFIX = ("    const SegmentPrefix prefix = segment_prefix<ATOMIC_POLLS>(ws.tiles(), tile, position, tile_map, "
           "generation);\n")
_END_STATE = "    if (lane == 0 && has_successor && ends_segment)\n        publish_inclusive("
# (anchor in tile_state.cuh, text put in its place): each anchor must occur exactly once. The stamp
# helper is timeline.py's, which it otherwise adds to lookback.cu.
_EDITS = (
    ("namespace rtscan {\n", "namespace rtscan {\n" + timeline.STAMP_HELPER
     + "__device__ unsigned long long* protocol_stamps;  // set by each block's thread 0\n"),
    (_PREFIX, _PREFIX + _inside_stamp(0)),
    (_END_STATE, _inside_stamp(1) + _END_STATE),
)
# After timeline.py's own edits of lookback.cu: each block points protocol_stamps past its stamps.
_STARTED = "    const unsigned long long started = stamp();"
_POINT = _STARTED + "\n    if (threadIdx.x == 0) protocol_stamps = times + " + str(timeline.STAMPS) + " * num_tiles;"


def instrument_tile_state(text: str) -> str:
    """tile_state.cuh's text with the two stamps in tile_carry."""
    return timeline.apply_edits(text, _EDITS, "tile_state.cuh", "protocol_timeline.py")


def instrument_lookback(text: str) -> str:
    """timeline.py's instrumented lookback.cu, without its stamp helper (tile_state.cuh has it)
    and pointing protocol_stamps at the second part of the stamp buffer."""
    text = timeline.instrument(text).replace(timeline.STAMP_HELPER, "", 1)
    if text.count(_STARTED) != 1:
        raise ValueError("profiling/timeline.py's block-start stamp moved; update protocol_timeline.py")
    return text.replace(_STARTED, _POINT)


@contextlib.contextmanager
def instrumented_kernels(instrument=instrument_tile_state, header: str = "tile_state.cuh"):
    """A temporary copy of kernels_cu/ with `header` (tile_state.cuh unless given) instrumented by
    `instrument` (this script's stamps unless given), made rtscan's kernels folder while the
    context lasts (the instrumented kernel itself is compiled from text)."""
    from rtscan import _compile

    original = _compile.kernels_dir
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "kernels_cu"
        shutil.copytree(original(), copy)
        (copy / header).write_text(instrument((copy / header).read_text()))
        _compile.kernels_dir = lambda: copy
        try:
            yield copy
        finally:
            _compile.kernels_dir = original


def analyse(main: np.ndarray, inside: np.ndarray) -> list[str]:
    """Lines of text: timeline.py's analysis, then, for tiles of a sequence's third segment on, how
    long each wait inside the protocol lasted (microseconds)."""
    lines = timeline.analyse(main)
    tiles = len(main)
    origin = main[:, 0].min()
    aggregate, carry = main[:, 1] - origin, main[:, 2] - origin
    mates_seen, looked_back = inside[:, 0] - origin, inside[:, 1] - origin
    tile = np.arange(tiles)
    segment_start = tile - tile % 32
    all_earlier_out = np.maximum.accumulate(np.concatenate([[0], aggregate[:-1]]))
    # A segment's first tile has no mates: NaN, left out of the percentiles.
    last_mate_out = np.array([aggregate[s:t].max() if t > s else np.nan for t, s in zip(tile, segment_start)])
    previous_map_out = mates_seen[np.maximum(segment_start - 1, 0)]  # the previous segment's last tile
    chosen = (tile >= 64) & (tile < tiles - 1)

    def row(name, values):
        picked = values[chosen]
        return f"  {name:<44}" + " ".join(f"{np.nanpercentile(picked, p) / 1e3:7.2f}" for p in (5, 25, 50, 75, 95))

    return lines + [
        f"{int(chosen.sum())} tiles of the third segment on; percentiles (us)   5%     25%     50%     75%     95%",
        row("mates seen - own aggregate", mates_seen - aggregate),
        row("mates seen - last mate's aggregate", mates_seen - last_mate_out),
        row("previous segment's map out - all earlier out", previous_map_out - all_earlier_out),
        row("look-back done - mates seen", looked_back - mates_seen),
        row("look-back done - previous segment's map out", looked_back - previous_map_out),
        row("look-back done - all earlier out", looked_back - all_earlier_out),
        row("carry - look-back done", carry - looked_back),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="352x56r16b2p1", help="as profiling/timeline.py's --shape")
    parser.add_argument("--log2", type=int, default=28, help="one sequence of 2^LOG2 steps")
    args = parser.parse_args(argv)
    if timeline.parse_shape(args.shape)["segment_tiles"] != 32:
        parser.error("the analysis assumes segments of 32 tiles (tile_state.cuh's SEGMENT_TILES)")
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/protocol_timeline.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    with instrumented_kernels():
        main_part, inside = timeline.capture(args.shape, args.log2, instrument=instrument_lookback,
                                             extra_stamps=INSIDE_STAMPS)
    print(f"protocol timeline of {args.shape} on one sequence of 2^{args.log2}")
    print("\n".join(analyse(main_part, inside)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
