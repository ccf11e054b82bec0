"""Experiment (P189, refuted): a launch of 1-2 waves of tiles as several launches of at most one wave
each, rows split for batches, a single sequence chained through h0 = the previous part's last state.
Timed as the bench times (graph of back-to-back calls), beside the copy of the same bytes. Run on the
GPU as .scratch/split.py (results/h200/p189-split-2026-12-01-27.txt); kept here with its unused
import removed. Usage: PYTHONPATH=. python3 -P profiling/attempts/split_launches.py 128x65536:2 1x8388608:2
"""
import sys

import numpy as np
import torch
import rtscan
import rtscan.reference
from rtscan import _bench, _driver


def run(num_seqs, length, parts):
    torch.manual_seed(0)
    n = num_seqs * length
    shape = (num_seqs, length) if num_seqs > 1 else (length,)
    a = (torch.rand(shape, device="cuda") * 0.5 + 0.5)
    b = torch.randn(shape, device="cuda")
    out = torch.full(shape, float("nan"), device="cuda")
    src = torch.empty(3 * n // 2, device="cuda"); dst = torch.empty(3 * n // 2, device="cuda")
    torch.cuda.synchronize()
    stream = _driver.create_stream()
    def whole():
        rtscan.scan(a, b, out=out, stream=stream)
    def split():
        if num_seqs > 1:
            step = -(-num_seqs // parts)
            for r in range(0, num_seqs, step):
                rtscan.scan(a[r:r + step], b[r:r + step], out=out[r:r + step], stream=stream)
        else:
            step = -(-length // parts)
            for s in range(0, length, step):
                h0 = None if s == 0 else out[s - 1]
                rtscan.scan(a[s:s + step], b[s:s + step], h0=h0, out=out[s:s + step], stream=stream)
    def copy():
        _driver.copy_device_to_device(dst.data_ptr(), src.data_ptr(), 6 * n, stream)
    launches = max(1, min(200, (1 << 26) // n))
    results = {}
    ref = None
    for name, fn in (("whole", whole), ("split", split)):
        out.fill_(float("nan")); torch.cuda.synchronize()
        fn(); _driver.synchronize(stream)
        got = out.double().cpu().numpy()
        if ref is None:
            ref = rtscan.reference.scan(a.cpu().numpy(), b.cpu().numpy()) if num_seqs > 1 and n <= (1 << 24) else got
        err = float(np.max(np.abs(got - ref) / (np.abs(ref) + 1e-3)))
        results[name] = (_bench._time_graph(fn, stream, launches), err)
    c = _bench._time_copy(copy, stream, launches)
    w, s = results["whole"][0], results["split"][0]
    label = f"{num_seqs}x{length}"
    print(f"{label:>12} parts {parts}: copy {c:7.1f} us | whole {w:7.1f} us {c / w:.3f} | split {s:7.1f} us {c / s:.3f}"
          f" | split/whole {w / s:.3f}  err whole {results['whole'][1]:.1e} split {results['split'][1]:.1e}", flush=True)
    _driver.destroy_stream(stream)


if __name__ == "__main__":
    for item in sys.argv[1:]:
        shape, parts = item.split(":")
        s, l = shape.split("x")
        run(int(s), int(l), int(parts))
