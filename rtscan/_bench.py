"""`python -m rtscan bench`: scans beside a device-to-device copy of the same bytes, one run.

Scans are timed as CUDA graphs of back-to-back launches replayed between two events, so host
launch overhead stays out of the device figures; the median of several replays is reported. The
copy is timed that way and as plain back-to-back launches, and the faster counts.
Traffic is counted at the minimum the recurrence needs: read a, read b, write h (12 B/element in
float32); the copy moves the same bytes (reads 6 B/element, writes 6 B/element).
"""

from __future__ import annotations

import statistics

import numpy as np

from . import _driver, _kernels, _nvml, _nvtx, model
from ._scan import scan
from .registry import VARIANTS

REPLAYS = 7


class DeviceBuffer:
    """Plain device memory exposed through __cuda_array_interface__ (no framework needed)."""

    def __init__(self, count: int):
        self.count = count
        self.pointer = _driver.alloc(4 * count)
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": "<f4", "data": (self.pointer, False),
                                         "strides": None, "version": 3}

    def fill(self, values: np.ndarray, stream: int) -> None:
        _driver.copy_to_device(self.pointer, values.ctypes.data, values.nbytes, stream)
        _driver.synchronize(stream)

    def __del__(self) -> None:
        if getattr(self, "pointer", None):
            _driver.free(self.pointer)


def _time_graph(enqueue, stream: int, launches: int) -> float:
    """Median microseconds per launch over REPLAYS replays of a graph of `launches` launches."""
    graph = _driver.capture_graph(stream, lambda: [enqueue() for _ in range(launches)])
    try:
        _driver.launch_graph(graph, stream)  # warm-up
        start, end = _driver.Event(), _driver.Event()
        samples = []
        for _ in range(REPLAYS):
            start.record(stream)
            _driver.launch_graph(graph, stream)
            end.record(stream)
            end.synchronize()
            samples.append(_driver.elapsed_ms(start, end) * 1e3 / launches)
        return statistics.median(samples)
    finally:
        _driver.destroy_graph(graph)


def _time_stream(enqueue, stream: int, launches: int) -> float:
    """Median microseconds per launch of `launches` back-to-back launches between two events."""
    enqueue()  # warm-up
    start, end = _driver.Event(), _driver.Event()
    samples = []
    for _ in range(REPLAYS):
        start.record(stream)
        for _ in range(launches):
            enqueue()
        end.record(stream)
        end.synchronize()
        samples.append(_driver.elapsed_ms(start, end) * 1e3 / launches)
    return statistics.median(samples)


def _time_copy(copy, stream: int, launches: int) -> float:
    """The copy's best honest figure: a captured copy node can take a slower engine than a
    plain cuMemcpyDtoDAsync (seen on an H200 at 1.6 GB: 1188 us in a graph, 758 us plain), so
    both are timed and the faster is the ceiling the scan is compared with."""
    return min(_time_graph(copy, stream, launches), _time_stream(copy, stream, launches))


def _predicted_us(name: str, n: int, copy_bytes: int, copy_us: float) -> float:
    """rtscan/model.py's time for one sequence of n steps (the bench's aligned buffers take the
    16-byte path), at the bandwidth the copy reached in this row."""
    variant = VARIANTS[name]
    shape = variant.launch_shape(_kernels.device_arch(0), "float32", 4, n)
    return model.predicted_us(model.passes(variant, shape, 1, n, 4), copy_bytes, copy_us)


def _clocks() -> str:
    facts = _nvml.facts(0)
    if "sm_clock_mhz" not in facts:
        return "clocks: unknown"
    return f"SM {facts['sm_clock_mhz']} MHz, memory {facts['memory_clock_mhz']} MHz"


def run(variant_names: list[str], log2_sizes, with_model: bool = False) -> None:
    _driver.make_current(0)
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    print(f"device: {_driver.device_name(0)}; {_clocks()} at start", flush=True)
    header = f"{'elements':>12} {'copy us':>9} {'copy GB/s':>9}"
    for name in variant_names:
        header += f" | {name + ' us':>20} {'GB/s':>7} {'vs copy':>7}"
        if with_model:
            header += f" {'model us':>9} {'/model':>7}"
    print(header, flush=True)
    try:
        for log2 in log2_sizes:
            n = 1 << log2
            a, b, out = DeviceBuffer(n), DeviceBuffer(n), DeviceBuffer(n)
            a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
            b.fill(rng.standard_normal(n, dtype=np.float32), stream)
            source, target = DeviceBuffer(3 * n // 2), DeviceBuffer(3 * n // 2)  # 6 B/element each way
            launches = max(1, min(200, (1 << 26) // n))  # at least ~0.5 ms of work per replay
            nbytes = 12 * n

            def copy():
                _driver.copy_device_to_device(target.pointer, source.pointer, 6 * n, stream)

            copy_before = _time_copy(copy, stream, launches)
            row = []
            for name in variant_names:
                def one_scan():
                    scan(a, b, out=out, variant=name, stream=stream)

                with _nvtx.annotate(f"bench {name} 2^{log2}"):
                    one_scan()  # compiles, loads and sizes the workspace outside the capture
                    micro = _time_graph(one_scan, stream, launches)
                row.append((micro, nbytes / micro / 1e3))
            copy_after = _time_copy(copy, stream, launches)
            copy_time = min(copy_before, copy_after)
            line = f"{n:>12} {copy_time:>9.1f} {nbytes / copy_time / 1e3:>9.0f}"
            for name, (micro, gbs) in zip(variant_names, row):
                line += f" | {micro:>20.1f} {gbs:>7.0f} {copy_time / micro:>7.3f}"
                if with_model:
                    predicted = _predicted_us(name, n, nbytes, copy_time)
                    line += f" {predicted:>9.1f} {micro / predicted:>7.2f}"
            drift = abs(copy_after - copy_before) / copy_before
            if drift > 0.03:
                line += f"  (copy moved {drift:.0%} during this row)"
            print(line, flush=True)
            del a, b, out, source, target
    finally:
        _driver.destroy_stream(stream)
    print(f"{_clocks()} at end; GB/s counts 12 B/element (read a, read b, write h)", flush=True)
