// Where columns_lookback (columns_lookback.cu, lane_lookback.cuh) puts each tile, lane and step,
// where each lane's descriptors live and which predecessors a look-back window reads; shared with
// the kernel's CPU mirror (tests/mirrors/columns_lookback_mirror.cpp), so the mirror runs this code.
#pragma once

#include "affine.cuh"    // RTSCAN_HOST_DEVICE
#include "indexing.cuh"  // WARP_SIZE

namespace rtscan {

// Tiles across the sequences: groups of WARP_SIZE neighbouring sequences, the last one part-full.
RTSCAN_HOST_DEVICE long long lane_groups(long long num_seqs) {
    return (num_seqs + WARP_SIZE - 1) / WARP_SIZE;
}

struct LaneTile {
    long long group;  // sequences group * WARP_SIZE .. + WARP_SIZE - 1, lane l holding the l-th
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
RTSCAN_HOST_DEVICE long long lane_sequence(const LaneTile& tile, int lane) {
    return tile.group * WARP_SIZE + lane;
}

// The descriptor entry of (tile, lane): a tile's 32 lanes side by side, so the lanes' reads of one
// distance are 32 neighbouring words, and a sequence's chunks WARP_SIZE entries apart.
RTSCAN_HOST_DEVICE long long lane_slot(const LaneTile& tile, long long tiles_per_seq, int lane) {
    return (tile.group * tiles_per_seq + tile.chunk) * WARP_SIZE + lane;
}

// The entry of the same sequence `distance` chunks earlier.
RTSCAN_HOST_DEVICE long long predecessor_slot(long long slot, long long distance) {
    return slot - distance * WARP_SIZE;
}

// How many chunks back predecessor k (0 .. DEPTH - 1, 0 the nearest) of look-back window `window`
// lies.
template <int DEPTH>
RTSCAN_HOST_DEVICE long long lane_lookback_distance(long long window, int k) {
    return window * DEPTH + 1 + k;
}

// Warp `warp`'s first step in its tile's chunk of WARPS * ITEMS steps of each sequence.
template <int ITEMS, int WARPS>
RTSCAN_HOST_DEVICE long long lane_first_step(long long chunk, int warp) {
    return chunk * (WARPS * ITEMS) + warp * ITEMS;
}

// The state before a sequence's first chunk.
RTSCAN_HOST_DEVICE float lane_first_carry(const float* h0, long long seq) {
    return h0 != nullptr ? h0[seq] : 0.0f;
}

}  // namespace rtscan
