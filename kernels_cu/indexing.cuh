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

// Runs (lookback.cu's RUN_CHUNKS > 1): RUN consecutive chunks of a warp's span, starting at chunk
// `first_chunk`, are read lane by lane instead, so that lane l owns RUN * VEC consecutive steps of
// them and the warp scans the run once, not once a chunk. Lane l's j-th vector of the run starts
// at the step returned here; with RUN 1 this is first_step.
template <int VEC, int RUN>
RTSCAN_HOST_DEVICE int run_step(int span_start, int first_chunk, int lane, int j) {
    return span_start + first_chunk * WARP_SIZE * VEC + (lane * RUN + j) * VEC;
}

// Where vector q (VEC steps, counted from the start of a warp's staged steps) sits in shared
// memory. Chunks are copied in with lane l taking vector q = 32 * chunk + l, and runs read with
// lane l taking q = 32 * RUN * run + RUN * l + j; for 16-byte vectors, eight lanes of either must
// land in eight different 16-byte bank groups, or the reads serialise. Without runs the layout is
// q itself. With them, q's place in its row of eight vectors is XORed with the row's number
// (modulo 8): a chunk's eight lanes share a row and keep distinct places; a run's eight lanes
// cover rows whose numbers differ in the bits that their places share (RUN 2, 4 or 8).
template <int RUN>
RTSCAN_HOST_DEVICE int staged_vector_slot(int q) {
    return RUN > 1 ? q ^ ((q >> 3) & 7) : q;
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
