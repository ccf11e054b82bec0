// Scans across the 32 lanes of a warp with shuffles, in a fixed order: the result on each lane
// depends only on the maps of that lane and the lanes before it, never on timing. The lanes may
// also scan in groups of consecutive lanes, each group on its own (lookback.cu's packed rows): a
// lane's `place` in its group then stands for its lane, and a group's lane p ends with what lane p
// of a whole warp's scan of the group's maps would, bit for bit (the same rounds take, in the same
// order; the rounds that would reach before the group's first lane take nothing).
#pragma once

#include "affine.cuh"
#include "indexing.cuh"

namespace rtscan {

// Inclusive scan of one map per lane across its group, the group's first lane acting first: the
// lane at `place` ends with the composition of its group's lanes 0..place, in the same association
// on every call. Groups are consecutive lanes, at most `lanes` each (the same for the whole warp:
// the rounds that no lane of such a group takes are skipped); every lane of the warp calls.
__device__ __forceinline__ Affine<float> group_inclusive_scan(Affine<float> map, unsigned place,
                                                              unsigned lanes = WARP_SIZE) {
#pragma unroll
    for (int offset = 1; offset < WARP_SIZE; offset <<= 1) {
        if (unsigned(offset) >= lanes) break;
        const Affine<float> earlier = {__shfl_up_sync(0xffffffffu, map.a, offset),
                                       __shfl_up_sync(0xffffffffu, map.b, offset)};
        if (scan_round_takes(place, offset)) map = compose(map, earlier);
    }
    return map;
}

// The same over the whole warp, lane 0 acting first.
__device__ __forceinline__ Affine<float> warp_inclusive_scan(Affine<float> map) {
    return group_inclusive_scan(map, threadIdx.x & (WARP_SIZE - 1));
}

// The map of lane `source_lane`.
__device__ __forceinline__ Affine<float> shuffle_map(Affine<float> map, int source_lane) {
    return {__shfl_sync(0xffffffffu, map.a, source_lane), __shfl_sync(0xffffffffu, map.b, source_lane)};
}

// Exclusive prefix within a group: the map of the lanes before this one (identity on its first).
__device__ __forceinline__ Affine<float> group_exclusive_from_inclusive(Affine<float> inclusive, unsigned place) {
    const Affine<float> previous = {__shfl_up_sync(0xffffffffu, inclusive.a, 1),
                                    __shfl_up_sync(0xffffffffu, inclusive.b, 1)};
    return place == 0 ? affine_identity<float>() : previous;
}

// The same over the whole warp (identity on lane 0).
__device__ __forceinline__ Affine<float> exclusive_from_inclusive(Affine<float> inclusive) {
    return group_exclusive_from_inclusive(inclusive, threadIdx.x & (WARP_SIZE - 1));
}

}  // namespace rtscan
