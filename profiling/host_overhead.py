"""Host overhead of one rtscan.scan call on a tiny torch tensor (issue 4: under 10 us, mean over
10,000 calls), beside torch.cumsum on the same tensor, which also costs one launch.

The calls are timed on the host with time.perf_counter, with a synchronisation only at the end: a
16-step scan takes the GPU a few microseconds, so the host is the bound and the mean is its cost
per call (launches queue up; 10,000 stay within the queue's capacity between synchronisations
often enough that the figure is the host's, not the GPU's; the GPU time is printed beside it).

The cases take turns, --rounds times, each round timing calls / rounds calls of every case; the
figure is a case's median round, with the mean over all its calls (the issue's figure) beside it.
In one pass of 10,000 calls a case after another (the seventeenth session's first run,
results/h200/gpu-suite-2026-11-30-17.txt) each case came out about 5 us slower than the one before
it, out= slower than without: the order, not the call, set part of each figure.

A fifth case repeats only the launch of `scan(a, b, out=out)`, its arguments ready: the driver
call under every case.

Usage, on a GPU machine with torch: PYTHONPATH=. python3 profiling/host_overhead.py [--calls N] [--rounds R]
"""

from __future__ import annotations

import argparse
import statistics
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


def captured_launch(call) -> tuple:
    """(function, grid, threads, shared bytes, stream) of the one launch `call` makes (it still
    launches), made through the general path, which launches what the torch path would (the same
    prepared layout into the same argument block) but through _driver.launch, where it can be seen;
    its arguments are left in this thread's argument block (rtscan._scan)."""
    from rtscan import _driver, _torch_path

    launched = []
    launch, torch_path = _driver.launch, _torch_path.scan
    _driver.launch = lambda *arguments: launched.append(arguments) or launch(*arguments)
    _torch_path.scan = lambda *arguments: None
    try:
        call()
    finally:
        _driver.launch, _torch_path.scan = launch, torch_path
    ((function, grid, threads, shared_bytes, stream, _),) = launched
    return function, grid, threads, shared_bytes, stream


def launch_alone(call):
    """A function that repeats only the cuLaunchKernel (through rtscan._driver.launch, which checks
    its result) of one `call`, its arguments ready: the floor under a call's host cost. The
    arguments are copied out of the thread's argument block, which later calls refill; relaunching
    is another scan of the same inputs into the same output."""
    import ctypes

    from rtscan import _driver, _scan

    function, grid, block, shared_bytes, stream = captured_launch(call)
    launch = _driver.launch
    kept = _scan._ArgumentBlock()
    source = _scan.argument_block().arguments
    ctypes.memmove(ctypes.addressof(kept.arguments), ctypes.addressof(source), ctypes.sizeof(source))
    return lambda: launch(function, grid, block, shared_bytes, stream, kept.params_address)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000, help="calls of each case in all")
    parser.add_argument("--rounds", type=int, default=5, help="turns the cases take (default 5)")
    args = parser.parse_args()
    a = torch.rand(16, device="cuda")
    b = torch.randn(16, device="cuda")
    out = torch.empty_like(a)
    stream = torch.cuda.current_stream()
    cases = {
        "rtscan.scan(a, b)": lambda: rtscan.scan(a, b),
        "rtscan.scan(a, b, out=out)": lambda: rtscan.scan(a, b, out=out),
        "rtscan.scan(a, b, out=out, stream=stream)": lambda: rtscan.scan(a, b, out=out, stream=stream),
        "its launch alone (rtscan._driver.launch)": launch_alone(lambda: rtscan.scan(a, b, out=out)),
        "torch.cumsum(b, 0)": lambda: torch.cumsum(b, 0),
    }
    per_round = max(1, args.calls // args.rounds)
    print(f"{per_round} calls a case in each of {args.rounds} rounds, the cases in turn, on 16 float32 steps; "
          f"{torch.cuda.get_device_name()}")
    rounds = {name: [] for name in cases}
    for _ in range(args.rounds):
        for name, call in cases.items():
            rounds[name].append(mean_us(call, per_round))
    for name, figures in rounds.items():
        host = statistics.median(h for h, _ in figures)
        gpu = statistics.median(g for _, g in figures)
        spread = f"{min(h for h, _ in figures):.2f}-{max(h for h, _ in figures):.2f}"
        mean = statistics.fmean(h for h, _ in figures)  # the rounds' calls are equal in number: issue 4's mean
        print(f"{name:<45} host {host:6.2f} us/call (rounds {spread}; mean of all {per_round * args.rounds} calls "
              f"{mean:.2f})   GPU span {gpu:6.2f} us/call")


if __name__ == "__main__":
    main()
