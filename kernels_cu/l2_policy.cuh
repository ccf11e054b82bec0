// Global loads and stores that tell L2 how long to keep their lines (sm_80 and newer): the
// look-ahead scan reads each step twice, the second time from L2, and these hints keep the lines
// that are yet to be read again while the output stream and the lines already reread go first.
#pragma once

#include "affine.cuh"
#include "tile_io.cuh"

namespace rtscan {

using l2_policy = unsigned long long;

// An L2 eviction priority for a whole access (createpolicy, fraction 1.0).
__device__ __forceinline__ l2_policy l2_evict_last() {
    l2_policy policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ l2_policy l2_evict_first() {
    l2_policy policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// 16 bytes, allocated in L1 as a plain load is: a lane's run of steps spans whole 32-byte sectors
// over two or more loads, and the later loads find the sector there.
__device__ __forceinline__ float4 load_float4_hinted(const float* address, l2_policy policy) {
    float4 v;
    asm volatile("ld.global.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(address), "l"(policy));
    return v;
}

__device__ __forceinline__ void store_float4_hinted(float* address, float4 v, l2_policy policy) {
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(address), "f"(v.x), "f"(v.y),
                 "f"(v.z), "f"(v.w), "l"(policy)
                 : "memory");
}

// load_steps (tile_io.cuh) with an L2 policy on the 16-byte path; the scalar path reads as
// load_steps does.
template <int VEC>
__device__ __forceinline__ void load_steps_hinted(const float* __restrict__ a, const float* __restrict__ b,
                                                  long long time_stride, int first, int valid, l2_policy policy,
                                                  Affine<float> (&maps)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        const float4 a4 = load_float4_hinted(a + first, policy);
        const float4 b4 = load_float4_hinted(b + first, policy);
        maps[0] = {a4.x, b4.x}; maps[1] = {a4.y, b4.y}; maps[2] = {a4.z, b4.z}; maps[3] = {a4.w, b4.w};
    } else {
        load_steps<VEC>(a, b, time_stride, first, valid, maps);
    }
}

template <int VEC>
__device__ __forceinline__ void store_steps_hinted(float* __restrict__ target, long long time_stride, int first,
                                                   int valid, l2_policy policy, const float (&values)[VEC]) {
    if (VEC == 4 && first + VEC <= valid)
        store_float4_hinted(target + first, make_float4(values[0], values[1], values[2], values[3]), policy);
    else
        store_steps<VEC>(target, time_stride, first, valid, values);
}

}  // namespace rtscan
