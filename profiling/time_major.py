"""Time-major batches two ways: rtscan.scan along the strided dim 0 of a (steps, sequences) array,
and the same made contiguous first (both inputs transposed by torch, scanned along their last dim,
the result transposed back into `out`), each beside a device-to-device copy of 12 B a step timed
in the same run: whether making such a batch contiguous first pays (P97: only from 64 sequences,
by 12-28 %).

Usage, on a GPU machine with torch: PYTHONPATH=. python3 profiling/time_major.py [--rows 1048576x8,...]
(rows are STEPSxSEQUENCES).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import rtscan

sys.path.insert(0, str(Path(__file__).parent))  # compare.py beside this script, also under python -P
from compare import time_calls  # noqa: E402

DEFAULT_ROWS = "4194304x2,1048576x8,262144x64,65536x256,16384x1024"


def median_us(call, launches: int = 20, replays: int = 5) -> float:
    """compare.py's median microseconds per call over `replays` runs of `launches` calls, after one
    call outside the timing."""
    call()
    torch.cuda.synchronize()
    return time_calls(torch, call, launches, replays)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=DEFAULT_ROWS, help="STEPSxSEQUENCES, comma-separated")
    rows = [tuple(int(x) for x in item.split("x")) for item in parser.parse_args().rows.split(",")]
    generator = torch.Generator(device="cuda").manual_seed(5)
    print(f"{torch.cuda.get_device_name()}; ratios to a copy of 12 B a step; float32")
    print(f"{'steps x sequences':>20} {'copy us':>9} | {'dim 0 us':>9} {'vs copy':>7} | {'transposed us':>13} {'vs copy':>7}")
    for steps, sequences in rows:
        a = torch.rand(steps, sequences, device="cuda", generator=generator) * 0.5 + 0.5
        b = torch.randn(steps, sequences, device="cuda", generator=generator)
        out = torch.empty_like(a)
        source = torch.empty(3 * steps * sequences // 2, device="cuda")  # 6 B a step read, 6 written
        target = torch.empty_like(source)

        def transposed():
            h = rtscan.scan(a.t().contiguous(), b.t().contiguous())
            out.copy_(h.t())

        rtscan.scan(a, b, dim=0, out=out)
        direct = out.clone()
        transposed()
        # Different tile shapes compose in different orders, so the bits may differ, not the values.
        difference = (out - direct).abs().max().item()
        assert difference < 1e-3 * max(1.0, direct.abs().max().item()), f"the two ways disagree by {difference}"
        copy = median_us(lambda: target.copy_(source))
        along = median_us(lambda: rtscan.scan(a, b, dim=0, out=out))
        around = median_us(transposed)
        print(f"{steps:>11} x {sequences:<6} {copy:>9.1f} | {along:>9.1f} {copy / along:>7.3f} | "
              f"{around:>13.1f} {copy / around:>7.3f}")


if __name__ == "__main__":
    main()
