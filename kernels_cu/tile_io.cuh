// A tile's steps in and out of global memory, for the kernels that keep steps in registers
// (lookback.cu's register-held chunks, blelloch.cu): VEC = 4 moves 16 bytes at once and needs unit
// time stride and 16-byte aligned sequences (lookback.cu's counted from seq_layout.cuh's head);
// VEC = 1 reads any stride, including negative.
#pragma once

#include "affine.cuh"
#include "seq_layout.cuh"
#include "tile_state.cuh"

namespace rtscan {

// Dynamic shared memory one block may use on sm_80 and newer (sm_86/sm_89: 99 KB; the host checks
// the device's limit before launching a larger shape).
constexpr int MAX_DYNAMIC_SHARED_BYTES = 227 * 1024;

// Where the steps of a block's tile (the `chunk`-th of its sequence, TILE steps long) live, and
// how many of them exist: the last tile of a sequence may be cut short, or hold none. With a
// `row_head` (lookback.cu's, from seq_layout.cuh's head), the sequence's tiles count from that
// many steps before its step 0, and its first tile's first `head` steps are not the caller's.
template <int TILE>
struct TileSteps {
    int valid;
    int head;
    const float* a;
    const float* b;
    float* out;

    __device__ TileSteps(const ClaimedTile& claimed, long long chunk, const SeqLayout& layout,
                         const float* __restrict__ a_all, const float* __restrict__ b_all,
                         float* __restrict__ out_all, int row_head = 0) {
        const long long first = chunk * TILE - row_head;
        valid = int(min((long long)TILE, layout.length - first));
        head = chunk == 0 ? row_head : 0;
        a = a_all + claimed.in_offset + first * layout.in_time_stride;
        b = b_all + claimed.in_offset + first * layout.in_time_stride;
        out = out_all + claimed.out_offset + first * layout.out_time_stride;
    }
};

// The maps of one lane's VEC steps starting at tile-relative step `first`; identity past the end
// of the sequence, never read there. `first` and `valid` are below the tile size, so 32-bit; only
// the tile's base is 64-bit. .cg: the tile is read once, so it is not kept in L1.
template <int VEC>
__device__ __forceinline__ void load_steps(const float* __restrict__ a, const float* __restrict__ b,
                                           long long time_stride, int first, int valid, Affine<float> (&maps)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        const float4 a4 = __ldcg(reinterpret_cast<const float4*>(a + first));
        const float4 b4 = __ldcg(reinterpret_cast<const float4*>(b + first));
        maps[0] = {a4.x, b4.x}; maps[1] = {a4.y, b4.y}; maps[2] = {a4.z, b4.z}; maps[3] = {a4.w, b4.w};
    } else {
        // The 16-byte path's one-step loop (a lane's last steps of a row or tile) is on unit time
        // stride too, by that path's contract (rtscan/_scan.py's _row_heads): offsets then fold into
        // the loads' and stores' immediates instead of a 64-bit multiply each (P230, P231).
        const long long stride = VEC == 4 ? 1 : time_stride;
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            const long long offset = (long long)(first + v) * stride;
            maps[v] = first + v < valid ? Affine<float>{__ldcg(a + offset), __ldcg(b + offset)}
                                        : affine_identity<float>();
        }
    }
}

// Stores one lane's VEC states of steps `first` .. ; steps before `head` (seq_layout.cuh's, in a
// sequence's first tile) or from `valid` on are not written. A lane with no step here skips the
// one-step loop, as staging.cuh's stage_steps does (P228).
template <int VEC>
__device__ __forceinline__ void store_steps(float* __restrict__ target, long long time_stride, int first,
                                            int valid, const float (&values)[VEC], int head = 0) {
    // `head == 0 ||` lets the compiler drop the head's test where a caller passes none.
    if (VEC == 4 && first + VEC <= valid && (head == 0 || first >= head)) {
        // An explicit 16-byte store: a float4 assignment leaves the vector store to NVVM's
        // load-store vectorizer, which dropped it (four 4-byte stores per chunk, 7 % slower at 2^28)
        // when unrelated code around it changed (profiling/PREDICTIONS.md, P19). __stwb is the
        // intrinsic that cannot be split; ptxas makes it a strong store (STG.E.128.STRONG.SM), and
        // a plain 16-byte store measured the same (P25). An evict-first store (__stcs) gained only
        // where the bench's launches found their inputs left in L2 by the launch before (P69,
        // P71), and would push h out of L2 before the kernel that reads it next.
        __stwb(reinterpret_cast<float4*>(target + first), make_float4(values[0], values[1], values[2], values[3]));
    } else if (first < valid) {
        const long long stride = VEC == 4 ? 1 : time_stride;  // as in load_steps
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (first + v < valid && (head == 0 || first + v >= head))
                target[(long long)(first + v) * stride] = values[v];
    }
}

}  // namespace rtscan
