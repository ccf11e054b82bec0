"""Bitwise determinism over many runs, two streams at once, two host threads at once, and CUDA
graph capture and replay (the look-back workspace is reused with a generation the kernel advances)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import rtscan
import _checks
from _gpu import TILE, cuda, host, poisoned_like, regime, scan_and_check, torch

pytestmark = pytest.mark.gpu

RUNS = 50


@pytest.mark.parametrize("shape,layout", [((2**22,), "contiguous"), ((2**22,), "misaligned"),
                                          ((2**22,), "reverse"), ((64, 65536), "contiguous"),
                                          ((64, 65536), "time_strided")])
def test_bitwise_determinism(rng, shape, layout):
    a_np, b_np = regime(rng, "decay", shape)
    a, b = cuda(a_np), cuda(b_np)
    dim, reverse = -1, layout == "reverse"
    if layout == "misaligned":
        a, b = cuda(np.concatenate([[1.0], a_np]).astype(np.float32))[1:], \
            cuda(np.concatenate([[1.0], b_np]).astype(np.float32))[1:]
    elif layout == "time_strided":
        a, b, dim = a.T, b.T, 0
        a_np, b_np = a_np.T, b_np.T
    first = scan_and_check(a, b, dim=dim, reverse=reverse)  # right, and then the same every time
    out = torch.empty_like(first)
    for run in range(RUNS):
        out.fill_(float("nan"))
        rtscan.scan(a, b, dim=dim, reverse=reverse, out=out)
        assert torch.equal(out, first), f"run {run + 1} differs from the first in " \
                                        f"{int((out != first).sum())} elements"


def inputs(rng, count, length):
    pairs = [tuple(cuda(x) for x in regime(rng, "mixed", (length,))) for _ in range(count)]
    torch.cuda.synchronize()
    return pairs


def expected_results(pairs):
    results = [rtscan.scan(a, b) for a, b in pairs]
    torch.cuda.synchronize()
    a, b = pairs[0]
    _checks.assert_close(host(results[0]), _checks.expected(host(a), host(b)),
                         _checks.running_scale(host(a), host(b)))
    return results


@pytest.mark.parametrize("length", [TILE + 1, 40 * TILE + 3, 2**20 + 1])
def test_two_streams_at_once(rng, length):
    pairs = inputs(rng, 2, length)
    expected = expected_results(pairs)
    rounds = 30
    outs = [[poisoned_like(expected[k]) for _ in range(rounds)] for k in range(2)]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    torch.cuda.synchronize()
    for round_ in range(rounds):  # interleaved, never synchronised in between
        for k, stream in enumerate(streams):
            with torch.cuda.stream(stream):
                rtscan.scan(*pairs[k], out=outs[k][round_])
    torch.cuda.synchronize()
    for k in range(2):
        for round_, out in enumerate(outs[k]):
            assert torch.equal(out, expected[k]), f"stream {k}, round {round_}"


def test_two_streams_through_the_stream_argument(rng):
    pairs = inputs(rng, 2, 16 * TILE + 5)
    expected = expected_results(pairs)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    outs = [[poisoned_like(expected[k]) for _ in range(20)] for k in range(2)]
    torch.cuda.synchronize()
    for round_ in range(20):
        for k, stream in enumerate(streams):
            rtscan.scan(*pairs[k], out=outs[k][round_], stream=stream.cuda_stream)
    torch.cuda.synchronize()
    assert all(torch.equal(out, expected[k]) for k in range(2) for out in outs[k])


def test_two_threads_at_once(rng):
    pairs = inputs(rng, 2, 24 * TILE + 11)
    expected = expected_results(pairs)
    rounds = 40
    outs = [[poisoned_like(expected[k]) for _ in range(rounds)] for k in range(2)]
    torch.cuda.synchronize()
    start = threading.Barrier(2)
    errors = []

    def work(k):
        try:
            stream = torch.cuda.Stream()
            start.wait()
            with torch.cuda.stream(stream):
                for round_ in range(rounds):
                    rtscan.scan(*pairs[k], out=outs[k][round_])
            stream.synchronize()
        except BaseException as exc:  # noqa: BLE001 - reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for k in range(2):
        for round_, out in enumerate(outs[k]):
            assert torch.equal(out, expected[k]), f"thread {k}, round {round_}"


def test_cuda_graph_capture_and_replay(rng):
    length = 9 * TILE + 5
    a = torch.empty(length, device="cuda")
    b = torch.empty(length, device="cuda")
    out = torch.empty(length, device="cuda")
    stream = torch.cuda.Stream()
    rtscan.warmup(0, stream=stream, max_tiles=16)
    with torch.cuda.stream(stream):
        a.fill_(0.5)
        b.fill_(1.0)
        rtscan.scan(a, b, out=out)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        rtscan.scan(a, b, out=out)
    for replay in range(5):
        a_np, b_np = regime(rng, "mixed", (length,))
        a.copy_(torch.from_numpy(a_np))
        b.copy_(torch.from_numpy(b_np))
        out.fill_(float("nan"))
        torch.cuda.synchronize()
        graph.replay()
        torch.cuda.synchronize()
        _checks.assert_close(host(out), _checks.expected(a_np, b_np), _checks.running_scale(a_np, b_np),
                             f"replay {replay}")


@pytest.mark.filterwarnings("ignore:The CUDA Graph is empty")  # nothing was captured: the point
def test_growing_the_workspace_during_capture_is_refused():
    stream = torch.cuda.Stream()
    length = 2**23 + 1  # more tiles than any other test reserves on a side stream
    a = torch.ones(length, device="cuda")
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(rtscan.RtscanError, match="capture"):
        with torch.cuda.graph(graph, stream=stream):
            rtscan.scan(a, a)
