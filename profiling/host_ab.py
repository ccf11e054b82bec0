"""Host time of a small rtscan.scan from two trees in one process: the tree on PYTHONPATH and a base
tree imported beside it as `rtscan_base`, their calls taking turns round by round.

Across processes the host's state moved a call's cost by 30-60 % (NOTES 157: a process of one tree
ran every case, torch.cumsum too, that much slower than the next), far more than the few tenths of
a microsecond a change to the torch path makes (P212 could not resolve one with six processes). In
one process both trees meet the same host state, and the per-round difference repeats to about
0.3 us (results/h200/p253-host-2026-12-03-39.txt, part 2).

Each round times `--calls` calls of every case in turn (after a warm-up of each), synchronising
only at the end of a case; the figure is a case's median round, and for each call form the base's
minus the tree's per round and their median.

Usage, on a GPU machine with torch (BASE: a directory holding a tree's rtscan/ and kernels_cu/,
as `git archive REV rtscan kernels_cu | tar x -C BASE` makes):
  PYTHONPATH=. python3 -P profiling/host_ab.py BASE [--calls 2000] [--rounds 10]
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

import rtscan


def import_base(base: Path, into: Path):
    """The base tree's package, imported as rtscan_base from a copy under `into` (its kernels_cu/
    beside it, where a source checkout keeps it)."""
    shutil.copytree(base / "rtscan", into / "rtscan_base")
    shutil.copytree(base / "kernels_cu", into / "kernels_cu")
    sys.path.insert(0, str(into))
    return importlib.import_module("rtscan_base")


def timed(call, calls: int) -> float:
    """Host microseconds a call, over `calls` calls queued back to back."""
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - started
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = import_base(args.base.resolve(), Path(scratch))
        a, b = torch.rand(16, device="cuda"), torch.randn(16, device="cuda")
        out = torch.empty_like(a)
        a_host, b_host = a.double().cpu().tolist(), b.double().cpu().tolist()
        reference, state = [], 0.0
        for a_t, b_t in zip(a_host, b_host):  # float64, step by step
            state = a_t * state + b_t
            reference.append(state)
        for package in (base, rtscan):  # each compiles (or loads) and sizes its workspace here, and must be right
            h = package.scan(a, b).double().cpu()
            assert torch.allclose(h, torch.tensor(reference, dtype=torch.float64), rtol=1e-5, atol=1e-6), package
        cases = {
            "base scan(a, b)": lambda: base.scan(a, b),
            "tree scan(a, b)": lambda: rtscan.scan(a, b),
            "base scan(a, b, out=out)": lambda: base.scan(a, b, out=out),
            "tree scan(a, b, out=out)": lambda: rtscan.scan(a, b, out=out),
            "torch.cumsum(b, 0)": lambda: torch.cumsum(b, 0),
        }
        for call in cases.values():
            timed(call, 200)
        rounds: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, call in cases.items():
                rounds[name].append(timed(call, args.calls))
    print(f"{args.calls} calls a case in each of {args.rounds} rounds, cases in turn, one process; 16 float32 "
          f"steps; {torch.cuda.get_device_name()}")
    for name, figures in rounds.items():
        print(f"{name:<28} median {statistics.median(figures):6.2f} us  (rounds {min(figures):.2f}-{max(figures):.2f})")
    for form in ("scan(a, b)", "scan(a, b, out=out)"):
        differences = [x - y for x, y in zip(rounds[f"base {form}"], rounds[f"tree {form}"])]
        print(f"base - tree, {form:<20} per round: {' '.join(f'{d:.2f}' for d in differences)}; "
              f"median {statistics.median(differences):.2f} us")


if __name__ == "__main__":
    main()
