"""Per-tile timeline of `lookback_regs` on one long sequence (or a batch of rows), and where each
tile's time went.

An instrumented copy of kernels_cu/lookback.cu (the file is not changed) stamps %globaltimer (32 ns
steps on an H200) six times per tile: block entry (before claim_tile, so before its stagger and
its ticket), block start (once its ticket is drawn), thread 0's first pass done (its copies landed
and its chunks scanned, which overlap on the 16-byte path: P38), aggregate about to be published
and carry known (lane 0 of the warp running the look-back), end (thread 0). Times count from the
first block's entry. The phases between
them, the time from when every earlier tile of its row had its aggregate out to the carry (the
protocol's own delay), how many blocks load (or scan what landed) or wait over time, and, for
rows of 2-8 tiles, medians by a tile's place in its row and the protocol's delay by what the other
blocks on a tile's SM were doing are printed; the raw stamps are saved as .npy.

Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/timeline.py --shape 352x48r16b2s1p1a1c1u2 --log2 28 --out /tmp/timeline
(--shape defaults to the present GPU's tuned shape for the largest launches; --sequences S scans S
rows of 2^LOG2 / S steps, in the shape's ticket order).
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # sweep.py beside this script, also under python -P
from sweep import format_shape, parse_shape  # noqa: E402

STAMPS = 7  # per tile: start, aggregate, carry, end, SM id, thread 0's first pass done, entry
PERCENTILES = (5, 25, 50, 75, 95, 99)

STAMP_HELPER = ("__device__ __forceinline__ unsigned long long stamp() {\n    unsigned long long t;\n"
                "    asm volatile(\"mov.u64 %0, %globaltimer;\" : \"=l\"(t));\n    return t;\n}\n")

# (anchor in lookback.cu, text put in its place): each anchor must occur exactly once.
_EDITS = (
    ("namespace rtscan {\n", "namespace rtscan {\n" + STAMP_HELPER),
    ("lookback_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,\n"
     "              const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,\n"
     "              long long num_tiles) {",
     "lookback_scan_timeline(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,\n"
     "              const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,\n"
     "              long long num_tiles, unsigned long long* times) {"),
    ("    const ClaimedTile claimed = claim_tile(",
     "    const unsigned long long entered = stamp();\n    const ClaimedTile claimed = claim_tile("),
    ("    const long long tile = claimed.tile;\n",
     "    const long long tile = claimed.tile;\n    const unsigned long long started = stamp();\n"),
    ("        if (lane == 0) shared_warp_prefix[warp] = warp_running;",
     "        if (lane == 0) shared_warp_prefix[warp] = warp_running;\n        if (threadIdx.x == 0) {\n"
     "            unsigned sm;\n            asm(\"mov.u32 %0, %smid;\" : \"=r\"(sm));\n"
     "            times[tile * 7 + 0] = started;\n            times[tile * 7 + 4] = sm;\n"
     "            times[tile * 7 + 5] = stamp();\n            times[tile * 7 + 6] = entered;\n        }"),
    ("        SegmentPrefix segment_held;",
     "        if (lane == 0) times[tile * 7 + 1] = stamp();\n        SegmentPrefix segment_held;"),
    ("        if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;",
     "        if (lane == 0) times[tile * 7 + 2] = stamp();\n"
     "        if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;"),
    ("}\n\n}  // namespace rtscan",
     "    if (threadIdx.x == 0) times[tile * 7 + 3] = stamp();\n}\n\n}  // namespace rtscan"),
)


def apply_edits(text: str, edits, source: str, script: str) -> str:
    """`text` (kernels_cu/<source>) with each (anchor, replacement) of `edits` applied; an anchor
    not there exactly once means the kernel moved under `script`, which must be updated."""
    for anchor, replacement in edits:
        if text.count(anchor) != 1:
            raise ValueError(f"kernels_cu/{source} changed: anchor {anchor.splitlines()[0]!r} of "
                             f"profiling/{script} is not there exactly once; update _EDITS")
        text = text.replace(anchor, replacement)
    return text


def instrument(text: str) -> str:
    """lookback.cu's text with the stamps added, as kernel template `lookback_scan_timeline`."""
    return apply_edits(text, _EDITS, "lookback.cu", "timeline.py")


