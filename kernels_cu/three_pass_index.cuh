// Where the three-pass scan keeps its intermediate values and how its passes hand the carry on,
// shared with its CPU mirror: NVRTC builds this file into kernels_cu/three_pass.cu and the host
// C++ compiler into tests/mirrors/three_pass_mirror.cpp, so the mirror runs these very formulas
// and tests/test_three_pass_mirror.py's broken twins mutate them.
//
// Numbering: tile = seq * tiles_per_seq + chunk, where chunk is the tile's place in its sequence;
// pass 1 and pass 3 run one block per tile (tile_of_ticket of the grid index), pass 2 one block per
// sequence.
// Every count is 64-bit: 2^28 steps in tiles of 4096 are 65536 tiles per sequence, and the pairs
// of all tiles can pass 2^31 entries (from 2^31 steps).
#pragma once

#include "affine.cuh"

namespace rtscan {

// The scratch memory of one call (rtscan/_workspace.py's per-stream scratch, carved by
// rtscan/_scan.py); every array is written by one pass before a later pass reads it, so it needs
// no clearing between calls.
//   pair_a, pair_b        three_pass only (null for three_pass_reduce): TILE entries per tile,
//                         entry `step` = the map from the tile's start through that step
//   aggregate_a, _b       one per tile: the tile's composed map (pass 1)
//   carry                 one per tile: the state just before the tile (pass 2)
struct ThreePassScratch {
    float* pair_a;
    float* pair_b;
    float* aggregate_a;
    float* aggregate_b;
    float* carry;
};

// Pass 1 and pass 3: the place of the tile's step 0 among the pairs; a tile's steps follow it.
template <int TILE>
RTSCAN_HOST_DEVICE long long pair_slot(long long tile) {
    return tile * TILE;
}

// Pass 1: where the tile's aggregate goes.
RTSCAN_HOST_DEVICE long long aggregate_slot(long long tile) {
    return tile;
}

// Pass 2: the aggregates and carries of sequence `seq` are the tiles_per_seq entries from here.
RTSCAN_HOST_DEVICE long long sequence_slots(long long seq, long long tiles_per_seq) {
    return seq * tiles_per_seq;
}

// Pass 3: where the tile finds its carry.
RTSCAN_HOST_DEVICE long long carry_slot(long long tile) {
    return tile;
}

// Pass 2: the carry into a sequence's first tile (h0, or 0 without it).
RTSCAN_HOST_DEVICE float first_tile_carry(const float* h0, long long seq) {
    return h0 != nullptr ? h0[seq] : 0.0f;
}

// Pass 2: the state after `before` (the composed aggregates of the tiles between the running
// carry and this tile) acts on the running carry `running`: the carry into the tile, and, with
// a whole chunk's aggregate as `before`, the running carry into the next chunk.
RTSCAN_HOST_DEVICE float carry_after(Affine<float> before, float running) {
    return multiply_add(before.a, running, before.b);
}

// Pass 3 of three_pass: h_t = A_t * carry + B_t, with (A_t, B_t) the map from the tile's start
// through step t, in one fma (one rounding, as every other state in rtscan).
RTSCAN_HOST_DEVICE float state_from_pair(Affine<float> through, float carry) {
    return multiply_add(through.a, carry, through.b);
}

// Pass 3 of three_pass_reduce: the state just before a lane's steps, from the map of the tile's
// steps before them and the tile's carry; the lane then runs its steps one fma each.
RTSCAN_HOST_DEVICE float state_before(Affine<float> before, float carry) {
    return multiply_add(before.a, carry, before.b);
}

}  // namespace rtscan
