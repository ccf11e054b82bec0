// Staging a tile's steps in shared memory with asynchronous copies (cp.async), for lookback.cu,
// which keeps most of a tile there. Without runs each lane copies its own slots and reads back
// only those, so a lane's cp.async.wait is all the ordering needed; lookback.cu's runs read slots
// other lanes of the warp copied, after their waits and a warp barrier.
#pragma once

#include "affine.cuh"

namespace rtscan {

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
    return unsigned(__cvta_generic_to_shared(pointer));
}

// Asynchronous global -> shared copies (cp.async) of one lane's VEC steps starting at tile-relative
// step `first`, into `slot` (the lane's place in shared memory). `first` and `valid` are below the
// tile size, so 32-bit; only the tile's base is 64-bit. Steps past `valid` are not copied: the
// scan treats them as the identity map without reading them. A lane with no step here (beside a
// warp's packed rows, past a row's or a tile's end) skips the one-step loop: where the rest of its
// warp takes the 16-byte copy, the warp then runs only that (P228: rows of 12-60 steps, whose warps
// leave two lanes idle, issued a third fewer instructions and ran 1.33-1.36x faster).
template <int VEC>
__device__ __forceinline__ void stage_steps(float* slot, const float* __restrict__ source, long long time_stride,
                                            int first, int valid) {
    if (VEC == 4 && first + VEC <= valid) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(slot)),
                     "l"(source + first) : "memory");
    } else if (first < valid) {
        const long long stride = VEC == 4 ? 1 : time_stride;  // see tile_io.cuh's load_steps
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (first + v < valid)
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(shared_address(slot + v)),
                             "l"(source + (long long)(first + v) * stride) : "memory");
    }
}

__device__ __forceinline__ void wait_for_staged_steps() {
    asm volatile("cp.async.wait_all;" ::: "memory");
}

// Closes the group of this thread's copies issued since the last one (cp.async.commit_group).
__device__ __forceinline__ void commit_staged_group() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most `pending` (0-3) of this thread's committed groups are still in flight; any
// other count waits for all. The count must be an immediate, hence one case per value: callers
// pass a constant of an unrolled loop, and all but one case fold away.
__device__ __forceinline__ void wait_for_staged_groups(int pending) {
    switch (pending) {
        case 1: asm volatile("cp.async.wait_group 1;" ::: "memory"); break;
        case 2: asm volatile("cp.async.wait_group 2;" ::: "memory"); break;
        case 3: asm volatile("cp.async.wait_group 3;" ::: "memory"); break;
        default: asm volatile("cp.async.wait_group 0;" ::: "memory"); break;
    }
}

// The staged maps of one lane's VEC steps from its slots; identity past the end of the sequence.
// (No guard for a lane with no step here, unlike stage_steps: with one, ptxas 13.0 spilled the
// packed rows' kernel, P228; a 16-byte read in every lane cost 2^20 4 %, P229.)
template <int VEC>
__device__ __forceinline__ void read_staged(const float* slot_a, const float* slot_b, int first, int valid,
                                            Affine<float> (&maps)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        const float4 a4 = *reinterpret_cast<const float4*>(slot_a);
        const float4 b4 = *reinterpret_cast<const float4*>(slot_b);
        maps[0] = {a4.x, b4.x}; maps[1] = {a4.y, b4.y}; maps[2] = {a4.z, b4.z}; maps[3] = {a4.w, b4.w};
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            maps[v] = first + v < valid ? Affine<float>{slot_a[v], slot_b[v]} : affine_identity<float>();
    }
}

// Overwrites one lane's VEC staged maps in place, in the layout read_staged reads (steps past
// `valid` are not written).
template <int VEC>
__device__ __forceinline__ void write_staged(float* slot_a, float* slot_b, int first, int valid,
                                             const Affine<float> (&maps)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        *reinterpret_cast<float4*>(slot_a) = make_float4(maps[0].a, maps[1].a, maps[2].a, maps[3].a);
        *reinterpret_cast<float4*>(slot_b) = make_float4(maps[0].b, maps[1].b, maps[2].b, maps[3].b);
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (first + v < valid) {
                slot_a[v] = maps[v].a;
                slot_b[v] = maps[v].b;
            }
    }
}

// One lane's 4 states into a slot of its staged a, and back (lookback.cu's runs, 16-byte path
// only: states computed lane by lane leave in chunk order). Every state is written: a step past
// `valid` is never stored.
__device__ __forceinline__ void write_states(float* slot, const float (&states)[4]) {
    *reinterpret_cast<float4*>(slot) = make_float4(states[0], states[1], states[2], states[3]);
}

__device__ __forceinline__ void read_states(const float* slot, float (&states)[4]) {
    const float4 s4 = *reinterpret_cast<const float4*>(slot);
    states[0] = s4.x; states[1] = s4.y; states[2] = s4.z; states[3] = s4.w;
}

}  // namespace rtscan