_loaded: dict[tuple[str, bytes], object] = {}  # (kernel expression, instrumented text) -> loaded function


def capture(shape_text: str, log2: int, instrument=instrument,
            extra_stamps: int = 0, sequences: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Stamps of every tile of `sequences` rows of 2^log2 steps in all, from the third launch:
    (tiles x STAMPS, tiles x extra_stamps), int64, tile t being chunk t % tiles-a-row of row
    t // tiles-a-row. `instrument` makes the kernel's text from lookback.cu's; the extra stamps are
    written past the first part of the buffer (profiling/protocol_timeline.py)."""
    from rtscan import _bench, _compile, _driver, _kernels, _layout, _workspace, registry

    variant = registry.resolve("lookback_regs")
    shape = registry.entry_shape(parse_shape(shape_text), 4)
    _driver.make_current(0)
    arch = _kernels.device_arch(0)
    expression = variant.name_expression(shape).replace("lookback_scan<", "lookback_scan_timeline<")
    text = instrument((_compile.kernels_dir() / "lookback.cu").read_text()).encode()
    shared_bytes = variant.shared_bytes(shape)
    function = _loaded.get((expression, text))
    if function is None:  # each text compiled once a process (profiling/ablation.py captures each twin often)
        module = _compile.nvrtc_compile("lookback.cu", (expression,), _compile.CompileOptions(arch=arch), text=text)
        function = _driver.get_function(_driver.load_module(module.cubin), module.lowered_names[expression])
        _driver.allow_shared_memory(function, shared_bytes)
        _loaded[(expression, text)] = function

    n = 1 << log2
    length = n // sequences
    tiles_per_seq = -(-length // shape.tile)
    tiles = sequences * tiles_per_seq
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    a, b, out = (_bench.DeviceBuffer(n) for _ in range(3))
    a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
    b.fill(rng.standard_normal(n, dtype=np.float32), stream)
    times = _bench.DeviceBuffer(2 * (STAMPS + extra_stamps) * tiles)  # 64-bit stamps, float32-counted
    plan = _layout.plan((sequences, length), (length, 1), (length, 1), 1, False)
    workspace = _workspace.acquire(0, stream, tiles)
    arguments = (ctypes.c_void_p(a.pointer), ctypes.c_void_p(b.pointer), ctypes.c_void_p(out.pointer),
                 ctypes.c_void_p(0), plan.layout, workspace, ctypes.c_longlong(tiles_per_seq), ctypes.c_longlong(tiles),
                 ctypes.c_void_p(times.pointer))
    pointers = (ctypes.c_void_p * len(arguments))(*(ctypes.addressof(x) for x in arguments))
    for _ in range(3):  # the last launch's stamps are kept: caches and clocks warm
        _driver.launch(function, tiles, shape.threads, shared_bytes, stream, ctypes.addressof(pointers))
    stamps = np.empty((STAMPS + extra_stamps) * tiles, np.int64)
    _driver.copy_to_host(stamps.ctypes.data, times.pointer, stamps.nbytes, stream)
    _driver.synchronize(stream)
    _driver.destroy_stream(stream)
    return stamps[:STAMPS * tiles].reshape(tiles, STAMPS), stamps[STAMPS * tiles:].reshape(tiles, extra_stamps)


def save_stamps(folder: Path, name: str, stamps: np.ndarray) -> None:
    """Raw stamps as folder/name.npy (the folder made if needed), for the timeline scripts' --out."""
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / f"{name}.npy", stamps)


