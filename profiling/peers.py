"""The systems profiling/compare.py sets beside rtscan, each as a small adapter.

Every adapter takes the shared inputs a, b as float32 torch tensors of shape (S, L) (S sequences
of L steps, L contiguous) and knows how to build its own layout from them (outside the timing),
how to call the system, and how to turn its output back into (S, L). The recurrence is always
h[t] = a[t] * h[t-1] + b[t] from h = 0. Nothing here imports torch or a peer at module import,
so the CPU tests can load it; an optional peer that cannot be imported is reported, not dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Peer:
    name: str
    layout: str                              # what the system is handed, for the table's notes
    prepare: Callable[[Any, Any], Any]       # (a, b) -> state, in the peer's layout; not timed
    call: Callable[[Any], Any]               # state -> output; this is what is timed
    to_rows: Callable[[Any, Any], Any]       # (output, state) -> (S, L) tensor
    refuse: Callable[[int, int], str | None] = lambda sequences, steps: None  # reason it cannot run
    note: str = ""
    group: str = "peer"                      # "rtscan", "pytorch" (the baselines) or "peer"
    extra: dict = field(default_factory=dict)


def _identity_rows(output, state):
    return output


def rtscan_peers() -> list[Peer]:
    import rtscan

    peers = []
    for entry in [{"name": "auto", "auto": False}] + rtscan.variants():
        name = entry["name"]

        def prepare(a, b):
            return a, b, b.new_full(b.shape, float("nan"))  # poisoned: a step left unwritten reads as WRONG

        def call(state, variant=name):
            a, b, out = state
            return rtscan.scan(a, b, out=out, variant=variant)

        label = "rtscan auto" if name == "auto" else f"rtscan {name}"
        peers.append(Peer(label, "(S, L), L contiguous", prepare, call, _identity_rows, group="rtscan"))
    return peers


# ---- pure PyTorch baselines, written for this comparison -------------------------------------

def _padded(a, b):
    """Pad L to a power of two with the identity map (a=1, b=0), which changes no prefix."""
    import torch

    sequences, steps = a.shape
    width = 1 << max(0, math.ceil(math.log2(steps)))
    tree_a = torch.ones(sequences, width, device=a.device, dtype=a.dtype)
    tree_b = torch.zeros(sequences, width, device=a.device, dtype=a.dtype)
    tree_a[:, :steps], tree_b[:, :steps] = a, b
    return tree_a, tree_b


def blelloch(a, b):
    """Work-efficient scan (Blelloch 1990) over affine pairs with strided torch views: an up-sweep
    leaves each node the composition of its subtree, the down-sweep hands each node the map of
    everything before it (the exclusive prefix); h[t] = a[t] * (state before t) + b[t]."""
    sequences, steps = a.shape
    tree_a, tree_b = _padded(a, b)
    width = tree_a.shape[1]
    levels = width.bit_length() - 1
    for level in range(levels):
        span = 2 << level
        nodes_a, nodes_b = tree_a.view(sequences, -1, span), tree_b.view(sequences, -1, span)
        left_a, left_b = nodes_a[..., span // 2 - 1], nodes_b[..., span // 2 - 1]
        right_a, right_b = nodes_a[..., span - 1], nodes_b[..., span - 1]
        right_b.addcmul_(right_a, left_b)   # right after left: b = a_r * b_l + b_r (uses old a_r)
        right_a.mul_(left_a)
    tree_a[:, -1], tree_b[:, -1] = 1.0, 0.0    # the root's exclusive prefix is the identity
    for level in reversed(range(levels)):
        span = 2 << level
        nodes_a, nodes_b = tree_a.view(sequences, -1, span), tree_b.view(sequences, -1, span)
        left_a, left_b = nodes_a[..., span // 2 - 1], nodes_b[..., span // 2 - 1]
        right_a, right_b = nodes_a[..., span - 1], nodes_b[..., span - 1]
        subtree_a, subtree_b = left_a.clone(), left_b.clone()
        left_a.copy_(right_a)                  # the left child inherits the parent's prefix P
        left_b.copy_(right_b)
        right_b.mul_(subtree_a).add_(subtree_b)  # the right child gets (left subtree) after P
        right_a.mul_(subtree_a)
    return a * tree_b[:, :steps] + b


def hillis_steele(a, b):
    """Log-step doubling (Hillis & Steele 1986): after round k every step holds the map of the
    2^(k+1) steps ending at it. Each round's right side is computed in full before it is
    assigned, so the in-place assignment reads only old values."""
    a, b = a.clone(), b.clone()
    steps = a.shape[1]
    distance = 1
    while distance < steps:
        b[:, distance:] = b[:, distance:] + a[:, distance:] * b[:, :-distance]
        if distance * 2 < steps:  # the last round's a is never read again
            a[:, distance:] = a[:, distance:] * a[:, :-distance]
        distance *= 2
    return b


def pytorch_peers() -> list[Peer]:
    prepare = lambda a, b: (a, b)  # noqa: E731
    return [Peer("PyTorch Blelloch", "(S, L)", prepare, lambda s: blelloch(*s), _identity_rows, group="pytorch"),
            Peer("PyTorch Hillis-Steele", "(S, L)", prepare, lambda s: hillis_steele(*s), _identity_rows,
                 group="pytorch")]


# ---- optional peers: each factory raises ImportError (-> "not installed") -----------------------

def associative_scan_peer() -> Peer:
    import torch
    from torch._higher_order_ops.associative_scan import associative_scan  # private API in torch 2.x

    def combine(earlier, later):
        (a1, b1), (a2, b2) = earlier, later
        return a2 * a1, a2 * b1 + b2

    compiled = torch.compile(lambda a, b: associative_scan(combine, (a, b), dim=1, combine_mode="pointwise")[1],
                             dynamic=False)
    return Peer("torch.compile associative_scan", "(S, L), dim=1", lambda a, b: (a, b),
                lambda s: compiled(*s), _identity_rows, note=f"torch {torch.__version__}, combine_mode pointwise")


def _batch_channels(sequences: int) -> tuple[int, int]:
    """S sequences as (B, C): C = 1024 when it divides S (ANCHORS' (8, 1024, 4096)), else (1, S)."""
    return (sequences // 1024, 1024) if sequences % 1024 == 0 else (1, sequences)


def accelerated_scan_peers() -> list[Peer]:
    from accelerated_scan.scalar import scan as triton_scan  # the Triton backend

    def prepare(a, b):
        shape = (*_batch_channels(a.shape[0]), a.shape[1])
        return a.view(shape), b.view(shape)

    rows = lambda out, state: out.reshape(-1, out.shape[-1])  # noqa: E731
    peers = [Peer("accelerated-scan triton", "(B, C, T), gates=a, tokens=b", prepare,
                  lambda s: triton_scan(*s), rows)]
    try:
        from accelerated_scan.warp import scan as warp_scan  # builds a CUDA extension (nvcc, ninja)
    except Exception as error:  # noqa: BLE001 - reported in the table as the reason
        peers.append(Peer("accelerated-scan warp", "", prepare, None, rows,
                          refuse=lambda s, t, why=f"import failed: {error!r}"[:200]: why))
    else:
        def refuse(sequences, steps):
            if steps > 65536 or steps & (steps - 1) or steps < 32:
                return "its kernel needs T a power of two from 32 to 65536"
            return None

        peers.append(Peer("accelerated-scan warp", "(B, C, T), gates=a, tokens=b", prepare,
                          lambda s: warp_scan(*s), rows, refuse=refuse))
    return peers


def _hgrn_layout(a, b):
    """(S, L) -> (B, T, D) with D contiguous: sequence s = batch * D + channel; g = log(a)."""
    import torch

    batches, channels = _batch_channels(a.shape[0])
    to_btd = lambda x: x.view(batches, channels, -1).transpose(1, 2).contiguous()  # noqa: E731
    return to_btd(b), to_btd(torch.log(a)), channels


def hgrn_peers() -> list[Peer]:
    from fla.ops.hgrn import chunk_hgrn, fused_recurrent_hgrn

    def rows(out, state):
        return out.transpose(1, 2).reshape(-1, out.shape[1])

    note = "h = exp(g) h + x with g = log(a), a in [0.5, 1): one exp more than the others"
    return [Peer(f"fla {fn.__name__}", "(B, T, D), D contiguous, x=b, g=log(a)",
                 lambda a, b: _hgrn_layout(a, b), lambda s, fn=fn: fn(s[0], s[1])[0], rows, note=note)
            for fn in (chunk_hgrn, fused_recurrent_hgrn)]


AFFINE_AFTER_CPP = r"""
struct AffinePair { float a; float b; };
// CUB calls op(prefix, next): `earlier` is everything before, `later` the next step.
extern "C" __device__ void affine_after(void* earlier, void* later, void* result) {
    const AffinePair x = *static_cast<const AffinePair*>(earlier);
    const AffinePair y = *static_cast<const AffinePair*>(later);
    *static_cast<AffinePair*>(result) = AffinePair{y.a * x.a, fmaf(y.a, x.b, y.b)};
}
"""


class _PairArray:
    """n interleaved (a, b) float32 pairs in a torch buffer, as a structured-dtype
    __cuda_array_interface__ array: the form cuda.compute takes a struct-valued input in."""

    def __init__(self, buffer):
        count = buffer.numel() // 2
        self.buffer, self.shape = buffer, (count,)
        self.__cuda_array_interface__ = {"shape": (count,), "typestr": "|V8", "descr": [("a", "<f4"), ("b", "<f4")],
                                         "data": (buffer.data_ptr(), False), "strides": None, "version": 3}


class _Stream:
    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def cub_peer() -> Peer:
    import torch
    import cuda.compute
    from cuda.compute._cpp_compile import compile_cpp_to_ltoir  # what cuda.compute's own iterators use
    from cuda.compute.op import RawOp

    op = RawOp(ltoir=compile_cpp_to_ltoir(AFFINE_AFTER_CPP), name="affine_after")

    def prepare(a, b):
        pairs = torch.stack((a.reshape(-1), b.reshape(-1)), dim=1).contiguous()
        d_in, d_out = _PairArray(pairs), _PairArray(torch.empty_like(pairs))
        stream = _Stream(torch.cuda.current_stream().cuda_stream)
        scanner = cuda.compute.make_inclusive_scan(d_in=d_in, d_out=d_out, op=op, init_value=None)
        arguments = dict(d_in=d_in, d_out=d_out, op=op, init_value=None, num_items=d_in.shape[0], stream=stream)
        temp_bytes = scanner(temp_storage=None, **arguments)
        temp = torch.empty(max(1, temp_bytes), dtype=torch.uint8, device=a.device)
        return scanner, temp, arguments, a.shape

    def call(state):
        scanner, temp, arguments, _ = state
        scanner(temp_storage=temp, **arguments)
        return arguments["d_out"]

    def rows(out, state):
        return out.buffer.view(-1, 2)[:, 1].reshape(state[3])

    refuse = lambda sequences, steps: ("DeviceScan scans one sequence; cuda.compute has no segmented affine scan"  # noqa: E731
                                       if sequences > 1 else None)
    return Peer("CUB via cuda.compute", "n interleaved (a, b) float32 pairs in and out (16 B/step)",
                prepare, call, rows, refuse=refuse, note="custom op from C++ compiled to LTO-IR (RawOp)")


OPTIONAL = {
    "torch.compile associative_scan": lambda: [associative_scan_peer()],
    "accelerated-scan": accelerated_scan_peers,
    "flash-linear-attention HGRN": hgrn_peers,
    "CUB via cuda.compute (cuda-cccl)": lambda: [cub_peer()],
}


def collect(factories: dict) -> tuple[list[Peer], dict[str, str]]:
    """Peers from every factory that imports; {name: reason} for those that do not."""
    peers, missing = [], {}
    for name, factory in factories.items():
        try:
            peers.extend(factory())
        except ImportError as error:
            missing[name] = f"not installed ({error})"
        except Exception as error:  # noqa: BLE001 - a peer that breaks while setting up is reported too
            missing[name] = f"failed to set up ({type(error).__name__}: {error})"[:300]
    return peers, missing
