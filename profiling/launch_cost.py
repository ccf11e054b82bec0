"""What one cuLaunchKernel costs the host, and whether rtscan's parameters or shared memory add to
it: an empty kernel with no parameters, one with a single parameter as large as rtscan's argument
block (passed as kernelParams or as one buffer through `extra`), and rtscan's own kernel for a
16-step scan both ways. The cases take turns; each round times a burst of launches short of the
launch queue's depth (the host's cost, not the GPU's), and the medians are printed with the
GPU's time per launch beside them. profiling/NOTES.md, item 84.

Usage, on a GPU machine with torch: PYTHONPATH=. python3 profiling/launch_cost.py [--rounds R]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
from pathlib import Path

import torch

import rtscan
from rtscan import _compile, _driver, _kernels, _scan

sys.path.insert(0, str(Path(__file__).parent))  # host_overhead.py beside this script, also under python -P
from host_overhead import captured_launch, mean_us  # noqa: E402

BURST = 400


def rtscan_launch():
    """(function, grid, threads, shared bytes, stream) of a 16-step scan(a, b, out=out); its
    arguments are left in this thread's argument block."""
    a, b = torch.rand(16, device="cuda"), torch.randn(16, device="cuda")
    return captured_launch(lambda: rtscan.scan(a, b, out=torch.empty_like(a)))


def probe_kernels(parameter_bytes: int, shared_bytes: int):
    """(no_parameters, one_block_parameter, the same opted in to `shared_bytes`), loaded."""
    options = _compile.CompileOptions(arch=_kernels.device_arch(0),
                                      defines=(("RTSCAN_PARAMETER_BYTES", str(parameter_bytes)),))
    names = ("no_parameters<0>", "one_block_parameter<0>")
    # Absolute, so that kernels_dir() / it is itself; not cached: the cache hashes kernels_cu/ alone.
    module = _compile.nvrtc_compile(str(Path(__file__).with_name("launch_probe.cu")), names, options)
    functions = [_driver.get_function(_driver.load_module(module.cubin), module.lowered_names[name])
                 for name in (*names, names[1])]
    _driver.allow_shared_memory(functions[2], shared_bytes)
    return functions


def cases():
    function, grid, threads, shared_bytes, stream = rtscan_launch()
    arguments = _scan.argument_block().arguments
    params = _scan.argument_block().params_address
    size = ctypes.c_size_t(ctypes.sizeof(arguments))
    # CU_LAUNCH_PARAM_BUFFER_POINTER (1), the block, CU_LAUNCH_PARAM_BUFFER_SIZE (2), its size, END (0)
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(arguments), 2, ctypes.addressof(size), 0)
    none, block_parameter, with_shared = probe_kernels(ctypes.sizeof(arguments), shared_bytes)
    drv = _driver.driver()

    def by_buffer(kernel, shared):
        result = drv.cuLaunchKernel(kernel, grid, 1, 1, threads, 1, 1, shared, stream, 0, ctypes.addressof(extra))
        if result[0]:
            _driver.call("cuLaunchKernel", result)

    launch = _driver.launch
    return {
        "empty, no parameters": lambda: launch(none, 1, threads, 0, stream, 0),
        f"empty, {size.value} B parameter": lambda: launch(block_parameter, 1, threads, 0, stream, params),
        f"empty, {size.value} B parameter by buffer": lambda: by_buffer(block_parameter, 0),
        f"empty, that and {shared_bytes} B shared": lambda: launch(with_shared, 1, threads, shared_bytes, stream,
                                                                  params),
        "rtscan's kernel": lambda: launch(function, grid, threads, shared_bytes, stream, params),
        "rtscan's kernel, parameters by buffer": lambda: by_buffer(function, shared_bytes),
    }, (size, extra)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    launches, _buffer = cases()  # _buffer: what `extra` points into, alive while the launches run
    host = {name: [] for name in launches}
    gpu = {name: [] for name in launches}
    for _ in range(args.rounds):
        for name, launch in launches.items():
            host_us, gpu_us = mean_us(launch, BURST)  # after its own warm-up and a synchronisation
            host[name].append(host_us)
            gpu[name].append(gpu_us)
    print(f"{args.rounds} rounds of {BURST} launches a case, the cases in turn; {torch.cuda.get_device_name()}")
    for name in launches:
        print(f"{name:<44} host {statistics.median(host[name]):6.2f} us/launch (min {min(host[name]):5.2f})"
              f"   GPU {statistics.median(gpu[name]):6.2f} us/launch")


if __name__ == "__main__":
    main()
