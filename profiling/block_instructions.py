"""Warp instructions a block of lookback_regs issues, per batch shape, from Nsight Compute: the count
that showed blocks of packed rows issue-bound on the one-step loops of their idle lanes (P228;
profiling/NOTES.md, items 139 and 140).

Each ROWSxSTEPS shape is scanned twice with out= in one process under ncu (--clock-control none:
the card at its own clocks, as the bench sees it), and the second launch's counters are printed:
its blocks, its time, the warp instructions it issued in all and a block, how busy the issue slots
were, and how busy the DRAM was.

Usage, on a GPU machine with ncu and torch: PYTHONPATH=. python3 profiling/block_instructions.py 524288x32 600000x20
"""

from __future__ import annotations

import re
import subprocess
import sys

METRICS = {
    "time_us": "gpu__time_duration.sum",
    "warp_instructions": "smsp__inst_executed.sum",
    "issue_active_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "dram_busy_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
}
LAUNCHES_A_SHAPE = 2  # the first may also compile or load; the second is reported


def scan_each(shapes: list[str]) -> None:
    """The profiled process: each shape scanned LAUNCHES_A_SHAPE times, synchronised after each."""
    import torch

    import rtscan

    for shape in shapes:
        rows, steps = map(int, shape.split("x"))
        a = torch.rand(rows, steps, device="cuda")
        b = torch.randn(rows, steps, device="cuda")
        out = torch.empty_like(a)
        for _ in range(LAUNCHES_A_SHAPE):
            rtscan.scan(a, b, out=out)
            torch.cuda.synchronize()


def parse(report: str, shapes: list[str]) -> list[dict]:
    """One row per shape from ncu's text report: the last of its LAUNCHES_A_SHAPE kernels, in order."""
    kernels = re.split(r"\n  void lookback_scan", report)[1:]
    if len(kernels) != LAUNCHES_A_SHAPE * len(shapes):
        raise ValueError(f"ncu reported {len(kernels)} lookback_scan launches, not {LAUNCHES_A_SHAPE} for each of "
                         f"{len(shapes)} shapes")
    rows = []
    for index, shape in enumerate(shapes):
        kernel = kernels[LAUNCHES_A_SHAPE * index + LAUNCHES_A_SHAPE - 1]
        row = {"shape": shape, "blocks": int(re.search(r"\((\d+), 1, 1\)x\(", kernel).group(1))}
        for name, metric in METRICS.items():
            found = re.search(re.escape(metric) + r"\s+\S*\s+([\d,.]+)\s*\n", kernel)
            if found is None:
                raise ValueError(f"{metric} missing from ncu's report of {shape}")
            row[name] = float(found.group(1).replace(",", ""))
        row["per_block"] = row["warp_instructions"] / row["blocks"]
        rows.append(row)
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--scan"]:
        scan_each(sys.argv[2:])
        return
    shapes = sys.argv[1:]
    if not shapes:
        sys.exit(__doc__)
    command = ["ncu", "--clock-control", "none", "-k", "regex:lookback", "--metrics", ",".join(METRICS.values()),
               sys.executable, __file__, "--scan", *shapes]
    report = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    print(f"{'shape':>14} {'blocks':>8} {'us':>8} {'warp instr':>12} {'a block':>8} {'issue %':>8} {'DRAM %':>7}")
    for row in parse(report, shapes):
        print(f"{row['shape']:>14} {row['blocks']:>8} {row['time_us']:>8.2f} {row['warp_instructions']:>12.0f} "
              f"{row['per_block']:>8.0f} {row['issue_active_pct']:>8.1f} {row['dram_busy_pct']:>7.1f}")


if __name__ == "__main__":
    main()
