"""Look-back workspaces and multi-pass scratch, one of each per (device, stream): calls on one
stream run one after another on the GPU and can share them; calls on two streams never do. A CUDA
graph keeps the workspace (and scratch) of the stream it was captured on: replay it stream-ordered
with other rtscan calls on that stream (on that stream, or after synchronising), never
concurrently with them. The layout is described in kernels_cu/tile_state.cuh. A new workspace is
zeroed once; after that the kernel resets its own ticket and advances a generation, so no
per-call memset is needed.

The scratch of the multi-pass variants (kernels_cu/three_pass_index.cuh: each step's pair, each
tile's aggregate and carry) is plain memory that every call writes before it reads it: never
zeroed. Both kinds grow the same way: geometrically, never during CUDA graph capture, and the
memory they outgrow is kept, not freed.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from dataclasses import dataclass

from . import _driver
from .errors import RtscanError

HEADER_BYTES = 16           # ticket word, finished counter, padding: descriptors stay 16-byte aligned
FIRST_GENERATION = 1        # kernels_cu/tile_state.cuh: zeroed descriptors must never match
DESCRIPTOR_BYTES = 5 * 8    # per tile: its aggregate (2 words); per segment slot: end state, aggregate (3)
MIN_CAPACITY = 1024
MIN_SCRATCH_BYTES = 1 << 20
_PER_THREAD_STREAM = 2      # CU_STREAM_PER_THREAD: a different stream in every thread


class TileWorkspace(ctypes.Structure):
    _fields_ = [("ticket", ctypes.c_void_p), ("capacity", ctypes.c_longlong)]


class ThreePassScratch(ctypes.Structure):
    """kernels_cu/three_pass_index.cuh's ThreePassScratch, field for field."""
    _fields_ = [("pair_a", ctypes.c_void_p), ("pair_b", ctypes.c_void_p), ("aggregate_a", ctypes.c_void_p),
                ("aggregate_b", ctypes.c_void_p), ("carry", ctypes.c_void_p)]


@dataclass
class Workspace:
    pointer: int
    capacity: int  # tiles for a look-back workspace, bytes for scratch

    @functools.cached_property
    def kernel_argument(self) -> TileWorkspace:
        """A look-back workspace as the kernels take it, built once and handed to every launch
        (shared: never modified)."""
        return TileWorkspace(self.pointer, self.capacity)


_lock = threading.Lock()
_workspaces: dict[tuple, Workspace] = {}
_scratch: dict[tuple, Workspace] = {}
_retired: list[Workspace] = []
# How many workspaces and scratches were replaced by larger ones: a thread's argument block keeps
# its last workspace until this moves (rtscan/_scan.py, _ArgumentBlock.fill).
replacements = 0


def _key(device: int, stream: int) -> tuple:
    return (device, stream, threading.get_ident() if stream == _PER_THREAD_STREAM else None)


def _at_least(table: dict, key: tuple, needed: int, grow) -> Workspace:
    """table[key] when it holds `needed`; otherwise grow(old) replaces it, under the lock, checked
    again there so that two threads needing more grow it once."""
    found = table.get(key)
    if found is None or found.capacity < needed:
        with _lock:
            found = table.get(key)
            if found is None or found.capacity < needed:
                found = grow(found)
    return found


def acquire(device: int, stream: int, tiles: int) -> TileWorkspace:
    """A workspace for `tiles` tiles on this stream; grows (geometrically) when too small."""
    key = _key(device, stream)
    workspace = _workspaces.get(key)
    if workspace is None or workspace.capacity < tiles:  # tested here too: a hit builds no closure
        workspace = _at_least(_workspaces, key, tiles, lambda old: _grow(key, old, stream, tiles))
    return workspace.kernel_argument


def _grow(key: tuple, old: Workspace | None, stream: int, tiles: int) -> Workspace:
    def allocate(capacity: int) -> int:
        nbytes = HEADER_BYTES + DESCRIPTOR_BYTES * capacity
        pointer = _driver.alloc(nbytes)
        _driver.memset_async(pointer, 0, nbytes, stream)
        # The generation is the high half of the little-endian 64-bit ticket word, bytes 4..8.
        _driver.memset32_async(pointer + 4, FIRST_GENERATION, 1, stream)
        return pointer

    return _replace(_workspaces, key, old, stream, tiles, MIN_CAPACITY, allocate,
                    f"the look-back workspace for this stream must grow to {tiles} tiles",
                    "run rtscan.warmup() or one scan of the largest size on this stream before capturing")


def scratch(device: int, stream: int, nbytes: int) -> int:
    """The address of at least `nbytes` of scratch for a multi-pass variant on this stream (16-byte
    aligned, contents undefined); grows to exactly what is asked when too small: it is gigabytes
    at large sizes (2 x 4 B per step for three_pass' pairs), so doubling could fail a call that fits."""
    key = _key(device, stream)
    return _at_least(_scratch, key, nbytes, lambda old: _replace(
        _scratch, key, old, stream, nbytes, MIN_SCRATCH_BYTES, _driver.alloc,
        f"the multi-pass scratch for this stream must grow to {nbytes} bytes",
        "run one scan of the largest size with this variant on this stream before capturing",
        geometric=False)).pointer


def three_pass_scratch(device: int, stream: int, tile: int, tiles: int, keeps_pairs: bool) -> ThreePassScratch:
    """This stream's scratch carved for a three-pass call over `tiles` tiles of `tile` steps
    (float32): with keeps_pairs, the pairs' two arrays of tile * tiles words first, then the
    aggregates' two arrays and the carries, one word per tile; every array starts 16-byte aligned
    (the pairs are read and written 16 bytes at a time)."""
    def aligned(words: int) -> int:
        return -(-4 * words // 16) * 16

    pair_bytes = aligned(tile * tiles) if keeps_pairs else 0
    tile_bytes = aligned(tiles)
    pointer = scratch(device, stream, 2 * pair_bytes + 3 * tile_bytes)
    pairs = (pointer, pointer + pair_bytes) if keeps_pairs else (0, 0)
    first = pointer + 2 * pair_bytes
    return ThreePassScratch(*pairs, first, first + tile_bytes, first + 2 * tile_bytes)


def _replace(table: dict, key: tuple, old: Workspace | None, stream: int, needed: int, minimum: int, allocate,
             what: str, remedy: str, geometric: bool = True) -> Workspace:
    """A new allocation of at least `needed` (and, if geometric, at least twice `old`) from
    allocate(capacity), put in `table` in place of `old`; called with _lock held."""
    global replacements
    _driver.make_current(key[0])  # the torch path calls acquire() without making it current
    if _driver.stream_is_capturing(stream):
        raise RtscanError(f"{what}, which cannot happen during CUDA graph capture; {remedy}")
    capacity = max(needed, minimum, 2 * old.capacity if old and geometric else 0)
    workspace = Workspace(allocate(capacity), capacity)
    if old is not None:
        # Never freed: a launch queued by another thread, or a captured CUDA graph, may still hold
        # the old address. The workspace grows geometrically, so its retired ones add up to less
        # than the newest; scratch grows only to what a call needs, at the cost of more steps.
        _retired.append(old)
    table[key] = workspace
    if old is not None:  # counted once the table holds the new one: whoever sees the count finds it there
        replacements += 1
    return workspace


def reserve(device: int, stream: int, tiles: int) -> None:
    """Grow this stream's workspace ahead of time, e.g. before CUDA graph capture."""
    acquire(device, stream, tiles)
