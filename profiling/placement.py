"""Does where a launch's buffers lie change its warm figure? (P176 in PREDICTIONS.md.)

`python -m rtscan bench` times a row by replaying launches over the same buffers, so a launch whose
bytes are near the L2's size finds part of them left in L2 by the launch before, and how much may
hang on where the allocations fall. This places a, b and h (one sequences x steps row) after a pad
of unused device memory, and apart from each other by a gap, and times auto's scan and the copy of
the same bytes (its own buffers, allocated after) as the bench does, warm, once per placement.

    PYTHONPATH=. python3 -P profiling/placement.py --shape 64x65536 --pads 0,2,4,8 --gaps 0,1,2 --rounds 2
"""
from __future__ import annotations

import argparse

import numpy as np

from rtscan import _bench, _driver, scan

MB = 1 << 20


def one_placement(num_seqs: int, length: int, pad: int, gap: int, rng, stream: int) -> str:
    n = num_seqs * length
    held = [_bench.DeviceBuffer(pad * MB // 4)] if pad else []
    a = _bench.DeviceBuffer(n, (num_seqs, length))
    held += [_bench.DeviceBuffer(gap * MB // 4)] if gap else []
    b = _bench.DeviceBuffer(n, (num_seqs, length))
    held += [_bench.DeviceBuffer(gap * MB // 4)] if gap else []
    out = _bench.DeviceBuffer(n, (num_seqs, length))
    a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
    b.fill(rng.standard_normal(n, dtype=np.float32), stream)
    source, target = _bench.DeviceBuffer(3 * n // 2), _bench.DeviceBuffer(3 * n // 2)
    launches = max(1, min(200, (1 << 26) // n))

    def copy():
        _driver.copy_device_to_device(target.pointer, source.pointer, 6 * n, stream)

    def one_scan():
        scan(a, b, out=out, stream=stream)

    one_scan()
    copy_us = _bench._time_copy(copy, stream, launches)
    scan_us = _bench._time_graph(one_scan, stream, launches)
    where = " ".join(f"{name} {buffer.pointer:#x}" for name, buffer in (("a", a), ("b", b), ("h", out)))
    return f"{pad:>4} {gap:>4} {copy_us:>8.2f} {scan_us:>8.2f} {copy_us / scan_us:>7.3f}   {where}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="64x65536", help="SEQUENCESxSTEPS, one row")
    parser.add_argument("--pads", default="0,2,4,6,8,12,16,24", help="MB of device memory allocated before a")
    parser.add_argument("--gaps", default="0", help="MB allocated between a and b and between b and h")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    (num_seqs, length), = _bench.parse_shapes(args.shape)
    _driver.make_current(0)
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    print(f"{args.shape}, warm, auto; {_bench._clocks()} at start", flush=True)
    print(f"{'pad':>4} {'gap':>4} {'copy us':>8} {'scan us':>8} {'vs copy':>7}   addresses", flush=True)
    try:
        for _ in range(args.rounds):
            for gap in (int(g) for g in args.gaps.split(",")):
                for pad in (int(p) for p in args.pads.split(",")):
                    print(one_placement(num_seqs, length, pad, gap, rng, stream), flush=True)
    finally:
        _driver.destroy_stream(stream)
    print(f"{_bench._clocks()} at end", flush=True)


if __name__ == "__main__":
    main()
