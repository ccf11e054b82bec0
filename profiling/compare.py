"""rtscan beside its peers on the same inputs, one run: one table, JSON, CSV and a plot.

Every system (rtscan's variants; pure-PyTorch Blelloch and Hillis-Steele; torch.compile of
associative_scan; when installed, accelerated-scan, flash-linear-attention's HGRN kernels and CUB
through cuda.compute; see profiling/peers.py) gets the same a in [0.5, 1) and b standard normal,
drawn fresh each run from a printed seed, in its own layout. Each output, turned back into
(sequences, steps), is checked against rtscan.reference.scan (float64) on a few whole sequences
(or the first CHECK_STEPS steps of a long one); a peer off by more than WRONG_LIMIT is marked
WRONG in the table. Times are CUDA events around back-to-back calls after a warm-up (enough
calls for ~2 ms between the events), the median of several repeats; they include each peer's
own host overhead, which is its real cost per call. A device-to-device copy of the same
12 B/element is timed before and after everything; the ratios are to the faster reading, and a
run whose copy moved more than 3 % is marked unusable (as profiling/sweep.py does).
Peers that would take more than --max-seconds per call at a size are skipped with the reason.

Needs torch and a GPU. The optional peers come from wheels in .whl-peers/ (fetched where there
is an index; the GPU machine has torch, triton, numpy and nvcc, and no network):
    python3 -m pip install -q --no-index --no-deps --target /tmp/peers .whl-peers/*.whl
    PYTHONPATH=/tmp/peers:. python3 profiling/compare.py
(/tmp/peers must come first on PYTHONPATH so that `accelerated_scan`, `fla` and `cuda.compute`
resolve; `cuda` is a namespace package, so cuda.bindings still loads from site-packages.) The
wheels: accelerated-scan 0.3.1, ninja (its warp backend builds with nvcc through ninja),
flash-linear-attention 0.6.0 and fla-core 0.6.0 with einops (fla's layers also want
transformers, left out: the HGRN ops do not import it), cuda-cccl 1.2.1 with cuda-core and a
newer cuda-pathfinder (which then shadows the system's, for rtscan too). accelerated-scan's
(8, 1024, 4096) of ANCHORS.md is the 8192x4096 shape here (8192 = 8 x 1024 sequences).
Writes profiling/results/<gpu>/compare-<date>.{json,csv,md,png}.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import math
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # peers.py and sweep.py beside this script
import peers as peer_module  # noqa: E402
from sweep import DRIFT_LIMIT, copy_drift, gpu_folder  # noqa: E402

DEFAULT_SHAPES = "2^20,2^24,2^28,8192x4096,64x65536"
CHECK_STEPS = 1 << 20
WRONG_LIMIT = 1e-3          # fp32 with |a| < 1 lands near 1e-6; anything past this is a bug
CALL_BUDGET_US = 2000.0     # calls between two events: enough for ~2 ms, so launches overlap
BYTES_PER_STEP = 12         # read a, read b, write h in float32


def parse_shape(text: str) -> tuple[int, int]:
    """'2^24' -> (1, 16777216); '8192x4096' -> (8192, 4096); '1x2^20' -> (1, 1048576)."""
    def number(part: str) -> int:
        part = part.strip()
        if part.startswith("2^") and part[2:].isdigit():
            return 1 << int(part[2:])
        if part.isdigit() and int(part) > 0:
            return int(part)
        raise ValueError(f"shape must look like 2^24, 8192x4096 or 1x2^20, got {text!r}")

    parts = text.lower().split("x")
    if len(parts) == 1:
        return 1, number(parts[0])
    if len(parts) == 2:
        return number(parts[0]), number(parts[1])
    raise ValueError(f"shape must look like 2^24, 8192x4096 or 1x2^20, got {text!r}")


def shape_label(sequences: int, steps: int) -> str:
    log2 = int(math.log2(steps))
    steps_text = f"2^{log2}" if 1 << log2 == steps else str(steps)
    return steps_text if sequences == 1 else f"{sequences}x{steps}"


def check_sequences(sequences: int) -> list[int]:
    """The sequences checked against the reference: first, second, middle and last."""
    return sorted({0, min(1, sequences - 1), sequences // 2, sequences - 1})


def max_relative_error(out: np.ndarray, expected: np.ndarray) -> float:
    """max |out - expected| / max |expected|; inf when anything is NaN or Inf."""
    difference = np.abs(np.asarray(out, np.float64) - expected)
    if not np.all(np.isfinite(difference)):
        return math.inf
    return float(difference.max() / np.abs(expected).max())


def verdict(error: float) -> str:
    return "ok" if error <= WRONG_LIMIT else "WRONG"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help=f"comma-separated (default {DEFAULT_SHAPES})")
    parser.add_argument("--only", default="", help="comma-separated substrings: run only peers whose name has one")
    parser.add_argument("--repeats", type=int, default=7, help="timed repeats, the median counts (default 7)")
    parser.add_argument("--max-seconds", type=float, default=2.0, help="skip a peer past this per call (default 2)")
    parser.add_argument("--seed", type=int, help="input seed (default: fresh, printed)")
    parser.add_argument("--out", type=Path, help="results folder (default profiling/results/<gpu>)")
    args = parser.parse_args(argv)
    args.shapes = [parse_shape(s) for s in args.shapes.split(",")]
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    if args.repeats < 1 or args.max_seconds <= 0:
        parser.error("--repeats must be at least 1 and --max-seconds positive")
    return args


# ---- measuring (GPU, torch) -------------------------------------------------------------------

def time_calls(torch, call, launches: int, repeats: int) -> float:
    """Median microseconds per call of `launches` back-to-back calls between two events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(repeats):
        start.record()
        for _ in range(launches):
            call()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / launches)
    return statistics.median(samples)


