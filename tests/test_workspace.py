"""rtscan/_workspace.py: one look-back workspace per (device, stream), grown geometrically, never
during graph capture; its layout agrees with kernels_cu/tile_state.cuh. On the GPU: the generation
counter that replaces a per-launch memset, including its wrap (set through the driver to the
wrapping value, then two launches checked, with the header and descriptors read back)."""

from __future__ import annotations

import ctypes
import re
import threading

import numpy as np
import pytest

import rtscan
from rtscan import RtscanError, _compile, _driver, _workspace


# ---- CPU: the bookkeeping, with the driver replaced by a recorder --------------------------------

class FakeDriver:
    """Records every driver call _workspace makes; allocations get distinct fake addresses."""

    def __init__(self):
        self.calls, self.next_pointer, self.capturing = [], 0x10000, False

    def alloc(self, nbytes):
        self.next_pointer += 0x100000
        self.calls.append(("alloc", self.next_pointer, nbytes))
        return self.next_pointer

    def stream_is_capturing(self, stream):
        return self.capturing

    def __getattr__(self, name):  # memset_async, synchronize, free and whatever else is driver work
        return lambda *args: self.calls.append((name,) + args)


@pytest.fixture
def fake(monkeypatch):
    driver = FakeDriver()
    for name in [n for n in dir(_driver) if not n.startswith("_") and callable(getattr(_driver, n))]:
        if name not in ("call", "Event", "gpu_status", "NoDeviceError", "DriverError", "Any"):
            monkeypatch.setattr(_driver, name, getattr(driver, name))
    monkeypatch.setattr(_workspace, "_workspaces", {})
    monkeypatch.setattr(_workspace, "_scratch", {})
    monkeypatch.setattr(_workspace, "_retired", [])
    return driver


def nbytes(capacity):
    return _workspace.HEADER_BYTES + _workspace.DESCRIPTOR_BYTES * capacity


def test_first_workspace_is_zeroed_and_at_least_min_capacity(fake):
    workspace = _workspace.acquire(0, 7, 10)
    assert workspace.capacity == _workspace.MIN_CAPACITY
    size = nbytes(_workspace.MIN_CAPACITY)
    pointer = fake.calls[1][1]
    # in the device's primary context, whichever the caller left current (the torch path's)
    assert fake.calls[:2] == [("make_current", 0), ("alloc", pointer, size)]
    assert ctypes.cast(ctypes.pointer(workspace), ctypes.POINTER(ctypes.c_void_p))[0] == pointer
    # all of it zeroed, on the stream it is for, before anything else writes it
    assert fake.calls[2] == ("memset_async", pointer, 0, size, 7)
    assert all(call[-1] == 7 for call in fake.calls[2:]), "work on another stream than the workspace's"


def test_reuse_without_driver_calls(fake):
    first = _workspace.acquire(0, 7, 100)
    fake.calls.clear()
    again = _workspace.acquire(0, 7, _workspace.MIN_CAPACITY)
    assert bytes(again) == bytes(first) and fake.calls == []


def test_growth_is_geometric_and_keeps_the_old_one(fake):
    first = _workspace.acquire(0, 7, 100)
    fake.calls.clear()
    grown = _workspace.acquire(0, 7, _workspace.MIN_CAPACITY + 1)
    assert grown.capacity == 2 * _workspace.MIN_CAPACITY and bytes(grown) != bytes(first)
    kinds = [call[0] for call in fake.calls]
    assert kinds[:2] == ["make_current", "alloc"] and fake.calls[1][2] == nbytes(2 * _workspace.MIN_CAPACITY)
    # A queued launch of another thread, or a captured graph, may still use the old address.
    assert "free" not in kinds and "synchronize" not in kinds
    assert any(old.pointer == first.ticket for old in _workspace._retired)
    assert _workspace.acquire(0, 7, 10**6).capacity == 10**6  # a big jump takes what it needs


def test_streams_and_devices_get_their_own(fake):
    pointers = {bytes(_workspace.acquire(device, stream, 10)) for device in (0, 1) for stream in (0, 7, 9)}
    assert len(pointers) == 6
    assert {call[1] for call in fake.calls if call[0] == "make_current"} == {0, 1}


def test_per_thread_default_stream_is_per_thread(fake):
    results, both_done = [], threading.Barrier(2)

    def work():
        results.append(bytes(_workspace.acquire(0, 2, 10)))
        both_done.wait()  # both threads alive at once, so their ids differ

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(results)) == 2
    assert _workspace._key(0, 7) == _workspace._key(0, 7)


