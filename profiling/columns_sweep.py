"""Sweep the shape of a lanes-across-sequences variant (columns, or columns_lookback with --variant)
on batches laid out time-major, beside lookback_regs (and columns, when it is not the one swept), on
the present GPU: the data behind tuning.py's COLUMNS and COLUMNS_LOOKBACK entries and behind auto's
rule for taking them.

A row is either SxL, S sequences of L steps laid out (L, S) and scanned along dim 0 (time stride
S), or BxLxD, a (B, L, D) array scanned along dim 1 (B x D sequences, time stride D, neighbouring
sequences D-contiguous). For every candidate shape (BLOCKxITEMSbMIN_BLOCKS, and for columns_lookback
BLOCKxITEMS[rREG]bMIN_BLOCKSdDEPTH[a1][sSEQUENCES]; columns: BLOCK neighbouring sequences a block,
a chunk of BLOCK x ITEMS steps; columns_lookback: BLOCK threads, SEQUENCES sequences a tile (32, 16
or 8; default: as tuned for the row's count) over BLOCK x ITEMS / SEQUENCES steps, REG of a thread's
ITEMS in registers (default all) and the rest staged in shared memory, DEPTH predecessors a lane
reads per round, a1 for atomic polls; MIN_BLOCKS for __launch_bounds__):
the error against the float64 reference and whether two runs are bitwise equal, on one small
time-major row, the blocks an SM holds, then every row timed as CUDA graph replays (as `python -m
rtscan bench` times them). lookback_regs with its tuned shapes, and columns with its tuned shapes
when columns_lookback is swept, are timed on the same rows. A
device-to-device copy of 12 B a step is timed before and after each row; a row whose copy moved
more than 3 % is marked so, and the ratios are to the faster reading.

Writes profiling/results/<gpu>/<variant>-sweep-<date>.json (-2, -3, ... rather than overwrite) and
prints one line per row.

Usage, from a source checkout on a GPU:
    PYTHONPATH=. python3 profiling/columns_sweep.py --shapes 64x5b16,64x1b24 --rows 64x262144,8x4096x512
    PYTHONPATH=. python3 profiling/columns_sweep.py --variant columns_lookback --shapes 256x16b2d8 --rows 4096x16384
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # sweep.py beside this script, also under python -P
from sweep import DRIFT_LIMIT, gpu_folder, restore_entry  # noqa: E402

DEFAULT_SHAPES = "64x5b16,64x1b24,64x2b24,128x1b12,32x2b32"
DEFAULT_ROWS = "8x2097152,32x524288,64x262144,256x65536,1024x16384,64x65536,4096x16384,8x4096x512,4x16384x64"
CHECK_ROW = (96, 4000)  # sequences x steps of the correctness check: a partial block and a partial chunk
VARIANTS = ("columns", "columns_lookback")
_SHAPE = re.compile(r"^(\d+)x(\d+)(?:r(\d+))?b(\d+)(?:d(\d+)(a1)?(?:s(8|16|32))?)?$")


def parse_shape(text: str, variant: str = "columns") -> dict:
    """'64x5b16' -> the fields of a columns tuning entry that the kernels take; for columns_lookback
    '256x16b2d8' (DEPTH, lookback_depth, which the columns kernels do not take; every item in
    registers), '128x48r16b4d2' (REG of the items in registers, register_items, the rest staged in
    shared memory), '256x16b2d8a1' (the look-back polling by atomics, atomic_polls 1) and
    '512x64r32b1d2s16' (tiles of 16 sequences, sequences_per_tile; 32, 16 or 8, default each kind's
    own)."""
    match = _SHAPE.match(text.strip())
    lookback = variant == "columns_lookback"
    if not match or (match.group(5) is not None) != lookback or (match.group(3) is not None and not lookback):
        form = ("256x16b2d8 or 128x48r16b4d2s16 (BLOCKxITEMS[rREG]bMIN_BLOCKSdDEPTH[a1][sSEQUENCES])" if lookback
                else "64x5b16 (BLOCKxITEMSbMIN_BLOCKS)")
        raise ValueError(f"a {variant} shape must look like {form}, got {text!r}")
    block, items, min_blocks = int(match.group(1)), int(match.group(2)), int(match.group(4))
    if block % 32 or items < 1 or min_blocks < 1:
        raise ValueError(f"{text!r}: BLOCK must be a multiple of 32, ITEMS and MIN_BLOCKS at least 1")
    fields = {"block_threads": block, "items": items, "min_blocks": min_blocks}
    if lookback:
        registers = int(match.group(3)) if match.group(3) is not None else items
        if int(match.group(5)) < 1 or not 1 <= registers <= items:
            raise ValueError(f"{text!r}: DEPTH must be at least 1, REG between 1 and ITEMS")
        fields.update(register_items=registers, lookback_depth=int(match.group(5)),
                      atomic_polls=int(match.group(6) is not None))
        if match.group(7) is not None:
            fields["sequences_per_tile"] = int(match.group(7))
    return fields


def shape_text(fields: dict) -> str:
    staged = "register_items" in fields and fields["register_items"] != fields["items"]
    registers = f"r{fields['register_items']}" if staged else ""
    depth = f"d{fields['lookback_depth']}" if "lookback_depth" in fields else ""
    polls = "a1" if fields.get("atomic_polls") else ""
    sequences = f"s{fields['sequences_per_tile']}" if "sequences_per_tile" in fields else ""
    return f"{fields['block_threads']}x{fields['items']}{registers}b{fields['min_blocks']}{depth}{polls}{sequences}"


def parse_row(text: str) -> tuple[tuple[int, ...], int]:
    """'64x262144' -> ((262144, 64), 0): the (steps, sequences) array and its time dim;
    '8x4096x512' -> ((8, 4096, 512), 1)."""
    parts = text.strip().lower().split("x")
    if len(parts) not in (2, 3) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"a row must look like 64x262144 (SxL) or 8x4096x512 (BxLxD), got {text!r}")
    sizes = tuple(int(p) for p in parts)
    return ((sizes[1], sizes[0]), 0) if len(sizes) == 2 else (sizes, 1)


def _copy_us(bench, driver, elements: int, stream: int, launches: int) -> float:
    source, target = bench.DeviceBuffer(3 * elements // 2), bench.DeviceBuffer(3 * elements // 2)
    return bench._time_copy(
        lambda: driver.copy_device_to_device(target.pointer, source.pointer, 6 * elements, stream), stream, launches)


def check(variant: str, stream: int) -> dict:
    """Error against the float64 reference and bitwise repeatability of `variant` as tuned now on
    CHECK_ROW, time-major, a, b, out freshly drawn and out poisoned."""
    import rtscan
    from rtscan import _bench, _driver, reference

    sequences, steps = CHECK_ROW
    rng = np.random.default_rng()
    a_host = rng.uniform(0.5, 1.0, (steps, sequences)).astype(np.float32)
    b_host = rng.standard_normal((steps, sequences), dtype=np.float32)
    buffers = [_bench.DeviceBuffer(steps * sequences, (steps, sequences)) for _ in range(3)]
    buffers[0].fill(a_host, stream)
    buffers[1].fill(b_host, stream)
    runs = []
    for _ in range(2):
        buffers[2].fill(np.full((steps, sequences), np.nan, np.float32), stream)
        rtscan.scan(buffers[0], buffers[1], dim=0, out=buffers[2], variant=variant, stream=stream)
        host = np.empty((steps, sequences), np.float32)
        _driver.copy_to_host(host.ctypes.data, buffers[2].pointer, host.nbytes, stream)
        _driver.synchronize(stream)
        runs.append(host)
    expected = reference.scan(a_host, b_host, dim=0)
    return {"relative_error": float(np.max(np.abs(runs[0] - expected)) / np.max(np.abs(expected))),
            "deterministic": bool(np.array_equal(runs[0], runs[1]))}


def sweep(shape_texts: list[str], row_texts: list[str], variant: str = "columns") -> dict:
    import rtscan
    from rtscan import _bench, _driver, _kernels, _nvml, registry, tuning

    _driver.make_current(0)
    arch = _kernels.device_arch(0)
    swept = registry.resolve(variant)
    key = (arch, "float32")
    saved = swept.table.get(key)
    base = tuning.lookup(swept.table, arch, "float32")
    candidates = [parse_shape(text, variant) for text in shape_texts]
    rows = [parse_row(text) for text in row_texts]
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    result = {"device": _driver.device_name(0), "arch": arch, "variant": variant,
              "date": datetime.date.today().isoformat(),
              "clocks_before": _nvml.facts(0), "shapes": [], "rows": []}
    baselines = [("lookback_regs", None)] + ([("columns", None)] if variant != "columns" else [])
    print(f"{result['device']} ({arch}): {variant} shapes {shape_texts} beside "
          f"{', '.join(name for name, _ in baselines)}", flush=True)
    try:
        entries = {}  # text -> the candidate's tuning entry, for the rows
        for fields in candidates:
            swept.table[key] = {kind: dict(base[kind], **fields, source="sweep candidate") for kind in base}
            shape = swept.launch_shape(arch, "float32", 1, 1)
            described = {**fields, "text": shape_text(fields)}
            try:
                kernels = _kernels.function(0, swept, shape)
                kernels = kernels if isinstance(kernels, tuple) else (kernels,)  # one pass: one function
                described["blocks_per_sm"] = [_driver.resident_blocks_per_sm(k, shape.threads, 0) for k in kernels]
                described.update(check(variant, stream))
            except rtscan.RtscanError as error:
                described["error"] = str(error)
            result["shapes"].append(described)
            if "error" not in described:
                entries[described["text"]] = swept.table[key]
            print(f"shape {described}", flush=True)
        names = baselines + [(variant, text) for text in entries]
        for text, (array_shape, dim) in zip(row_texts, rows):
            elements = int(np.prod(array_shape))
            launches = max(1, min(200, (1 << 26) // elements))
            a, b, out = (_bench.DeviceBuffer(elements, array_shape) for _ in range(3))
            a.fill(rng.uniform(0.5, 1.0, elements).astype(np.float32), stream)
            b.fill(rng.standard_normal(elements, dtype=np.float32), stream)
            copy_before = _copy_us(_bench, _driver, elements, stream, launches)
            times = {}
            for name, candidate in names:
                if candidate is not None:
                    swept.table[key] = entries[candidate]

                def one_scan():
                    rtscan.scan(a, b, dim=dim, out=out, variant=name, stream=stream)

                one_scan()  # compiles, loads and sizes the scratch outside the capture
                times[candidate or name] = _bench._time_graph(one_scan, stream, launches)
            copy_after = _copy_us(_bench, _driver, elements, stream, launches)
            copy = min(copy_before, copy_after)
            drift = abs(copy_after - copy_before) / copy_before
            row = {"row": text, "array": array_shape, "dim": dim, "copy_us": copy, "copy_drift": drift,
                   "usable": drift <= DRIFT_LIMIT, "scan_us": times}
            result["rows"].append(row)
            ratios = "  ".join(f"{name} {copy / micro:.3f}" for name, micro in times.items())
            print(f"{text:>14} copy {copy:8.1f} us | {ratios}" + ("" if row["usable"] else
                                                                   f"  (copy moved {drift:.0%})"), flush=True)
    finally:
        restore_entry(swept.table, key, saved)
        _driver.destroy_stream(stream)
    result["clocks_after"] = _nvml.facts(0)
    return result


def write(result: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{result.get('variant', 'columns')}-sweep-{result['date']}"
    path = folder / f"{stem}.json"
    for number in itertools.count(2):  # results are kept, never overwritten
        if not path.exists():
            break
        path = folder / f"{stem}-{number}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=VARIANTS, default="columns", help="the variant swept (default columns)")
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help=f"comma-separated (default {DEFAULT_SHAPES}; "
                        "columns_lookback needs its own)")
    parser.add_argument("--rows", default=DEFAULT_ROWS, help=f"comma-separated (default {DEFAULT_ROWS})")
    parser.add_argument("--out", type=Path, help="results folder (default profiling/results/<gpu>)")
    args = parser.parse_args(argv)
    shape_texts, row_texts = args.shapes.split(","), args.rows.split(",")
    try:
        for text in shape_texts:
            parse_shape(text, args.variant)
        for text in row_texts:
            parse_row(text)
    except ValueError as error:
        parser.error(str(error))
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/columns_sweep.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    result = sweep(shape_texts, row_texts, args.variant)
    path = write(result, args.out or Path(__file__).parent / "results" / gpu_folder(result["device"]))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
