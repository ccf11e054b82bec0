"""Sweep the long launch shape of one single-pass variant on the present GPU and record each result.

The variant is `lookback_regs` (auto) unless --variant names another.

For every candidate shape: the error against the float64 reference on a prefix of the input,
whether two runs give the same bits, the blocks an SM holds, and the time of one sequence (or of
--sequences rows) at each size (graph replays, as `python -m rtscan bench` times them) beside a copy
of the same bytes; a size whose rows are shorter than the shape's tile (so the short shape would
run) is skipped with that reason.
The copy is also timed, and the NVML clocks read, before and after the whole sweep: a sweep whose
copy moved more than 3 % is marked unusable, and no tuning entry may cite it.
Writes JSON and CSV, and a PNG (GB/s against size, with the copy) when matplotlib is installed,
to profiling/results/<gpu>/sweep-<date>.* (sweep-<variant>-<date>.* for a variant other than auto;
a later sweep of the same day adds -2, -3, ... rather than overwrite).

Usage, from a source checkout:
    PYTHONPATH=. python3 profiling/sweep.py --shapes 352x56r16b2p1,384x44r12b2 --log2 24,28
    PYTHONPATH=. python3 profiling/sweep.py --shapes 384x44r12b2,256x16 --log2 22 --sequences 64
(the second times 64 sequences of 65536 steps, issue 4's batched shape)
    PYTHONPATH=. python3 profiling/sweep.py --variant blelloch --shapes 256x8,512x8 --log2 24,28
A shape is BLOCKxITEMS, then optionally rREGISTER_ITEMS, bMIN_BLOCKS, dLOOKBACK_DEPTH,
sSEGMENT_TILES, p1, a1, c1 and u2/u4/u8 (defaults r0, b3, d1, the variant's own segment, no
protocol warp, polls by strong loads, tickets along each sequence, no runs; the look-back walk is
the variant's own). With p1 a block has one more warp, which runs the look-back
(kernels_cu/lookback.cu); BLOCK counts the threads that hold steps; a1 polls by atomics; c1 takes
chunk c of every sequence before chunk c + 1 (the batch shape's order, kernels_cu/seq_layout.cuh);
uN reads the staged chunks back in runs of N (lookback.cu's RUN_CHUNKS: with p1 and rN > 0). A
shape that sets a field the variant's kernel template does not take (items for hillis_steele, p1
for all but the look-back variants) to anything but its tuned value is refused.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import datetime
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np

DEFAULT_SHAPES = "256x16,256x32,384x44r12b2,352x48r16b2p1,352x48r16b2p1u2,352x52r16b2p1,352x56r16b2p1"
DEFAULT_LOG2 = "20,22,24,26,28"
CHECK_STEPS = 1 << 20  # the prefix checked against the float64 reference
DRIFT_LIMIT = 0.03
_SHAPE = re.compile(r"^(\d+)x(\d+)(?:r(\d+))?(?:b(\d+))?(?:d(\d+))?(?:s(\d+))?(p1)?(a1)?(c1)?(?:u([248]))?$")


def parse_shape(text: str, variant_entry: dict | None = None) -> dict:
    """'256x48r16' -> the long-shape entry fields of rtscan/tuning.py. The look-back walk, and the
    segment when the text gives none, are `variant_entry`'s (a tuning entry of the swept variant),
    else lookback_regs' (a warp walk over segments of 32 tiles)."""
    match = _SHAPE.match(text.strip())
    if not match:
        raise ValueError(f"shape must look like 256x48, 256x48r16 or 256x48r16b3d1s32p1a1c1u2, got {text!r}")
    block, items, registers, min_blocks, depth, segment, protocol_warp, atomic_polls, chunks_first, run = match.groups()
    protocol = variant_entry or {"walk_lanes": 32, "segment_tiles": 32}
    return {"block_threads": int(block), "items": int(items), "register_items": int(registers or 0),
            "min_blocks": int(min_blocks or 3), "lookback_depth": int(depth or 1),
            "walk_lanes": protocol["walk_lanes"],
            "segment_tiles": int(segment) if segment else protocol["segment_tiles"],
            "protocol_warp": 1 if protocol_warp else 0, "atomic_polls": 1 if atomic_polls else 0,
            "chunks_first": 1 if chunks_first else 0, "run_chunks": int(run or 1)}