def test_no_growth_during_capture(fake):
    _workspace.acquire(0, 7, 10)
    fake.capturing = True
    assert _workspace.acquire(0, 7, 1000).capacity == _workspace.MIN_CAPACITY  # fits: fine while capturing
    with pytest.raises(RtscanError, match="warmup"):
        _workspace.acquire(0, 7, 10**5)
    with pytest.raises(RtscanError, match="capture"):
        _workspace.acquire(0, 8, 10)  # a first workspace cannot be made during capture either


def test_scratch_grows_to_what_is_asked_is_never_zeroed_and_keeps_the_old_one(fake):
    first = _workspace.scratch(0, 7, 100)
    # written before read: no memset
    assert fake.calls == [("make_current", 0), ("alloc", first, _workspace.MIN_SCRATCH_BYTES)]
    fake.calls.clear()
    assert _workspace.scratch(0, 7, _workspace.MIN_SCRATCH_BYTES) == first and fake.calls == []
    grown = _workspace.scratch(0, 7, _workspace.MIN_SCRATCH_BYTES + 1)
    # Exactly what is asked, not double: scratch is gigabytes at large sizes.
    assert fake.calls == [("make_current", 0), ("alloc", grown, _workspace.MIN_SCRATCH_BYTES + 1)]
    assert any(old.pointer == first for old in _workspace._retired)
    assert _workspace.scratch(0, 8, 10) != grown  # another stream, another scratch


def test_scratch_and_lookback_workspace_are_apart(fake):
    workspace = _workspace.acquire(0, 7, 10)
    assert _workspace.scratch(0, 7, 10) != workspace.ticket


def test_no_scratch_growth_during_capture(fake):
    _workspace.scratch(0, 7, 10)
    fake.capturing = True
    assert _workspace.scratch(0, 7, 1000)  # fits: fine while capturing
    with pytest.raises(RtscanError, match="multi-pass scratch .* capture.*largest size"):
        _workspace.scratch(0, 7, 10**8)
    with pytest.raises(RtscanError, match="capture"):
        _workspace.scratch(0, 8, 10)


@pytest.mark.parametrize("keeps_pairs", [True, False])
@pytest.mark.parametrize("tile,tiles", [(4096, 1), (4096, 3), (96, 7), (64, 65536)])
def test_three_pass_scratch_is_carved_into_aligned_disjoint_arrays(fake, keeps_pairs, tile, tiles):
    """The pairs (two arrays of tile * tiles words, three_pass only), then aggregates a and b and
    the carries (one word per tile each), in kernels_cu/three_pass_index.cuh's field order."""
    carved = _workspace.three_pass_scratch(0, 7, tile, tiles, keeps_pairs)
    (alloc,) = [call for call in fake.calls if call[0] == "alloc"]
    base, nbytes = alloc[1], alloc[2]
    sizes = {"pair_a": 4 * tile * tiles, "pair_b": 4 * tile * tiles, "aggregate_a": 4 * tiles,
             "aggregate_b": 4 * tiles, "carry": 4 * tiles}
    names = [name for name, _ in _workspace.ThreePassScratch._fields_]
    assert names == list(sizes)
    used = [(getattr(carved, name), sizes[name]) for name in names if keeps_pairs or not name.startswith("pair")]
    if not keeps_pairs:
        assert carved.pair_a is None and carved.pair_b is None  # null pointers
    for (start, size), (following, _) in zip(used, used[1:]):
        assert start + size <= following
    assert all(start % 16 == 0 and start >= base for start, _ in used)
    assert used[-1][0] + used[-1][1] <= base + nbytes


def test_reserve_grows_ahead(fake):
    _workspace.reserve(0, 5, 5000)
    assert _workspace.acquire(0, 5, 5000).capacity == 5000 and len([c for c in fake.calls if c[0] == "alloc"]) == 1


