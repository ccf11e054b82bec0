"""Time and bandwidth of each pass of a variant, from CUDA events around each launch and the
traffic model's bytes for that pass (rtscan/model.py), beside a copy of the same bytes timed in
the same run. Each pass also has its NVTX range (domain "rtscan") for Nsight: see
profiling/nsight_passes.sh, which reads the same passes' DRAM bytes from the hardware.

How: rtscan's own launch function is wrapped for the duration of the measurement so that an event
is recorded on the stream before and after every launch; the library is not changed. Each timed
call is queued right behind an untimed one, so the GPU is still busy when its events are queued
and no host latency falls between a start event and its kernel. Each call is repeated REPEATS
times after a warm-up and the median per pass is reported.

Usage, from a source checkout, on a GPU:
    PYTHONPATH=. python3 profiling/passes.py --variants three_pass,three_pass_reduce,lookback_regs --log2 24,28
    PYTHONPATH=. python3 profiling/passes.py --variants columns,lookback_regs --log2 24 --time-major 64
(the second: 64 sequences laid out (steps, 64), scanned along dim 0, 2^24 steps in all)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

REPEATS = 7


@dataclass
class PassTiming:
    variant: str
    log2: int
    name: str           # the pass's NVTX range name (multi-pass) or "scan"
    micros: float       # median time of the launch
    memory_bytes: int   # the model's device bytes for this pass

    @property
    def gbs(self) -> float:
        return self.memory_bytes / self.micros / 1e3 if self.micros > 0 else 0.0


def attribute(variant: str, log2: int, names: list[str], model_bytes: list[int],
              samples: list[list[float]]) -> list[PassTiming]:
    """One PassTiming per pass from `samples` (one list of per-launch microseconds per call)."""
    if any(len(call) != len(names) for call in samples):
        raise ValueError(f"{variant}: each call must launch {len(names)} kernels, got "
                         f"{sorted({len(call) for call in samples})}")
    return [PassTiming(variant, log2, name, statistics.median(call[i] for call in samples), model_bytes[i])
            for i, name in enumerate(names)]


def table(rows: list[PassTiming], copy_us: dict[int, float]) -> list[str]:
    """Lines of a text table; the copy moves 12 B per step, so its rate is 12 * 2^log2 / time."""
    lines = [f"{'variant':<18} {'size':>5} {'pass':<34} {'us':>9} {'model MB':>9} {'GB/s':>7} {'vs copy':>8}"]
    for row in rows:
        copy_gbs = 12 * (1 << row.log2) / copy_us[row.log2] / 1e3
        ratio = f"{row.gbs / copy_gbs:8.3f}" if row.memory_bytes else f"{'-':>8}"
        lines.append(f"{row.variant:<18} 2^{row.log2:<3} {row.name:<34} {row.micros:9.1f} "
                     f"{row.memory_bytes / 1e6:9.1f} {row.gbs:7.0f} {ratio}")
    return lines


def measure(variant_names: list[str], log2_sizes: list[int],
            time_major: int = 0) -> tuple[list[PassTiming], dict[int, float]]:
    """With `time_major` S > 0, each size is S sequences laid out (steps, S) and scanned along dim 0
    (the scalar path); else one contiguous sequence."""
    import numpy as np

    from rtscan import _bench, _driver, _kernels, model, registry
    from rtscan import scan

    _driver.make_current(0)
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    arch = _kernels.device_arch(0)
    rows, copy_us = [], {}
    real_launch = _driver.launch
    try:
        for log2 in log2_sizes:
            n = 1 << log2
            sequences = time_major or 1
            layout = (n // sequences, sequences) if time_major else None
            a, b, out = (_bench.DeviceBuffer(n, layout) for _ in range(3))
            a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
            b.fill(rng.standard_normal(n, dtype=np.float32), stream)
            source, target = _bench.DeviceBuffer(3 * n // 2), _bench.DeviceBuffer(3 * n // 2)
            copy_us[log2] = _bench._time_copy(
                lambda: _driver.copy_device_to_device(target.pointer, source.pointer, 6 * n, stream), stream, 5)
            for name in variant_names:
                variant = registry.resolve(name)
                vec = 1 if time_major else 4
                shape = variant.launch_shape(arch, "float32", vec, n // sequences, sequences)
                passes = model.passes(variant, shape, sequences, n // sequences, 4)
                dim = 0 if time_major else -1
                scan(a, b, dim=dim, out=out, variant=name, stream=stream)  # compile, load, size the scratch
                samples = []
                for _ in range(REPEATS):
                    events = []

                    def timed_launch(*args):
                        start, end = _driver.Event(), _driver.Event()
                        start.record(stream)
                        real_launch(*args)
                        end.record(stream)
                        events.append((start, end))

                    scan(a, b, dim=dim, out=out, variant=name, stream=stream)  # keeps the GPU busy meanwhile
                    _driver.launch = timed_launch
                    try:
                        scan(a, b, dim=dim, out=out, variant=name, stream=stream)
                    finally:
                        _driver.launch = real_launch
                    events[-1][1].synchronize()
                    samples.append([_driver.elapsed_ms(start, end) * 1e3 for start, end in events])
                rows += attribute(name, log2, [p.name for p in passes], [p.memory_bytes for p in passes], samples)
                print(f"[{name} 2^{log2}] " + ", ".join(f"{r.name}: {r.micros:.1f} us" for r in rows[-len(passes):]),
                      flush=True)
            del a, b, out, source, target
    finally:
        _driver.launch = real_launch
        _driver.destroy_stream(stream)
    return rows, copy_us


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", default="three_pass,three_pass_reduce,lookback_regs")
    parser.add_argument("--log2", default="24,28", help="one sequence of 2^LOG2 steps per size")
    parser.add_argument("--time-major", type=int, default=0, metavar="S",
                        help="S sequences per size instead, laid out (steps, S) and scanned along dim 0")
    args = parser.parse_args(argv)
    log2_sizes = [int(x) for x in args.log2.split(",")]
    if args.time_major < 0 or any((1 << k) % max(1, args.time_major) for k in log2_sizes):
        parser.error("--time-major must be positive and divide every size")
    import rtscan

    if not rtscan.gpu_available():
        print("profiling/passes.py needs a GPU; none is visible here", file=sys.stderr)
        return 2
    rows, copy_us = measure(args.variants.split(","), log2_sizes, args.time_major)
    print("\n".join(table(rows, copy_us)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
