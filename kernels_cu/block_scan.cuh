// A fixed-order exclusive scan of the maps a block holds in registers, for kernels without a
// look-back (three_pass.cu): each lane holds CHUNKS chunks of VEC consecutive steps, laid out as
// lookback.cu lays a tile out (indexing.cuh: warp_span_start, first_step), so one chunk of a warp
// is one coalesced sweep. The association is fixed by the lane and warp positions alone, so the
// results are the same bits on every run.
#pragma once

#include "affine.cuh"
#include "indexing.cuh"
#include "warp_scan.cuh"

namespace rtscan {

// Called by every thread of the block. Sets prefix[c] to the composed map of every step of the
// block's span before this lane's chunk c (the identity for the span's first step) and returns
// the composed map of the whole span on every thread. `shared_warps` is WARPS words of shared
// memory; the function begins with a barrier, so a loop may call it again with the same words.
//
// Association: within a warp, per chunk, each lane composes its VEC maps serially, a Kogge-Stone
// warp scan composes the lanes, and a running map carries the warp across its chunks; across the
// warps, every warp scans the warp aggregates itself (the same scan on every warp, so the same
// bits) instead of waiting at a third barrier for warp 0 to do it.
template <int BLOCK_THREADS, int CHUNKS, int VEC>
__device__ __forceinline__ Affine<float> block_exclusive_scan(const Affine<float> (&maps)[CHUNKS][VEC],
                                                              Affine<float> (&prefix)[CHUNKS],
                                                              Affine<float>* shared_warps) {
    constexpr int WARPS = BLOCK_THREADS / WARP_SIZE;
    static_assert(BLOCK_THREADS % WARP_SIZE == 0 && WARPS <= WARP_SIZE, "whole warps, at most 32");
    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;

    Affine<float> warp_running = affine_identity<float>();
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        Affine<float> lane_map = affine_identity<float>();
#pragma unroll
        for (int v = 0; v < VEC; ++v) lane_map = compose(maps[c][v], lane_map);
        const Affine<float> inclusive = warp_inclusive_scan(lane_map);
        prefix[c] = compose(exclusive_from_inclusive(inclusive), warp_running);
        warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
    }

    __syncthreads();  // a previous call's readers of shared_warps are done
    if (lane == 0) shared_warps[warp] = warp_running;
    __syncthreads();
    const Affine<float> warps_inclusive =
        warp_inclusive_scan(lane < WARPS ? shared_warps[lane] : affine_identity<float>());
    const Affine<float> warps_before = shuffle_map(warps_inclusive, warp == 0 ? 0 : int(warp) - 1);
    if (warp != 0) {
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) prefix[c] = compose(prefix[c], warps_before);
    }
    return shuffle_map(warps_inclusive, WARPS - 1);
}

}  // namespace rtscan