def check_template_fields(variant, fields: dict, tuned: dict) -> None:
    """Refuse a candidate that sets a field the variant's kernel template does not take to anything
    but its tuned value: the host would plan tiles for a shape the kernel does not run."""
    from rtscan.registry import LaunchShape

    # A field an entry leaves out takes LaunchShape's default (no protocol warp).
    defaults = {f.name: f.default for f in dataclasses.fields(LaunchShape) if f.default is not dataclasses.MISSING}
    for name, value in fields.items():
        expected = tuned.get(name, defaults.get(name, value))
        if name not in variant.arguments and expected != value:
            raise ValueError(f"{variant.name}'s kernel takes no {name} (tuned {expected}); a shape asks {value}")


def format_shape(entry: dict) -> str:
    """A long-shape entry of rtscan/tuning.py -> '352x56r16b2d1p1a1' (parse_shape's inverse; 's16'
    only when a segment is not 32 tiles, 'p1' only with a protocol warp, 'a1' only with atomic polls,
    'c1' only with tickets chunks first, 'u2' only with runs)."""
    segment = "" if entry["segment_tiles"] == 32 else f"s{entry['segment_tiles']}"
    protocol_warp = "p1" if entry.get("protocol_warp", 0) else ""
    atomic_polls = "a1" if entry.get("atomic_polls", 0) else ""
    chunks_first = "c1" if entry.get("chunks_first", 0) else ""
    run = f"u{entry['run_chunks']}" if entry.get("run_chunks", 1) > 1 else ""
    return (f"{entry['block_threads']}x{entry['items']}r{entry['register_items']}"
            f"b{entry['min_blocks']}d{entry['lookback_depth']}{segment}{protocol_warp}{atomic_polls}{chunks_first}"
            f"{run}")


def gpu_folder(device_name: str) -> str:
    """'NVIDIA H200' -> 'h200': the results folder of that GPU."""
    words = [w for w in re.split(r"[^a-z0-9]+", device_name.lower()) if w and w != "nvidia"]
    return "-".join(words) or "gpu"


def copy_drift(before: dict, after: dict) -> float:
    """The largest relative change of the copy time between the two readings, over the sizes."""
    return max(abs(after[k] - before[k]) / before[k] for k in before)


class _Prefix:
    """The first `count` floats of a device buffer, as a __cuda_array_interface__ object: one
    sequence, or `sequences` rows of count // sequences steps each."""

    def __init__(self, pointer: int, count: int, sequences: int = 1):
        shape = (count,) if sequences == 1 else (sequences, count // sequences)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (pointer, False),
                                         "strides": None, "version": 3}


def restore_entry(table: dict, key, saved: dict | None) -> None:
    """Put back the entry a sweep's candidates replaced: `saved`, what table.get(key) gave before
    them, or no entry at all (the architecture then falls back to an older one again)."""
    if saved is None:
        table.pop(key, None)
    else:
        table[key] = saved


