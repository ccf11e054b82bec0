"""`python -m rtscan bench`: scans beside a device-to-device copy of the same bytes, one run.

Scans are timed as CUDA graphs of back-to-back launches replayed between two events, so host
launch overhead stays out of the device figures; the median of several replays is reported. The
copy is timed that way and as plain back-to-back launches, and the faster counts.
Traffic is counted at the minimum the recurrence needs: read a, read b, write h (12 B/element in
float32); the copy moves the same bytes (reads 6 B/element, writes 6 B/element).

Launches of one row reuse their buffers, so where a row's bytes are near the L2's size a launch
can find part of its inputs left in L2 by the one before, and the copy likewise (P71 in
profiling/PREDICTIONS.md). `cold` rotates every launch, the copy's too, over enough buffer sets
that they add up to COLD_L2_MULTIPLE times the L2: no launch then reads what an earlier one left
there.
"""

from __future__ import annotations

import itertools
import statistics

import numpy as np

from . import _driver, _kernels, _nvml, _nvtx, _scan, model, scan

REPLAYS = 7
COLD_L2_MULTIPLE = 4


def rotation_sets(set_bytes: int, l2_bytes: int, launches: int) -> int:
    """How many buffer sets of `set_bytes` a cold row rotates over: enough to hold COLD_L2_MULTIPLE
    L2s, and no more than its launches."""
    return max(1, min(launches, -(-COLD_L2_MULTIPLE * l2_bytes // set_bytes)))


class DeviceBuffer:
    """Plain device memory exposed through __cuda_array_interface__ (no framework needed): `count`
    float32 in `shape` (default one row), starting `offset` elements into the allocation (an
    offset of 1 puts the first row one element past a 128-byte line; the look-back variants scan
    every row 16 bytes at a time from the boundary before it, the others take their scalar path)."""

    def __init__(self, count: int, shape: tuple[int, ...] | None = None, offset: int = 0):
        self.count = count
        self.allocation = _driver.alloc(4 * (count + offset))
        self.pointer = self.allocation + 4 * offset
        self.__cuda_array_interface__ = {"shape": shape or (count,), "typestr": "<f4",
                                         "data": (self.pointer, False), "strides": None, "version": 3}

    def fill(self, values: np.ndarray, stream: int) -> None:
        _driver.copy_to_device(self.pointer, values.ctypes.data, values.nbytes, stream)
        _driver.synchronize(stream)

    def __del__(self) -> None:
        if getattr(self, "allocation", None):
            _driver.free(self.allocation)


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


def _predicted_us(name: str, num_seqs: int, length: int, offset: int, copy_bytes: int, copy_us: float,
                  time_major: bool) -> float:
    """rtscan/model.py's time for the launch rtscan prepares for num_seqs sequences of `length` steps
    laid out as the bench lays them (`offset` elements past a line), at the bandwidth the copy
    reached in this row."""
    launch = _scan.contiguous_launch(name, num_seqs, length, _kernels.device_arch(0), offset, time_major)
    return model.predicted_us(model.passes(launch.variant, launch.shape, num_seqs, length, 4, launch.longest_head),
                              copy_bytes, copy_us)


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """'8192x4096,64x65536' -> [(8192, 4096), (64, 65536)]: sequences x steps per row."""
    rows = []
    for item in text.split(","):
        parts = item.strip().lower().split("x")
        if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"a shape must look like 8192x4096 (sequences x steps), got {item!r}")
        rows.append((int(parts[0]), int(parts[1])))
    return rows


def _clocks() -> str:
    facts = _nvml.facts(0)
    if "sm_clock_mhz" not in facts:
        return "clocks: unknown"
    return f"SM {facts['sm_clock_mhz']} MHz, memory {facts['memory_clock_mhz']} MHz"


def _time_row(variant_names, num_seqs: int, length: int, offset: int, cold: bool, time_major: bool,
              l2_bytes: int, rng, stream: int) -> tuple[float, float, list[float]]:
    """One row's copy (before and after the scans) and each variant's scan, in microseconds a
    launch. Its buffers are freed on return, before the next row allocates."""
    n = num_seqs * length
    # The first row starts `offset` past the allocation's alignment, each row after it its length
    # further on. Time-major rows are (steps, sequences), scanned along dim 0: each sequence's steps
    # lie num_seqs elements apart.
    if time_major:
        shape, dim = (length, num_seqs), 0
    else:
        shape, dim = ((num_seqs, length) if num_seqs > 1 else (length,)), -1
    launches = max(1, min(200, (1 << 26) // n))  # at least ~0.5 ms of work per replay
    sets = rotation_sets(12 * n, l2_bytes, launches) if cold else 1
    launches = -(-launches // sets) * sets  # every set as often
    scans = []
    for _ in range(sets):
        a, b, out = (DeviceBuffer(n, shape, offset) for _ in range(3))
        a.fill(rng.uniform(0.5, 1.0, n).astype(np.float32), stream)
        b.fill(rng.standard_normal(n, dtype=np.float32), stream)
        scans.append((a, b, out))
    copy_words = -(-3 * n // 2)  # 6 B an element each way, rounded up to whole words: n may be odd
    copies = itertools.cycle([(DeviceBuffer(copy_words), DeviceBuffer(copy_words)) for _ in range(sets)])

    def copy():
        source, target = next(copies)
        _driver.copy_device_to_device(target.pointer, source.pointer, 6 * n, stream)

    copy_before = _time_copy(copy, stream, launches)
    timed = []
    for name in variant_names:
        inputs = itertools.cycle(scans)

        def one_scan():
            a, b, out = next(inputs)
            scan(a, b, dim=dim, out=out, variant=name, stream=stream)

        with _nvtx.annotate(f"bench {name} {num_seqs}x{length}"):
            one_scan()  # compiles, loads and sizes the workspace outside the capture
            timed.append(_time_graph(one_scan, stream, launches))
    return copy_before, _time_copy(copy, stream, launches), timed


def run(variant_names: list[str], rows: list[tuple[int, int]], with_model: bool = False, offset: int = 0,
        cold: bool = False, time_major: bool = False) -> None:
    """One line per row (sequences, steps): each variant's time beside a copy of the same bytes.
    With offset 1 the first sequence starts one element past a 128-byte line (for the look-back
    variants each row's head of rtscan/_scan.py, unless it would turn a row of one tile into two;
    the scalar path for others). With `cold`, launches rotate over buffer sets (rotation_sets). With
    `time_major`, a row is a (steps, sequences) array scanned along dim 0: time stride `sequences`,
    the scalar path where that exceeds 1."""
    _driver.make_current(0)
    stream = _driver.create_stream()
    rng = np.random.default_rng()
    l2_bytes = _driver.device_attribute(0, "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE")
    print(f"device: {_driver.device_name(0)}; {_clocks()} at start"
          + ("; inputs one element past a 128-byte line" if offset else "")
          + ("; time-major: rows of (steps, sequences) scanned along dim 0" if time_major else "")
          + (f"; cold: launches rotate over buffers of {COLD_L2_MULTIPLE}x the {l2_bytes >> 20} MB L2" if cold else ""),
          flush=True)
    header = f"{'elements':>14} {'copy us':>9} {'copy GB/s':>9}"
    for name in variant_names:
        header += f" | {name + ' us':>20} {'GB/s':>7} {'vs copy':>7}"
        if with_model:
            header += f" {'model us':>9} {'/model':>7}"
    print(header, flush=True)
    try:
        for num_seqs, length in rows:
            copy_before, copy_after, timed = _time_row(variant_names, num_seqs, length, offset, cold, time_major,
                                                       l2_bytes, rng, stream)
            nbytes = 12 * num_seqs * length
            copy_time = min(copy_before, copy_after)
            label = f"{num_seqs}x{length}" if num_seqs > 1 else f"{length}"
            line = f"{label:>14} {copy_time:>9.1f} {nbytes / copy_time / 1e3:>9.0f}"
            for name, micro in zip(variant_names, timed):
                line += f" | {micro:>20.1f} {nbytes / micro / 1e3:>7.0f} {copy_time / micro:>7.3f}"
                if with_model:
                    predicted = _predicted_us(name, num_seqs, length, offset, nbytes, copy_time, time_major)
                    line += f" {predicted:>9.1f} {micro / predicted:>7.2f}"
            drift = abs(copy_after - copy_before) / copy_before
            if drift > 0.03:
                line += f"  (copy moved {drift:.0%} during this row)"
            print(line, flush=True)
    finally:
        _driver.destroy_stream(stream)
    print(f"{_clocks()} at end; GB/s counts 12 B/element (read a, read b, write h)", flush=True)
