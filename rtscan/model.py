"""The memory-traffic model: the bytes each pass of a variant moves, and the time they predict at
the copy bandwidth measured in the same run (`python -m rtscan bench --model`).

A pass is charged for the device memory it must read and write: every single-pass variant reads
a and b once and writes h once. The look-back's descriptors (the ticket, a tile's aggregate, a
segment's aggregate and end state, the windows a look-back reads) are listed separately: they
are a few words per tile and stay in L2, so they are not charged against the copy bandwidth.
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
    descriptor_bytes: int  # L2 traffic of the look-back protocol, at least this much

    @property
    def memory_bytes(self) -> int:
        return self.read_bytes + self.written_bytes


def passes(variant: Variant, shape: LaunchShape, num_seqs: int, length: int, itemsize: int) -> list[Pass]:
    """The passes of one call on `num_seqs` sequences of `length` steps with launch shape `shape`."""
    if variant.passes != 1:
        raise NotImplementedError(f"no traffic model yet for the {variant.passes}-pass variant {variant.name}")
    elements = num_seqs * length
    tiles_per_seq = -(-length // shape.tile)
    tiles = num_seqs * tiles_per_seq
    segments = num_seqs * -(-tiles_per_seq // shape.segment_tiles)
    if tiles_per_seq == 1:  # no look-back: only the ticket
        descriptors = tiles * WORD
    else:
        # per tile: the ticket, its aggregate (2 words), one window of the look-back (3 words per
        # reading lane); per segment: its aggregate and end state (3 words)
        descriptors = tiles * WORD * (1 + 2 + 3 * shape.walk_lanes) + segments * 3 * WORD
    return [Pass("scan", read_bytes=2 * itemsize * elements, written_bytes=itemsize * elements,
                 descriptor_bytes=descriptors)]


def predicted_us(model: list[Pass], copy_bytes: int, copy_us: float) -> float:
    """The time the passes take at the bandwidth of a copy of `copy_bytes` that took `copy_us`."""
    return sum(p.memory_bytes for p in model) * copy_us / copy_bytes