def analyse(stamps: np.ndarray, sequences: int = 1) -> list[str]:
    """Where the time went, as lines of text (microseconds from the first block's entry; each row's
    first tile, which never waits, left out of the phases unless rows are one tile each)."""
    origin = stamps[:, 6].min()
    rows = stamps.astype(np.int64).reshape(sequences, -1, STAMPS) - origin  # (rows, tiles of a row, stamps)
    later = 1 if rows.shape[1] > 1 else 0
    all_earlier_out = np.maximum.accumulate(rows[:, :, 1], axis=1)[:, later:].ravel()  # the row's, first tile's too
    stamps = rows[:, later:].reshape(-1, STAMPS)
    start, aggregate, carry, end, scanned, entered = (stamps[:, k] for k in (0, 1, 2, 3, 5, 6))

    def row(name, values):
        return f"  {name:<38}" + " ".join(f"{np.percentile(values, p) / 1e3:7.2f}" for p in PERCENTILES)

    span = end.max() / 1e3
    lines = [f"{rows.shape[0] * rows.shape[1]} tiles in {span:.1f} us; percentiles (us) " + " ".join(f"{p:>6}%" for p in PERCENTILES),
             row("stagger and ticket (start - entry)", start - entered),
             row("load and first pass (own done - start)", scanned - start),
             row("block scan (aggregate - own done)", aggregate - scanned),
             row("wait (carry - aggregate)", carry - aggregate),
             row("  of it: earlier aggregates later", np.maximum(all_earlier_out - aggregate, 0)),
             row("  of it: protocol (carry - all out)", carry - all_earlier_out),
             row("finish (end - carry)", end - carry),
             row("lifetime (end - start)", end - start)]
    grid = np.linspace(0, end.max(), 12)[1:-1]
    loading = [int(np.sum((start <= g) & (scanned > g))) for g in grid]
    waiting = [int(np.sum((aggregate <= g) & (carry > g))) for g in grid]
    lines += [f"  blocks loading or scanning, at 10 moments: {loading}", f"  blocks waiting, at the same moments: {waiting}"]
    return lines + first_wave(start, aggregate, carry, end)


def rows_of_few_tiles(stamps: np.ndarray, sequences: int) -> np.ndarray | None:
    """The stamps as (rows, tiles of a row, stamps), 64-bit, for rows of 2-8 tiles (what the
    by-row readings below take); None for rows of one tile or of more than 8."""
    rows = stamps.astype(np.int64).reshape(sequences, -1, STAMPS)
    return rows if 2 <= rows.shape[1] <= 8 else None


def by_place_in_row(stamps: np.ndarray, sequences: int) -> list[str]:
    """For rows of 2-8 tiles, lines of medians by a tile's place in its row (microseconds from the
    first block's entry): its ticket, aggregate, carry and end, and for later places the carry's
    delay after the last of the row's earlier aggregates (NOTES 100 read 64 x 65536 this way).
    Rows of one tile or of more than 8 give no lines."""
    rows = rows_of_few_tiles(stamps, sequences)
    if rows is None:
        return []
    places = rows.shape[1]
    rows = rows - stamps[:, 6].min()
    earlier_out = np.maximum.accumulate(rows[:, :, 1], axis=1)
    lines = ["  by place in the row (medians, us):"]
    for place in range(places):
        tile = rows[:, place]
        line = (f"    tile {place}: ticket {np.median(tile[:, 0]) / 1e3:.2f}, aggregate {np.median(tile[:, 1]) / 1e3:.2f}, "
                f"carry {np.median(tile[:, 2]) / 1e3:.2f}, end {np.median(tile[:, 3]) / 1e3:.2f}")
        if place:
            delay = tile[:, 2] - earlier_out[:, place - 1]
            line += f"; carry after the earlier aggregates {np.median(delay) / 1e3:.2f}"
        lines.append(line)
    return lines


MATE_PHASES = ("storing", "loading", "waiting", "idle", "alone")


