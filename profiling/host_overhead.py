"""Host overhead of one rtscan.scan call on a tiny torch tensor (issue 4: under 10 us, mean over
10,000 calls), beside torch.cumsum on the same tensor, which also costs one launch.

The calls are timed on the host with time.perf_counter, with a synchronisation only at the end: a
16-step scan takes the GPU a few microseconds, so the host is the bound and the mean is its cost
per call (launches queue up; 10,000 stay within the queue's capacity between synchronisations
often enough that the figure is the host's, not the GPU's; the GPU time is printed beside it).

Usage, on a GPU machine with torch: PYTHONPATH=. python3 profiling/host_overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import time

import torch

import rtscan


def mean_us(call, calls: int) -> tuple[float, float]:
    """(host microseconds per call, GPU microseconds per call) over `calls` calls after a warm-up."""
    for _ in range(100):
        call()
    torch.cuda.synchronize()
    start_event, end_event = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start_event.record()
    started = time.perf_counter()
    for _ in range(calls):
        call()
    host = time.perf_counter() - started
    end_event.record()
    torch.cuda.synchronize()
    return host / calls * 1e6, start_event.elapsed_time(end_event) * 1e3 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000)
    calls = parser.parse_args().calls
    a = torch.rand(16, device="cuda")
    b = torch.randn(16, device="cuda")
    out = torch.empty_like(a)
    stream = torch.cuda.current_stream()
    cases = {
        "rtscan.scan(a, b)": lambda: rtscan.scan(a, b),
        "rtscan.scan(a, b, out=out)": lambda: rtscan.scan(a, b, out=out),
        "rtscan.scan(a, b, out=out, stream=stream)": lambda: rtscan.scan(a, b, out=out, stream=stream),
        "torch.cumsum(b, 0)": lambda: torch.cumsum(b, 0),
    }
    print(f"{calls} calls each on 16 float32 steps; {torch.cuda.get_device_name()}")
    for name, call in cases.items():
        host, gpu = mean_us(call, calls)
        print(f"{name:<45} host {host:6.2f} us/call   GPU span {gpu:6.2f} us/call")


if __name__ == "__main__":
    main()
