// Scans across the 32 lanes of a warp with shuffles, in a fixed order: the result on each lane
// depends only on the maps of that lane and the lanes before it, never on timing.
#pragma once

#include "affine.cuh"
#include "indexing.cuh"

namespace rtscan {

// Inclusive scan of one map per lane across the warp, lane 0 acting first: lane k ends with the
// composition of lanes 0..k, in the same association on every call.
__device__ __forceinline__ Affine<float> warp_inclusive_scan(Affine<float> map) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (int offset = 1; offset < WARP_SIZE; offset <<= 1) {
        const Affine<float> earlier = {__shfl_up_sync(0xffffffffu, map.a, offset),
                                       __shfl_up_sync(0xffffffffu, map.b, offset)};
        if (scan_round_takes(lane, offset)) map = compose(map, earlier);
    }
    return map;
}

__device__ __forceinline__ Affine<float> shuffle_map(Affine<float> map, int source_lane) {
    return {__shfl_sync(0xffffffffu, map.a, source_lane), __shfl_sync(0xffffffffu, map.b, source_lane)};
}

// Exclusive prefix within the warp: the map of the lanes before this one (identity on lane 0).
__device__ __forceinline__ Affine<float> exclusive_from_inclusive(Affine<float> inclusive) {
    const unsigned lane = threadIdx.x & 31;
    const Affine<float> previous = {__shfl_up_sync(0xffffffffu, inclusive.a, 1),
                                    __shfl_up_sync(0xffffffffu, inclusive.b, 1)};
    return lane == 0 ? affine_identity<float>() : previous;
}

}  // namespace rtscan
