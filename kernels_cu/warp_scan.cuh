// Scans across the 32 lanes of a warp with shuffles, in a fixed order: the result on each lane
// depends only on the maps of that lane and the lanes before it, never on timing. With WIDTH 16 or
// 8, each group of WIDTH lanes scans on its own (lookback.cu's rows of fewer lanes than a warp); its
// lanes end with what the first WIDTH lanes of a whole warp's scan would, the others' maps aside.
#pragma once

#include "affine.cuh"
#include "indexing.cuh"

namespace rtscan {

// Inclusive scan of one map per lane across the warp, lane 0 acting first: lane k ends with the
// composition of lanes 0..k, in the same association on every call.
template <int WIDTH = WARP_SIZE>
__device__ __forceinline__ Affine<float> warp_inclusive_scan(Affine<float> map) {
    const unsigned lane = threadIdx.x & (WIDTH - 1);
#pragma unroll
    for (int offset = 1; offset < WIDTH; offset <<= 1) {
        const Affine<float> earlier = {__shfl_up_sync(0xffffffffu, map.a, offset, WIDTH),
                                       __shfl_up_sync(0xffffffffu, map.b, offset, WIDTH)};
        if (scan_round_takes(lane, offset)) map = compose(map, earlier);
    }
    return map;
}

// The map of lane `source_lane` (of this lane's group of WIDTH lanes).
template <int WIDTH = WARP_SIZE>
__device__ __forceinline__ Affine<float> shuffle_map(Affine<float> map, int source_lane) {
    return {__shfl_sync(0xffffffffu, map.a, source_lane, WIDTH), __shfl_sync(0xffffffffu, map.b, source_lane, WIDTH)};
}

// Exclusive prefix within the warp (or group of WIDTH lanes): the map of the lanes before this one
// (identity on its first lane).
template <int WIDTH = WARP_SIZE>
__device__ __forceinline__ Affine<float> exclusive_from_inclusive(Affine<float> inclusive) {
    const unsigned lane = threadIdx.x & (WIDTH - 1);
    const Affine<float> previous = {__shfl_up_sync(0xffffffffu, inclusive.a, 1, WIDTH),
                                    __shfl_up_sync(0xffffffffu, inclusive.b, 1, WIDTH)};
    return lane == 0 ? affine_identity<float>() : previous;
}

}  // namespace rtscan
