// Where columns_lookback (columns_lookback.cu, lane_lookback.cuh) puts each tile, lane and step,
// where each lane's descriptors live and which predecessors a look-back window reads; shared with
// the kernel's CPU mirror (tests/mirrors/columns_lookback_mirror.cpp), so the mirror runs this code.
//
// A tile takes SEQUENCES neighbouring sequences (32, 16 or 8: a warp's lanes, or a half or a
// quarter of them) over one chunk of the time axis. Lane l of every warp holds sequence
// l % SEQUENCES of the tile, and the warp's WARP_SIZE / SEQUENCES parts (lanes 0-15 and 16-31 where
// SEQUENCES is 16) hold consecutive spans of ITEMS steps: with fewer than 32 sequences a warp's load
// of one step is still 32 words, from as many rows as it has parts, and each row a whole number of
// 32-byte sectors.
#pragma once

#include "affine.cuh"    // RTSCAN_HOST_DEVICE
#include "indexing.cuh"  // WARP_SIZE

namespace rtscan {

// Tiles across the sequences: groups of SEQUENCES neighbouring sequences, the last one part-full.
template <int SEQUENCES>
RTSCAN_HOST_DEVICE long long lane_groups(long long num_seqs) {
    return (num_seqs + SEQUENCES - 1) / SEQUENCES;
}

struct LaneTile {
    long long group;  // sequences group * SEQUENCES .. + SEQUENCES - 1
    long long chunk;  // the chunk of the time axis, tiles_per_seq of them per sequence
};

// Tickets run chunk-major: every group's chunk c before any group's chunk c + 1. A tile's
// predecessors (its group's earlier chunks) therefore hold earlier tickets, which is all the
// look-back's forward-progress argument needs (tile_state.cuh).
RTSCAN_HOST_DEVICE LaneTile lane_tile_of_ticket(long long ticket, long long groups) {
    const long long chunk = ticket / groups;
    return {ticket - chunk * groups, chunk};
}

// The sequence lane `lane` of the tile holds (num_seqs or more: the lane idles).
template <int SEQUENCES>
RTSCAN_HOST_DEVICE long long lane_sequence(const LaneTile& tile, int lane) {
    return tile.group * SEQUENCES + lane % SEQUENCES;
}

// The span of the chunk that lane `lane` of warp `warp` holds: the warps in order, each split into
// its parts in lane order.
template <int SEQUENCES>
RTSCAN_HOST_DEVICE int lane_span(int warp, int lane) {
    return warp * (WARP_SIZE / SEQUENCES) + lane / SEQUENCES;
}

// The descriptor entry of (tile, lane) for lanes 0 .. SEQUENCES - 1, the ones that walk back: a
// tile's entries side by side, so the lanes' reads of one distance are neighbouring words, and a
// sequence's chunks SEQUENCES entries apart.
template <int SEQUENCES>
RTSCAN_HOST_DEVICE long long lane_slot(const LaneTile& tile, long long tiles_per_seq, int lane) {
    return (tile.group * tiles_per_seq + tile.chunk) * SEQUENCES + lane;
}

// The entry of the same sequence `distance` chunks earlier.
template <int SEQUENCES>
RTSCAN_HOST_DEVICE long long predecessor_slot(long long slot, long long distance) {
    return slot - distance * SEQUENCES;
}

// How many chunks back predecessor k (0 .. DEPTH - 1, 0 the nearest) of look-back window `window`
// lies.
template <int DEPTH>
RTSCAN_HOST_DEVICE long long lane_lookback_distance(long long window, int k) {
    return window * DEPTH + 1 + k;
}

// Span `span`'s first step in its tile's chunk of SPANS * ITEMS steps of each sequence.
template <int ITEMS, int SPANS>
RTSCAN_HOST_DEVICE long long lane_first_step(long long chunk, int span) {
    return chunk * (SPANS * ITEMS) + span * ITEMS;
}

// The state before a sequence's first chunk.
RTSCAN_HOST_DEVICE float lane_first_carry(const float* h0, long long seq) {
    return h0 != nullptr ? h0[seq] : 0.0f;
}

}  // namespace rtscan
