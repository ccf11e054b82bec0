// The decoupled look-back with one sequence a lane (columns_lookback.cu): a tile covers SEQUENCES
// neighbouring sequences, and lane l < SEQUENCES of its look-back warp walks back along sequence l
// alone.
//
// Descriptors: one entry per (tile, lane) of tile_state.cuh's one-level arrays (inclusive,
// aggregate_a, aggregate_b), placed by columns_lookback_index.cuh's lane_slot: a sequence's entry
// for chunk c - d is predecessor_slot(its slot, d), and the lanes' reads of one distance are
// neighbouring words. The words, their generation tags and the helpers that read and write them
// are tile_state.cuh's, and its memory-ordering argument holds unchanged: every word is
// self-describing, written once per launch, and trusted only with this launch's generation.
#pragma once

#include "affine.cuh"
#include "columns_lookback_index.cuh"
#include "tile_state.cuh"

namespace rtscan {

// Called by one lane for its own sequence, independently of the other lanes (no shuffles, no
// warp votes): returns the state just before the tile at `slot`, the `chunk`-th (> 0) of its
// sequence. A window is DEPTH predecessors, read in one round (lane_lookback_distance). The
// nearest finished predecessor (inclusive published) and the aggregates of all nearer ones give
// the carry. Chunk 0 of a sequence publishes only its inclusive, so a window that reaches it waits
// there rather than passing the sequence's start; no read leaves the sequence.
//
// Determinism: the end states form one chain, inclusive[c] = fma(A[c], inclusive[c - 1], B[c]),
// and the fold rebuilds exactly that chain from whichever finished predecessor it finds, one fma
// per tile, nearest last. So the carry's bits do not depend on which predecessors were finished.
//
// A walk past the first window folds back through the nearer ones. The aggregates of the first
// LANE_STASHED_WINDOWS windows are kept in `stash` (shared memory, [window][k][lane], each lane
// only its own) as the walk passes them, so that folding back costs no second round trip for
// those (P124: on one chain of tiles a lane walks back a median 6 windows, and reading them again
// one after another took a quarter of its wait); farther ones are read again.
constexpr int LANE_STASHED_WINDOWS = 16;

template <int DEPTH, int SEQUENCES>
using LaneStash = float2[LANE_STASHED_WINDOWS][DEPTH][SEQUENCES];

template <int DEPTH, int SEQUENCES, bool ATOMIC_POLLS>
__device__ __forceinline__ float lane_lookback_carry(const Descriptors& level, long long slot, long long chunk,
                                                     unsigned generation, LaneStash<DEPTH, SEQUENCES>& stash,
                                                     int lane) {
    const PredecessorView nothing = {false, false, 0.0f, 0.0f, 0.0f};
    for (long long window = 0;; ++window) {
        PredecessorView seen[DEPTH];
        int first_finished;  // window position of the nearest finished predecessor, DEPTH if none
        while (true) {
#pragma unroll
            for (int k = 0; k < DEPTH; ++k) {
                const long long distance = lane_lookback_distance<DEPTH>(window, k);
                seen[k] = distance <= chunk ? read_predecessor<ATOMIC_POLLS>(
                                                  level, predecessor_slot<SEQUENCES>(slot, distance), generation)
                                            : nothing;
            }
            first_finished = DEPTH;
#pragma unroll
            for (int k = DEPTH - 1; k >= 0; --k)
                if (seen[k].finished) first_finished = k;
            // Only predecessors nearer than the nearest finished one must show their aggregate.
            bool ready = true;
#pragma unroll
            for (int k = 0; k < DEPTH; ++k)
                if (k < first_finished && lane_lookback_distance<DEPTH>(window, k) <= chunk)
                    ready = ready && seen[k].aggregated;
            if (ready) break;
        }
        if (first_finished == DEPTH) {  // a whole window of aggregates: look farther back
            if (window < LANE_STASHED_WINDOWS) {
#pragma unroll
                for (int k = 0; k < DEPTH; ++k) stash[window][k][lane] = make_float2(seen[k].a, seen[k].b);
            }
            continue;
        }

        float state = 0.0f;
#pragma unroll
        for (int k = 0; k < DEPTH; ++k)
            if (k == first_finished) state = seen[k].state;
#pragma unroll
        for (int k = DEPTH - 1; k >= 0; --k)
            if (k < first_finished) state = apply(Affine<float>{seen[k].a, seen[k].b}, state);
        // The nearer windows, farthest first: from the stash, or read again. Tags not checked
        // again: this lane saw each of these words carry this launch's generation, a word is
        // written once per launch, and read-read coherence keeps a later read of the same address
        // by the same thread from returning an older value.
        for (long long nearer = window - 1; nearer >= 0; --nearer) {
#pragma unroll
            for (int k = DEPTH - 1; k >= 0; --k) {
                Affine<float> map;
                if (nearer < LANE_STASHED_WINDOWS) {
                    const float2 kept = stash[nearer][k][lane];
                    map = {kept.x, kept.y};
                } else {
                    const PredecessorView view = read_predecessor<ATOMIC_POLLS>(
                        level, predecessor_slot<SEQUENCES>(slot, lane_lookback_distance<DEPTH>(nearer, k)),
                        generation);
                    map = {view.a, view.b};
                }
                state = apply(map, state);
            }
        }
        return state;
    }
}

}  // namespace rtscan
