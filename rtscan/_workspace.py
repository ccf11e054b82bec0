"""Look-back workspaces, one per (device, stream): calls on one stream run one after another on
the GPU and can share one; calls on two streams never do. A CUDA graph keeps the workspace of
the stream it was captured on: replay it stream-ordered with other rtscan calls on that stream
(on that stream, or after synchronising), never concurrently with them. The layout is described in
kernels_cu/tile_state.cuh. A new workspace is zeroed once; after that the kernel resets its own
ticket and advances a generation, so no per-call memset is needed.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass

from . import _driver
from .errors import RtscanError

HEADER_BYTES = 16           # ticket word, finished counter, padding: descriptors stay 16-byte aligned
FIRST_GENERATION = 1        # kernels_cu/tile_state.cuh: zeroed descriptors must never match
DESCRIPTOR_BYTES = 5 * 8    # per tile: its aggregate (2 words); per segment slot: end state, aggregate (3)
MIN_CAPACITY = 1024
_PER_THREAD_STREAM = 2      # CU_STREAM_PER_THREAD: a different stream in every thread


class TileWorkspace(ctypes.Structure):
    _fields_ = [("ticket", ctypes.c_void_p), ("capacity", ctypes.c_longlong)]


@dataclass
class Workspace:
    pointer: int
    capacity: int


_lock = threading.Lock()
_workspaces: dict[tuple, Workspace] = {}
_retired: list[Workspace] = []


def _key(device: int, stream: int) -> tuple:
    return (device, stream, threading.get_ident() if stream == _PER_THREAD_STREAM else None)


def acquire(device: int, stream: int, tiles: int) -> TileWorkspace:
    """A workspace for `tiles` tiles on this stream; grows (geometrically) when too small."""
    key = _key(device, stream)
    workspace = _workspaces.get(key)
    if workspace is None or workspace.capacity < tiles:
        with _lock:
            workspace = _workspaces.get(key)
            if workspace is None or workspace.capacity < tiles:
                workspace = _grow(key, workspace, stream, tiles)
    return TileWorkspace(workspace.pointer, workspace.capacity)


def _grow(key: tuple, old: Workspace | None, stream: int, tiles: int) -> Workspace:
    if _driver.stream_is_capturing(stream):
        raise RtscanError(
            f"the look-back workspace for this stream must grow to {tiles} tiles, which cannot happen during "
            f"CUDA graph capture; run rtscan.warmup() or one scan of the largest size on this stream before "
            f"capturing")
    capacity = max(tiles, MIN_CAPACITY, 2 * old.capacity if old else 0)
    nbytes = HEADER_BYTES + DESCRIPTOR_BYTES * capacity
    pointer = _driver.alloc(nbytes)
    _driver.memset_async(pointer, 0, nbytes, stream)
    # The generation is the high half of the little-endian 64-bit ticket word, bytes 4..8.
    _driver.memset32_async(pointer + 4, FIRST_GENERATION, 1, stream)
    if old is not None:
        # Never freed: a launch queued by another thread, or a captured CUDA graph, may still hold
        # the old address. Growth is geometric, so the retired ones add up to less than the newest.
        _retired.append(old)
    workspace = Workspace(pointer, capacity)
    _workspaces[key] = workspace
    return workspace


def reserve(device: int, stream: int, tiles: int) -> None:
    """Grow this stream's workspace ahead of time, e.g. before CUDA graph capture."""
    acquire(device, stream, tiles)