def test_layout_agrees_with_tile_state_header():
    text = (_compile.kernels_dir() / "tile_state.cuh").read_text()
    assert _workspace.HEADER_BYTES % 16 == 0  # the descriptor arrays after it stay 16-byte aligned
    words_per_tile = int(re.search(r"descriptor_word_count\(\) const \{ return (\d+) \* capacity; \}", text).group(1))
    assert _workspace.DESCRIPTOR_BYTES == 8 * words_per_tile  # 64-bit descriptor words, as the kernel indexes them
    body = re.search(r"struct TileWorkspace \{(.*?)\n\};", text, re.S).group(1)
    fields = re.findall(r"^\s*(?:[\w:]+\*|long long) (\w+);", body, re.M)
    assert fields == [name for name, _ in _workspace.TileWorkspace._fields_]
    assert re.search(r"^\s*[\w:]+\* \w+;", body, re.M) and re.search(r"long long capacity;", body)
    assert ctypes.sizeof(_workspace.TileWorkspace) == 16


# ---- GPU: the generation counter --------------------------------------------------------------

def generation_protocol():
    """Where the generation lives in the 16-byte workspace header and how it wraps, as
    kernels_cu/tile_state.cuh defines it: (32-bit word index, wrapping value, value after the wrap)."""
    text = (_compile.kernels_dir() / "tile_state.cuh").read_text()
    if "WRAPPING_GENERATION" in text:  # high half of the 64-bit ticket word; 0xffffffff -> 1
        wrapping = int(re.search(r"WRAPPING_GENERATION = (0x[0-9a-fA-F]+)u?;", text).group(1), 16)
        first = int(re.search(r"FIRST_GENERATION = (\d+);", text).group(1))
        return 1, wrapping, first
    if re.search(r"GENERATION_MASK = \(1u << 30\) - 1;", text):  # counters[2]; 2^30 - 1 -> 0
        return 2, 2**30 - 1, 0
    pytest.fail("tile_state.cuh describes a generation protocol this test does not know; update the test")


def read_words(pointer, count, stream):
    words = np.zeros(count, np.uint32)
    _driver.copy_to_host(words.ctypes.data, pointer, words.nbytes, stream)
    _driver.synchronize(stream)
    return words


def write_header(pointer, generation_index, generation, stream):
    words = np.zeros(4, np.uint32)
    words[generation_index] = generation
    _driver.copy_to_device(pointer, words.ctypes.data, words.nbytes, stream)
    _driver.synchronize(stream)


@pytest.mark.gpu
def test_generation_advances_and_wraps(rng):
    import torch

    import _checks
    from _gpu import TILE, cuda, host, poisoned_like, regime

    index, wrapping, after_wrap = generation_protocol()
    length = 9 * TILE + 5  # ten tiles: the look-back runs in every launch
    stream = torch.cuda.Stream()
    handle = stream.cuda_stream

    def scan_checked(what):
        a_np, b_np = regime(rng, "mixed", (length,))
        a, b = cuda(a_np), cuda(b_np)
        out = poisoned_like(a)
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            rtscan.scan(a, b, out=out)
        stream.synchronize()
        _checks.assert_close(host(out), _checks.expected(a_np, b_np), _checks.running_scale(a_np, b_np), what)

    def header():
        return read_words(workspace.pointer, 4, handle)

    def expect_header(generation, what):
        words = header()
        assert words[index] == generation, f"{what}: generation {words[index]}, expected {generation}"
        others = np.delete(words, index)
        assert not others.any(), f"{what}: ticket/finished counters not reset: {words.tolist()}"

    scan_checked("first launch on this stream")
    workspace = _workspace._workspaces[_workspace._key(0, handle)]
    descriptor_words = 2 * 3 * workspace.capacity
    before = int(header()[index])
    expect_header(before, "after a launch")
    scan_checked("second launch")
    expect_header(before + 1, "a launch advances the generation by one")

    # Leave descriptors of the after-wrap generation from a launch with other inputs, then wrap:
    # without the clear at the wrap, the launch after it could take those stale words as its own.
    write_header(workspace.pointer, index, after_wrap, handle)
    scan_checked(f"launch at generation {after_wrap}")
    assert read_words(workspace.pointer + 16, descriptor_words, handle)[::2].any(), "no tagged descriptors left"
    write_header(workspace.pointer, index, wrapping, handle)
    scan_checked(f"launch at the wrapping generation {wrapping:#x}")
    expect_header(after_wrap, "after the wrapping launch")
    assert not read_words(workspace.pointer + 16, descriptor_words, handle).any(), "descriptors not cleared"
    scan_checked(f"launch at generation {after_wrap} after the wrap")
    expect_header(after_wrap + 1, "after the launch after the wrap")
    scan_checked("one more launch")
    expect_header(after_wrap + 2, "after one more launch")