def by_mate_phase(stamps: np.ndarray, sequences: int) -> list[str]:
    """For rows of 2-8 tiles, lines of the protocol's delay (carry - the latest of the tile's own and
    its row's earlier aggregates) of each later tile, by what the other blocks on its SM did in that
    window: storing (between their carry and end), else loading (started, first pass not done), else
    waiting (between aggregate and carry), else none of those (finished, or not yet started); alone
    if no other block of the launch ran on the SM. Counts and medians in us (NOTES 104 read
    64 x 65536 this way). Other rows give no lines."""
    rows = rows_of_few_tiles(stamps, sequences)
    if rows is None:
        return []
    places = rows.shape[1]
    tiles = rows.reshape(-1, STAMPS)
    start, aggregate, carry, end, sm, scanned = (tiles[:, k] for k in (0, 1, 2, 3, 4, 5))
    all_out = np.maximum.accumulate(rows[:, :, 1], axis=1)  # through each tile: its own and earlier aggregates
    delays: dict[str, list[float]] = {phase: [] for phase in MATE_PHASES}
    for tile in range(len(tiles)):
        row, place = divmod(tile, places)
        if place == 0:
            continue
        opened, closed = all_out[row, place], carry[tile]
        mates = np.flatnonzero((sm == sm[tile]) & (np.arange(len(tiles)) != tile))

        def during(first, last):  # whether some mate was between these two of its stamps in the window
            return bool(np.any((first[mates] < closed) & (last[mates] > opened)))

        if mates.size == 0:
            phase = "alone"
        elif during(carry, end):
            phase = "storing"
        elif during(start, scanned):
            phase = "loading"
        elif during(aggregate, carry):
            phase = "waiting"
        else:
            phase = "idle"
        delays[phase].append((closed - opened) / 1e3)
    lines = ["  protocol delay of later tiles by their SM-mates' phase (count, median us):"]
    return lines + [f"    {phase}: {len(values)}, {np.median(values):.2f}"
                    for phase, values in delays.items() if values]


def in_first_wave(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Which tiles are the launch's first wave: those that started before any tile ended."""
    return start < end.min()


def first_wave(start, aggregate, carry, end) -> list[str]:
    """The first wave's tiles (in_first_wave; NOTES 61: at 2^26 they leave DRAM idle for about
    13 us while their carries chain): when their aggregates came out, when their carries came,
    when they ended, and when the tiles after them started (microseconds, min/median/max)."""
    wave = in_first_wave(start, end)

    def spread(values):
        return "/".join(f"{v / 1e3:.1f}" for v in (values.min(), np.median(values), values.max()))

    lines = [f"  first wave ({int(wave.sum())} tiles that started before any ended), min/median/max us:",
             f"    aggregates out {spread(aggregate[wave])}; carries {spread(carry[wave])}; ends {spread(end[wave])}"]
    if (~wave).any():
        lines.append(f"    the next tiles' starts {spread(start[~wave][:int(wave.sum())])}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape",
                        help="BLOCKxITEMS[rREGISTERS][bMIN_BLOCKS][dDEPTH][sSEGMENT][p1][a1] "
                             "(default: the tuned large shape, else the long one)")
    parser.add_argument("--log2", type=int, default=28, help="2^LOG2 steps in all")
    parser.add_argument("--sequences", type=int, default=1, help="rows of 2^LOG2 / SEQUENCES steps (default 1)")
    parser.add_argument("--out", type=Path, help="folder for the raw stamps (.npy)")
    args = parser.parse_args(argv)
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/timeline.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    if args.shape is None:
        from rtscan import _kernels, tuning

        entry = tuning.lookup(tuning.LOOKBACK_REGS, _kernels.device_arch(0), "float32")
        args.shape = format_shape(entry.get("large", entry["long"]))
    stamps, _ = capture(args.shape, args.log2, sequences=args.sequences)
    if args.out:
        save_stamps(args.out, f"timeline-{args.shape}-log2-{args.log2}-s{args.sequences}", stamps)
    print(f"timeline of {args.shape} on {args.sequences} row(s) of 2^{args.log2} steps in all")
    print("\n".join(analyse(stamps, args.sequences) + by_place_in_row(stamps, args.sequences)
                    + by_mate_phase(stamps, args.sequences)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
