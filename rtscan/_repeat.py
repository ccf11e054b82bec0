"""Calls that repeat an earlier call's layout on torch tensors skip its validation (issue 4: a
small call's host time).

A small scan is bound by the host (profiling/NOTES.md, items 14 and 36), and the Python part of
its time is mostly validation and preparation: a view of each argument, the dtype, shape, device,
stride and aliasing checks, the plan and the launch shape. All of that follows from facts a
repeated call shares with the first: each tensor's shape, strides, dtype and device, whether the
addresses are 16-byte aligned, the options and the stream. A call on plain torch tensors whose
facts equal those of an earlier call that launched would pass the same checks and prepare the
same launch, so _scan launches that call's preparation with this call's addresses. Rechecked on
every call, because they can change while the facts stay: grad mode and requires_grad (below),
aliasing between out and a or b (it depends on the addresses), the tuning entry, the current
context (_scan._launch_again).

Only plain torch.Tensor arguments without h0 are keyed: reading their facts is a few attribute
reads, and small repeated calls from PyTorch are the ones the host bounds. Everything else, and
every call whose facts are new, takes the full path.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from . import _arrays, _kernels, _workspace


class Repeat(NamedTuple):
    """What a launched call prepared, for the calls that repeat its facts."""

    prepared: Any               # _scan._Prepared: the tuning entry it came from, plan, shape, tiles
    function: Any               # the loaded kernel
    workspace: Any              # _workspace.TileWorkspace: the stream's workspace when it launched
    addresses: Any              # _scan._Addresses: the layout's byte extents, for the aliasing check
    table: dict                 # the variant's tuning table, where prepared's entry is looked up again
    device: int
    arch: str
    dtype: str


class Found(NamedTuple):
    """A call's facts (the key), what an earlier call with them prepared (None: no such call yet),
    and what the facts leave out: the stream handle and the addresses."""

    key: tuple
    repeat: Repeat | None
    stream: int
    a: int                      # addresses of a, b and out (0 when out is to be allocated)
    b: int
    out: int


# facts -> Repeat. A stream's workspace is only ever replaced by a larger one and the old one is
# never freed (_workspace._replace), and calls on one stream run one after another, so the
# workspace a Repeat holds stays valid for every call on its stream.
_repeats: dict[tuple, Repeat] = {}
_MAX_REPEATS = 1024


def find(a: Any, b: Any, out: Any, h0: Any, dim: Any, reverse: Any, chosen: Any, stream: Any) -> Found | None:
    """This call's facts, stream and addresses, with the Repeat of an earlier call of the same facts;
    None when it cannot be keyed (not plain torch tensors, h0 given, an unusual option): the full
    path takes it."""
    torch = sys.modules.get("torch")  # a torch tensor means torch is loaded; never imported here
    if torch is None or h0 is not None:
        return None
    tensor = torch.Tensor
    if a.__class__ is not tensor or b.__class__ is not tensor or dim.__class__ is not int or reverse.__class__ is not bool:
        return None
    if out is not None and out.__class__ is not tensor:
        return None
    if (a.requires_grad or b.requires_grad or (out is not None and out.requires_grad)) and torch.is_grad_enabled():
        return None  # the full path refuses it
    device = a.get_device()
    if stream is None:
        if device < 0:
            return None
        stream = _arrays.torch_stream(device)
    elif stream.__class__ is not int:
        return None
    if stream == _workspace.PER_THREAD_STREAM:  # a workspace per thread: not one per key
        return None
    pa, pb = a.data_ptr(), b.data_ptr()
    if out is None:
        pout, out_facts = 0, None
    else:
        pout = out.data_ptr()
        out_facts = (out.shape, out.stride(), out.dtype, out.get_device())
    key = (chosen.name, dim, reverse, stream, _kernels.defines(), a.shape, a.stride(), a.dtype, device,
           b.shape, b.stride(), b.dtype, b.get_device(), out_facts, not (pa | pb | pout) & 15)
    # tuple.__new__ skips the NamedTuple's Python-level __new__: this runs on every call.
    return tuple.__new__(Found, (key, _repeats.get(key), stream, pa, pb, pout))


def remember(key: tuple, repeat: Repeat) -> None:
    if len(_repeats) >= _MAX_REPEATS:  # many layouts: start again rather than grow without bound
        _repeats.clear()
    _repeats[key] = repeat
