"""Where the host time of one small rtscan.scan(a, b, out=out) goes, piece by piece: each step of
the call path timed alone (20,000 calls after 200), then the whole call with the launch stubbed
and not. profiling/host_overhead.py gives the totals; this says which pieces to work on.

The figures move with the host (one lease's host ran everything twice as slowly as another's in
the seventeenth session: results/h200/host-overhead-2026-11-30-17.txt), so compare pieces from one
run with each other.

Usage, on a GPU machine with torch: PYTHONPATH=. python3 profiling/host_pieces.py
"""

from __future__ import annotations

import time

import torch

import rtscan
from rtscan import _arrays, _driver, _kernels, _nvtx, _scan, _torch_path, _workspace

CALLS = 20_000


def report(name: str, piece) -> None:
    """Host microseconds per call of `piece`."""
    for _ in range(200):
        piece()
    started = time.perf_counter()
    for _ in range(CALLS):
        piece()
    elapsed = time.perf_counter() - started
    torch.cuda.synchronize()
    print(f"{name:<40} {elapsed / CALLS * 1e6:6.2f} us")


def main() -> None:
    a, b = torch.rand(16, device="cuda"), torch.randn(16, device="cuda")
    out = torch.empty_like(a)
    rtscan.scan(a, b, out=out)  # compiles, loads, sizes the workspace
    torch.cuda.synchronize()
    va, vb, vout = _arrays.view("a", a), _arrays.view("b", b), _arrays.view("out", out)
    arch = _kernels.device_arch(0)
    placement = _scan.pointer_placement(va.pointer, vb.pointer, vout.pointer)
    prepared = _scan.prepare(None, va, vout, 0, False, placement, arch)
    stream = _arrays.default_stream(va)
    block = _scan.argument_block()
    report("empty loop", lambda: None)
    report("view(a) torch", lambda: _arrays.view("a", a))
    report("nvtx push+pop", lambda: (_nvtx.push("rtscan.scan"), _nvtx.pop()))
    report("make_current", lambda: _driver.make_current(0))
    report("default_stream", lambda: _arrays.default_stream(va))
    report("_addresses (lru)", lambda: _scan._addresses(va.shape, va.strides, vout.strides, va.dtype))
    report("check_out", lambda: _scan.check_out(out, va))
    report("prepare (cached)", lambda: _scan.prepare(None, va, vout, 0, False, placement, arch))
    report("pointer_placement", lambda: _scan.pointer_placement(va.pointer, vb.pointer, vout.pointer))
    report("device_arch", lambda: _kernels.device_arch(0))
    report("_kernels.function", lambda: _kernels.function(0, prepared.variant, prepared.shape))
    report("_workspace.acquire", lambda: _workspace.acquire(0, stream, prepared.descriptors))
    report("block.fill", lambda: block.fill(va.pointer, vb.pointer, 0, vout.pointer, prepared, 0, stream))
    launch, launch_kernel = _driver.launch, _torch_path._launch_kernel  # the torch path calls cuLaunchKernel itself
    _driver.launch = lambda *arguments: None
    _torch_path._launch_kernel = lambda *arguments: (0,)  # CUDA_SUCCESS
    try:
        report("scan(out=) without the launch", lambda: rtscan.scan(a, b, out=out))
        report("scan(a, b) without the launch", lambda: rtscan.scan(a, b))
        report("_scan._launch without the launch", lambda: _scan._launch(None, va, vb, None, vout, 0, False, stream))
        report("general path, out=, without the launch",
               lambda: _scan.scan(a, b, None, -1, False, out, "auto", None))
        report("_torch_path.scan, out=, without the launch", lambda: _torch_path.scan(a, b, out, -1, False, None))
        report("_torch_path.scan(a, b) without the launch", lambda: _torch_path.scan(a, b, None, -1, False, None))
    finally:
        _driver.launch, _torch_path._launch_kernel = launch, launch_kernel
    report("scan(out=) whole", lambda: rtscan.scan(a, b, out=out))
    report("torch.empty_like(a)", lambda: torch.empty_like(a))


if __name__ == "__main__":
    main()