def _time_copies(bench, driver, source, target, stream, log2_sizes) -> dict:
    times = {}
    for log2 in log2_sizes:
        n = 1 << log2
        launches = max(1, min(200, (1 << 26) // n))
        times[log2] = bench._time_copy(
            lambda: driver.copy_device_to_device(target.pointer, source.pointer, 12 * n // 2, stream), stream, launches)
    return times


def sweep(shape_texts: list[str], log2_sizes: list[int], sequences: int = 1, variant_name: str = "auto") -> dict:
    import rtscan
    from rtscan import _bench, _driver, _kernels, _nvml, reference, registry, tuning

    _driver.make_current(0)
    arch = _kernels.device_arch(0)
    variant = registry.resolve(variant_name)
    key = (arch, "float32")
    saved = variant.table.get(key)
    base = tuning.lookup(variant.table, arch, "float32")
    shapes = [parse_shape(text, base["long"]) for text in shape_texts]
    for fields in shapes:
        check_template_fields(variant, fields, base["long"])
    stream = _driver.create_stream()
    largest = 1 << max(log2_sizes + [20])
    rng = np.random.default_rng()
    a_host = rng.uniform(0.5, 1.0, largest).astype(np.float32)
    b_host = rng.standard_normal(largest, dtype=np.float32)
    a, b, out = (_bench.DeviceBuffer(largest) for _ in range(3))
    a.fill(a_host, stream)
    b.fill(b_host, stream)
    source, target = _bench.DeviceBuffer(3 * largest // 2), _bench.DeviceBuffer(3 * largest // 2)
    expected = reference.scan(a_host[:CHECK_STEPS], b_host[:CHECK_STEPS])
    result = {"device": _driver.device_name(0), "arch": arch, "date": datetime.date.today().isoformat(),
              "variant": variant.name, "sequences": sequences, "clocks_before": _nvml.facts(0), "rows": []}
    print(f"{result['device']} ({arch}): {len(shapes)} shapes x sizes 2^{log2_sizes}, {sequences} sequence(s)",
          flush=True)
    try:
        result["copy_us_before"] = _time_copies(_bench, _driver, source, target, stream, log2_sizes)
        for number, fields in enumerate(shapes, 1):
            variant.table[key] = {"long": dict(fields, source="sweep candidate"), "short": base["short"]}
            shape = variant.launch_shape(arch, "float32", 4, largest)
            row = {**fields, "tile": shape.tile, "shared_bytes": variant.shared_bytes(shape)}
            try:
                function = _kernels.function(0, variant, shape)
                row["blocks_per_sm"] = _driver.resident_blocks_per_sm(function, shape.threads,
                                                                      variant.shared_bytes(shape))
                check_a, check_b, check_out = (_Prefix(x.pointer, CHECK_STEPS) for x in (a, b, out))
                runs = []
                for _ in range(2):
                    rtscan.scan(check_a, check_b, out=check_out, stream=stream, variant=variant.name)
                    host = np.empty(CHECK_STEPS, np.float32)
                    _driver.copy_to_host(host.ctypes.data, out.pointer, host.nbytes, stream)
                    _driver.synchronize(stream)
                    runs.append(host)
                row["relative_error"] = float(np.max(np.abs(runs[0] - expected)) / np.max(np.abs(expected)))
                row["deterministic"] = bool(np.array_equal(runs[0], runs[1]))
                row["scan_us"] = {}
                for log2 in log2_sizes:
                    n = 1 << log2
                    if variant.launch_shape(arch, "float32", 4, n // sequences, sequences) != shape:
                        row.setdefault("skipped", {})[log2] = "rows under 15/16 of the tile: the short shape would run"
                        continue
                    views = [_Prefix(x.pointer, n, sequences) for x in (a, b, out)]
                    launches = max(1, min(200, (1 << 26) // n))
                    def run():
                        rtscan.scan(views[0], views[1], out=views[2], stream=stream, variant=variant.name)

                    run()  # the workspace grows outside the capture
                    row["scan_us"][log2] = _bench._time_graph(run, stream, launches)
            except rtscan.RtscanError as error:  # e.g. more shared memory than the device has
                row["error"] = str(error)
            result["rows"].append(row)
            print(f"[{number}/{len(shapes)}] {_describe(row, result['copy_us_before'])}", flush=True)
        result["copy_us_after"] = _time_copies(_bench, _driver, source, target, stream, log2_sizes)
    finally:
        restore_entry(variant.table, key, saved)
        _driver.destroy_stream(stream)
    result["clocks_after"] = _nvml.facts(0)
    result["copy_drift"] = copy_drift(result["copy_us_before"], result["copy_us_after"])
    result["usable"] = result["copy_drift"] <= DRIFT_LIMIT
    return result


def _describe(row: dict, copy_us: dict) -> str:
    name = format_shape(row)
    if "error" in row:
        return f"{name}: {row['error']}"
    ratios = " ".join(f"2^{k} {copy_us[k] / v:.3f}" for k, v in row["scan_us"].items())
    skipped = "".join(f"; 2^{k} skipped: {why}" for k, why in row.get("skipped", {}).items())
    return (f"{name}: {row['blocks_per_sm']} blocks/SM, error {row['relative_error']:.1e}, "
            f"deterministic {row['deterministic']}, vs the copy timed before: {ratios}{skipped}")


def write(result: dict, folder: Path) -> list[Path]:
    """JSON, CSV (one line per shape and size) and, with matplotlib, a PNG; returns the paths."""
    from rtscan.registry import AUTO

    folder.mkdir(parents=True, exist_ok=True)
    named = "" if result["variant"] == AUTO else f"{result['variant']}-"
    stem = folder / f"sweep-{named}{result['date']}"
    # A second sweep on the same day gets -2, -3, ...: results are kept, never overwritten.
    for number in itertools.count(2):
        if not stem.with_suffix(".json").exists():
            break
        stem = folder / f"sweep-{named}{result['date']}-{number}"
    paths = [stem.with_suffix(".json"), stem.with_suffix(".csv")]
    paths[0].write_text(json.dumps(result, indent=1, default=str))
    copy_us = {k: min(result["copy_us_before"][k], result["copy_us_after"][k]) for k in result["copy_us_before"]}
    with paths[1].open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["variant", "block_threads", "items", "register_items", "min_blocks", "lookback_depth",
                         "segment_tiles", "protocol_warp", "atomic_polls", "chunks_first", "run_chunks", "sequences",
                         "log2", "scan_us", "copy_us",
                         "ratio", "usable"])
        for row in result["rows"]:
            for log2, micro in row.get("scan_us", {}).items():
                writer.writerow([result["variant"], row["block_threads"], row["items"], row["register_items"],
                                 row["min_blocks"], row["lookback_depth"], row["segment_tiles"],
                                 row.get("protocol_warp", 0), row.get("atomic_polls", 0), row.get("chunks_first", 0),
                                 row.get("run_chunks", 1), result.get("sequences", 1),
                                 log2, f"{micro:.2f}", f"{copy_us[log2]:.2f}", f"{copy_us[log2] / micro:.4f}",
                                 result["usable"]])
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG", flush=True)
        return paths
    figure, axes = plt.subplots(figsize=(7, 4.5))
    sizes = sorted(copy_us)
    gbs = lambda log2, micro: 12 * (1 << log2) / micro / 1e3  # noqa: E731
    axes.plot(sizes, [gbs(k, copy_us[k]) for k in sizes], "k--", label="copy, same bytes")
    for row in result["rows"]:
        if "scan_us" in row:
            timed = sorted(row["scan_us"])
            axes.plot(timed, [gbs(k, row["scan_us"][k]) for k in timed], marker="o", label=format_shape(row))
    axes.set_xlabel(f"log2 elements ({result.get('sequences', 1)} sequence(s))")
    axes.set_ylabel("GB/s (12 B/element)")
    axes.set_title(f"{result['variant']} long shapes, {result['device']}"
                   + ("" if result["usable"] else " (UNUSABLE)"))
    axes.legend(fontsize=7)
    paths.append(stem.with_suffix(".png"))
    figure.savefig(paths[-1], dpi=120, bbox_inches="tight")
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help=f"comma-separated (default {DEFAULT_SHAPES})")
    parser.add_argument("--log2", default=DEFAULT_LOG2, help=f"sizes as powers of two (default {DEFAULT_LOG2})")
    parser.add_argument("--sequences", type=int, default=1,
                        help="split each size into this many sequences, rows of one array (default 1)")
    parser.add_argument("--variant", default="auto",
                        help="the single-pass variant whose long shape is swept (default auto)")
    parser.add_argument("--out", type=Path, help="results folder (default profiling/results/<gpu>)")
    args = parser.parse_args(argv)
    shape_texts = args.shapes.split(",")
    for text in shape_texts:
        try:
            parse_shape(text)
        except ValueError as error:
            parser.error(f"--shapes: {error}")
    log2_sizes = [int(x) for x in args.log2.split(",")]
    if args.sequences < 1 or any((1 << k) % args.sequences for k in log2_sizes):
        parser.error("--sequences must be at least 1 and divide every size")
    import rtscan

    try:
        chosen = rtscan.registry.resolve(args.variant)
    except rtscan.InputError as error:
        parser.error(f"--variant: {error}")
    if not chosen.vector_steps:  # lanes across sequences: their rows are time-major batches
        parser.error(f"--variant: {chosen.name} is for time-major batches; profiling/columns_sweep.py sweeps it")
    if chosen.pass_kernels:  # their kernels load as a tuple, one per pass, and share one launch shape
        parser.error(f"--variant: {chosen.name} launches {chosen.passes} kernels; sweep.py times single-pass variants")
    if not rtscan.gpu_available():
        print("profiling/sweep.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    result = sweep(shape_texts, log2_sizes, args.sequences, args.variant)
    folder = args.out or Path(__file__).parent / "results" / gpu_folder(result["device"])
    for path in write(result, folder):
        print(f"wrote {path}")
    if not result["usable"]:
        print(f"UNUSABLE: the copy moved {result['copy_drift']:.1%} during the sweep (limit {DRIFT_LIMIT:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