def _copy_us(torch, shapes, repeats) -> dict:
    times = {}
    for sequences, steps in shapes:
        source = torch.randn(3 * sequences * steps // 2, device="cuda")  # 6 B/step each way
        target = torch.empty_like(source)
        target.copy_(source)
        launches = max(1, min(200, (1 << 26) // (sequences * steps)))
        times[shape_label(sequences, steps)] = time_calls(torch, lambda: target.copy_(source), launches, repeats)
        del source, target
    return times


def _measure_one(torch, peer, a, b, check, expected, max_seconds, repeats) -> dict:
    state = out = None
    try:
        state = peer.prepare(a, b)
        out = peer.call(state)  # warm-up: compiles, loads, allocates
        torch.cuda.synchronize()
        rows = peer.to_rows(out, state)
        error = max_relative_error(rows[check][:, :expected.shape[1]].double().cpu().numpy(), expected)
        single = time_calls(torch, lambda: peer.call(state), 1, 1)
        if single > max_seconds * 1e6:
            return {"status": "skipped", "reason": f"one call took {single / 1e6:.1f} s (limit {max_seconds} s)",
                    "error": error}
        launches = max(1, min(200, int(CALL_BUDGET_US / single)))
        micro = time_calls(torch, lambda: peer.call(state), launches, repeats)
        return {"status": verdict(error), "us": micro, "error": error}
    except Exception as failure:  # noqa: BLE001 - a peer that breaks is a table entry, not a crash
        return {"status": "failed", "reason": f"{type(failure).__name__}: {failure}"[:300]}
    finally:
        del state, out
        torch.cuda.empty_cache()


def measure(shapes, peers, missing: dict, repeats: int, max_seconds: float, seed: int) -> dict:
    import torch

    import rtscan
    from rtscan import _nvml

    result = {"device": torch.cuda.get_device_name(), "date": datetime.date.today().isoformat(), "seed": seed,
              "torch": torch.__version__, "rtscan": rtscan.__version__, "clocks_before": _nvml.facts(0),
              "shapes": [shape_label(*s) for s in shapes], "missing": missing, "rows": [],
              "peers": {p.name: {"layout": p.layout, "note": p.note, "group": p.group} for p in peers}}
    print(f"{result['device']}, torch {torch.__version__}, seed {seed}; {len(peers)} peers, "
          f"not installed: {', '.join(missing) or 'none'}", flush=True)
    result["copy_us_before"] = _copy_us(torch, shapes, repeats)
    seconds_per_step = {}  # the slowest rate seen per peer: predicts when a larger size would pass the limit
    for index, (sequences, steps) in enumerate(shapes):
        label = shape_label(sequences, steps)
        generator = torch.Generator(device="cuda").manual_seed(seed + index)
        a = torch.rand(sequences, steps, device="cuda", generator=generator) * 0.5 + 0.5
        b = torch.randn(sequences, steps, device="cuda", generator=generator)
        check = check_sequences(sequences)
        prefix = min(steps, CHECK_STEPS)
        expected = rtscan.reference.scan(a[check, :prefix].cpu().numpy(), b[check, :prefix].cpu().numpy())
        for number, peer in enumerate(peers, 1):
            row = {"peer": peer.name, "shape": label, "sequences": sequences, "steps": steps}
            reason = peer.refuse(sequences, steps)
            predicted = seconds_per_step.get(peer.name, 0.0) * sequences * steps
            if reason:
                row.update(status="skipped", reason=reason)
            elif predicted > max_seconds:
                row.update(status="skipped", reason=f"predicted {predicted:.1f} s per call from a smaller size "
                                                    f"(limit {max_seconds} s)")
            else:
                row.update(_measure_one(torch, peer, a, b, check, expected, max_seconds, repeats))
            if "us" in row:
                seconds_per_step[peer.name] = max(seconds_per_step.get(peer.name, 0.0),
                                                  row["us"] / 1e6 / (sequences * steps))
            result["rows"].append(row)
            print(f"[{label} {number}/{len(peers)}] {peer.name}: {_describe(row)}", flush=True)
        del a, b
        torch.cuda.empty_cache()
    result["copy_us_after"] = _copy_us(torch, shapes, repeats)
    result["clocks_after"] = _nvml.facts(0)
    result["copy_drift"] = copy_drift(result["copy_us_before"], result["copy_us_after"])
    result["usable"] = result["copy_drift"] <= DRIFT_LIMIT
    return result


def _describe(row: dict) -> str:
    if "us" in row:
        return f"{row['us']:.1f} us, max rel. error {row['error']:.1e} {row['status']}"
    return f"{row['status']}: {row.get('reason', '')}"


# ---- reporting (CPU) ---------------------------------------------------------------------------

def copy_us(result: dict) -> dict:
    return {k: min(result["copy_us_before"][k], result["copy_us_after"][k]) for k in result["copy_us_before"]}


def speedup_line(result: dict, label: str = "2^24") -> str:
    """Issue 4: rtscan auto against the faster of the pure-PyTorch baselines at 2^24."""
    timed = {r["peer"]: r for r in result["rows"] if r["shape"] == label and r.get("status") == "ok"}
    baselines = [r for name, r in timed.items() if result["peers"].get(name, {}).get("group") == "pytorch"]
    if "rtscan auto" not in timed or not baselines:
        return f"rtscan auto vs the faster pure-PyTorch baseline at {label}: not measured (a side is missing or wrong)"
    fastest = min(baselines, key=lambda r: r["us"])
    times = fastest["us"] / timed["rtscan auto"]["us"]
    return (f"rtscan auto at {label}: {timed['rtscan auto']['us']:.1f} us; the faster pure-PyTorch baseline, "
            f"{fastest['peer']}: {fastest['us']:.1f} us; {times:.0f}x (issue 4 asks at least 60x)")


def table(result: dict) -> str:
    """One Markdown table: a row per system, a column per shape; each cell the ratio to the copy
    of the same run and the time, or why there is none (numbered reasons below the table)."""
    copies, labels, reasons = copy_us(result), result["shapes"], []
    cells = {(r["peer"], r["shape"]): r for r in result["rows"]}

    def reason_mark(text: str) -> str:
        if text not in reasons:
            reasons.append(text)
        return f"[{reasons.index(text) + 1}]"

    lines = ["| system | " + " | ".join(f"{label} vs copy (us)" for label in labels) + " |",
             "|---" * (len(labels) + 1) + "|",
             "| copy, same 12 B/step | " + " | ".join(f"1 ({copies[label]:.1f})" for label in labels) + " |"]
    for name in result["peers"]:
        row_cells = []
        for label in labels:
            row = cells.get((name, label))
            if row is None:
                row_cells.append("-")
            elif "us" in row:
                text = f"{copies[label] / row['us']:.3f} ({row['us']:.1f})"
                row_cells.append(text if row["status"] == "ok" else f"WRONG, error {row['error']:.1e}: {text}")
            else:
                row_cells.append(f"{row['status']} {reason_mark(row.get('reason', ''))}")
        lines.append(f"| {name} | " + " | ".join(row_cells) + " |")
    for name, why in result["missing"].items():
        lines.append(f"| {name} | " + " | ".join([f"not installed {reason_mark(why)}"] * len(labels)) + " |")
    lines.append("")
    lines += [f"[{number}] {text}" for number, text in enumerate(reasons, 1)]
    notes = [f"- {name}: {info['layout']}" + (f"; {info['note']}" if info["note"] else "")
             for name, info in result["peers"].items() if info["group"] == "peer"]
    lines += ["", "Inputs as each peer is given them:"] + notes if notes else []
    lines += ["", speedup_line(result),
              f"Copy moved {result['copy_drift']:.1%} between the readings before and after: "
              + ("usable." if result["usable"] else f"UNUSABLE (limit {DRIFT_LIMIT:.0%})."),
              f"{result['device']}, torch {result['torch']}, seed {result['seed']}, {result['date']}; "
              f"a in [0.5, 1), b standard normal; ratios count {BYTES_PER_STEP} B/step for every system."]
    return "\n".join(lines)


def write(result: dict, folder: Path) -> list[Path]:
    """JSON, CSV (a line per system and shape), the table as Markdown and, with matplotlib, a PNG."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"compare-{result['date']}"
    paths = [stem.with_suffix(".json"), stem.with_suffix(".csv"), stem.with_suffix(".md")]
    paths[0].write_text(json.dumps(result, indent=1, default=str))
    copies = copy_us(result)
    with paths[1].open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["system", "shape", "sequences", "steps", "status", "us", "gb_per_s", "vs_copy",
                         "max_relative_error", "reason", "usable"])
        for row in result["rows"]:
            micro = row.get("us")
            gbs = f"{BYTES_PER_STEP * row['sequences'] * row['steps'] / micro / 1e3:.1f}" if micro else ""
            writer.writerow([row["peer"], row["shape"], row["sequences"], row["steps"], row["status"],
                             f"{micro:.2f}" if micro else "", gbs, f"{copies[row['shape']] / micro:.4f}" if micro else "",
                             f"{row['error']:.3e}" if "error" in row else "", row.get("reason", ""), result["usable"]])
        for name, why in result["missing"].items():
            writer.writerow([name, "", "", "", "not installed", "", "", "", "", why, result["usable"]])
    paths[2].write_text(table(result) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG", flush=True)
        return paths
    paths.append(stem.with_suffix(".png"))
    _plot(plt, result, copies, paths[-1])
    return paths


def _plot(plt, result, copies, path: Path) -> None:
    """GB/s against total elements: lines through the one-sequence sizes, squares for batched shapes."""
    sizes = {r["shape"]: (r["sequences"], r["steps"]) for r in result["rows"]}
    figure, axes = plt.subplots(figsize=(8, 5))

    def series(times: dict, **style):
        points = [(math.log2(s * t), BYTES_PER_STEP * s * t / times[k] / 1e3, s) for k, (s, t) in sizes.items()
                  if k in times]
        long = sorted((x, y) for x, y, s in points if s == 1)
        line = axes.plot([x for x, _ in long], [y for _, y in long], **style)[0]
        batched = [(x, y) for x, y, s in points if s > 1]
        axes.plot([x for x, _ in batched], [y for _, y in batched], "s", color=line.get_color(), fillstyle="none")

    series(copies, color="k", linestyle="--", marker="x", label="copy, same bytes")
    for name in result["peers"]:
        times = {r["shape"]: r["us"] for r in result["rows"] if r["peer"] == name and r.get("status") == "ok"}
        if times:
            series(times, marker="o", markersize=3, label=name)
    axes.set_yscale("log")
    axes.set_xlabel("log2 elements (lines: one sequence; squares: batched shapes)")
    axes.set_ylabel(f"GB/s ({BYTES_PER_STEP} B/element)")
    axes.set_title(f"rtscan and peers, {result['device']}" + ("" if result["usable"] else " (UNUSABLE)"))
    axes.legend(fontsize=6, ncol=2)
    figure.savefig(path, dpi=120, bbox_inches="tight")


def select(peers, only: list[str]):
    return [p for p in peers if not only or any(s.lower() in p.name.lower() for s in only)]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("profiling/compare.py needs torch and a GPU; torch is not installed here", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("profiling/compare.py needs torch and a GPU; torch sees no GPU", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    found, missing = peer_module.collect(peer_module.OPTIONAL)
    systems = select(peer_module.rtscan_peers() + peer_module.pytorch_peers() + found, args.only)
    result = measure(args.shapes, systems, missing, args.repeats, args.max_seconds, seed)
    print(table(result))
    folder = args.out or Path(__file__).parent / "results" / gpu_folder(result["device"])
    for path in write(result, folder):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
