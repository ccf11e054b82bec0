"""The memory-traffic model: the bytes each pass of a variant moves, and the time they predict at
the copy bandwidth measured in the same run (`python -m rtscan bench --model`).

A pass is charged for the device memory it must read and write: every single-pass variant reads
a and b once and writes h once. The look-back's descriptors (the ticket, a tile's aggregate, a
segment's aggregate and end state, the windows a look-back reads) are listed separately: they
are a few words per tile and stay in L2, so they are not charged against the copy bandwidth.

The three-pass variants (kernels_cu/three_pass.cu) are one Pass per launch. three_pass: pass 1
reads a and b and writes every step's pair (A_t, B_t), pass 3 reads the pairs and writes h:
float32 8 + 8, then 8 + 4 = 28 bytes a step. three_pass_reduce: pass 1 reads a and b, pass 3
reads them again and writes h: 8, then 8 + 4 = 20 bytes a step. The tile aggregates and carries
that pass 2 scans are a few words per tile, listed like the look-back's descriptors: pass 2 moves
no step's bytes, and its time (one block per sequence walking its aggregates) is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import LaunchShape, Variant

WORD = 8  # bytes of one descriptor word (kernels_cu/tile_state.cuh)


@dataclass(frozen=True)
class Pass:
    name: str
    read_bytes: int       # device memory read once
    written_bytes: int    # device memory written once
    descriptor_bytes: int  # per-tile words: the look-back protocol's, or three-pass aggregates and carries

    @property
    def memory_bytes(self) -> int:
        return self.read_bytes + self.written_bytes


def passes(variant: Variant, shape: LaunchShape, num_seqs: int, length: int, itemsize: int,
           head: int = 0) -> list[Pass]:
    """The passes of one call on `num_seqs` sequences of `length` steps with launch shape `shape`,
    its tiles counted from `head` steps before each sequence (the longest row head, P196)."""
    if variant.pass_kernels:
        return _three_passes(variant, shape, num_seqs, length, itemsize)
    if variant.passes != 1:
        raise NotImplementedError(f"no traffic model for the {variant.passes}-pass variant {variant.name}")
    elements = num_seqs * length
    tiles_per_seq, tiles = variant.tile_counts(shape, num_seqs, length + head)
    segments = num_seqs * -(-tiles_per_seq // shape.segment_tiles)
    if tiles_per_seq == 1:  # no look-back: only the ticket
        descriptors = tiles * WORD
    elif shape.sequences_per_tile > 1:
        # per tile: the ticket; per sequence and chunk: its aggregate and end state (3 words), one
        # window of its lane's look-back (3 words per predecessor)
        descriptors = tiles * WORD + num_seqs * tiles_per_seq * WORD * (3 + 3 * shape.lookback_depth)
    else:
        # per tile: the ticket, its aggregate (2 words), one window of the look-back (3 words per
        # reading lane); per segment: its aggregate and end state (3 words)
        descriptors = tiles * WORD * (1 + 2 + 3 * shape.walk_lanes) + segments * 3 * WORD
    return [Pass("scan", read_bytes=2 * itemsize * elements, written_bytes=itemsize * elements,
                 descriptor_bytes=descriptors)]


def _three_passes(variant: Variant, shape: LaunchShape, num_seqs: int, length: int, itemsize: int) -> list[Pass]:
    elements = num_seqs * length
    tiles = num_seqs * -(-length // shape.tile)
    steps = 2 * itemsize * elements  # a and b, or the pairs' A and B
    first, carries, last = (kernel.range_name for kernel in variant.pass_kernels)
    return [
        # pass 1 writes each tile's aggregate (2 words)
        Pass(first, read_bytes=steps, written_bytes=steps if variant.keeps_pairs else 0,
             descriptor_bytes=2 * itemsize * tiles),
        # pass 2 reads the aggregates and h0, writes a carry per tile
        Pass(carries, read_bytes=0, written_bytes=0, descriptor_bytes=3 * itemsize * tiles + itemsize * num_seqs),
        # pass 3 reads its tile's carry
        Pass(last, read_bytes=steps, written_bytes=itemsize * elements, descriptor_bytes=itemsize * tiles),
    ]


def predicted_us(model: list[Pass], copy_bytes: int, copy_us: float) -> float:
    """The time the passes take at the bandwidth of a copy of `copy_bytes` that took `copy_us`."""
    return sum(p.memory_bytes for p in model) * copy_us / copy_bytes
