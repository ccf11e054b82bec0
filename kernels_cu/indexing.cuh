// Index arithmetic of the scan kernels, shared with their CPU mirror: NVRTC builds it into the
// kernels and the host C++ compiler into tests/mirrors/, so the mirror runs these very formulas.
// tests/test_mirrors.py mutates this file (and affine.cuh, seq_layout.cuh) and must see every
// mutation fail.
#pragma once

#include "affine.cuh"

namespace rtscan {

constexpr int WARP_SIZE = 32;

// A warp owns WARP_SIZE * ITEMS consecutive steps of the tile, starting here (tile-relative).
template <int ITEMS>
RTSCAN_HOST_DEVICE int warp_span_start(int warp) {
    return warp * WARP_SIZE * ITEMS;
}

// Within the warp's span starting at `span_start`, chunk c covers WARP_SIZE * VEC steps and lane
// l the VEC steps returned here, so that one chunk is one coalesced sweep of the warp.
template <int VEC>
RTSCAN_HOST_DEVICE int first_step(int span_start, int chunk, int lane) {
    return span_start + chunk * WARP_SIZE * VEC + lane * VEC;
}

// Kogge-Stone warp scan: in the round of `offset` (1, 2, 4, 8, 16) a lane composes the value of
// lane - offset, which acts first, when that lane exists.
RTSCAN_HOST_DEVICE bool scan_round_takes(unsigned lane, unsigned offset) {
    return lane >= offset;
}

// How many entries back the look-back's `lane` (< LANES) reads at depth `d` in window `window`
// (1 = the entry just before). LANES lanes read in each round: 32 for the warp-parallel walk, 1
// for the serial walk of the seed's first look-back. A window covers LANES * DEPTH predecessors.
template <int DEPTH, int LANES = WARP_SIZE>
RTSCAN_HOST_DEVICE long long lookback_distance(int lane, int d, long long window) {
    return 1 + lane + LANES * d + (long long)(LANES * DEPTH) * window;
}

// Where (depth d, lane) sits in a window, 0 being the nearest predecessor: the order in which
// the nearest finished predecessor is found and in which the fold runs (farthest first).
template <int LANES = WARP_SIZE>
RTSCAN_HOST_DEVICE int window_position(int d, int lane) {
    return LANES * d + lane;
}

// Consecutive tiles of one sequence form segments of SEGMENT tiles, one lane per tile in the
// in-segment scan (the two-level look-back of tile_state.cuh); SEGMENT = 1 is the one-level
// look-back of the seed's kernels. For the tile at `chunk` in its sequence: its segment's place
// in the sequence, and its own place in that segment.
constexpr int SEGMENT_TILES = WARP_SIZE;

template <int SEGMENT = SEGMENT_TILES>
RTSCAN_HOST_DEVICE long long segment_of(long long chunk) {
    return chunk / SEGMENT;
}

template <int SEGMENT = SEGMENT_TILES>
RTSCAN_HOST_DEVICE int place_in_segment(long long chunk) {
    return int(chunk % SEGMENT);
}

template <int SEGMENT = SEGMENT_TILES>
RTSCAN_HOST_DEVICE long long segments_per_sequence(long long tiles_per_seq) {
    return (tiles_per_seq + SEGMENT - 1) / SEGMENT;
}

}  // namespace rtscan
