// Single-pass decoupled look-back scan that holds no tile while it waits: lookback.cu's kernel,
// except that the steps it does not keep in registers are read from global memory twice, once
// to build the tile's map and once, after the carry is known, to run the recurrence. The second
// read is meant to hit L2, which the first read filled a few microseconds earlier.
//
// Why: lookback.cu's blocks hold their tile (registers and shared memory) through the look-back,
// and the tile bytes an SM can hold bound its rate (profiling/NOTES.md items 11 and 24). Here a
// waiting block holds only its REGISTER_ITEMS steps per thread, so an SM runs more blocks and
// the waits overlap with other blocks' loads; the data waits in L2 instead (50 MB on an H200).
// Cache hints keep it there: the first read marks its lines evict_last, the second read and the
// stores mark theirs evict_first, so the output stream does not push out what is yet to be read.
//
// Template parameters as lookback.cu's (REGISTER_ITEMS: of a thread's ITEMS, how many are read
// once and held in registers; the rest are read twice). No dynamic shared memory.
#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

// RTSCAN_REREAD_HINTS 0 drops the hints (plain .cg loads and lookback.cu's stores), for an A/B.
#ifndef RTSCAN_REREAD_HINTS
#define RTSCAN_REREAD_HINTS 1
#endif

namespace rtscan {

// An L2 eviction policy for a whole access (createpolicy, sm_80+).
__device__ __forceinline__ word64 l2_evict_last_policy() {
    word64 policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ word64 l2_evict_first_policy() {
    word64 policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ float4 load_float4_with_policy(const float* address, word64 policy) {
    float4 v;
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(address), "l"(policy));
    return v;
}

__device__ __forceinline__ void store_float4_with_policy(float* address, float4 v, word64 policy) {
    asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;"
                 ::"l"(address), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "l"(policy) : "memory");
}

// load_steps with an L2 policy on the 16-byte path (the scalar path reads as load_steps does).
template <int VEC>
__device__ __forceinline__ void load_steps_with_policy(const float* __restrict__ a, const float* __restrict__ b,
                                                       long long time_stride, int first, int valid, word64 policy,
                                                       Affine<float> (&maps)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        const float4 a4 = load_float4_with_policy(a + first, policy);
        const float4 b4 = load_float4_with_policy(b + first, policy);
        maps[0] = {a4.x, b4.x}; maps[1] = {a4.y, b4.y}; maps[2] = {a4.z, b4.z}; maps[3] = {a4.w, b4.w};
    } else {
        load_steps<VEC>(a, b, time_stride, first, valid, maps);
    }
}

template <int VEC>
__device__ __forceinline__ void store_steps_with_policy(float* __restrict__ target, long long time_stride, int first,
                                                        int valid, word64 policy, const float (&values)[VEC]) {
    if (VEC == 4 && first + VEC <= valid)
        store_float4_with_policy(target + first, make_float4(values[0], values[1], values[2], values[3]), policy);
    else
        store_steps<VEC>(target, time_stride, first, valid, values);
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int REGISTER_ITEMS, int WALK_LANES,
          int SEGMENT>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
lookback_reread_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                     const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
                     long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0 && REGISTER_ITEMS % VEC == 0, "whole chunks per thread");
    static_assert(0 <= REGISTER_ITEMS && REGISTER_ITEMS <= ITEMS, "registers hold some of a lane's chunks");
    constexpr int WARPS = BLOCK_THREADS / 32;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int REGISTER_CHUNKS = REGISTER_ITEMS / VEC;  // a lane's first chunks, held in registers
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");
    static_assert(WALK_LANES == 1 || WALK_LANES == WARP_SIZE, "a serial or a warp-wide walk");
    static_assert(1 <= SEGMENT && SEGMENT <= WARP_SIZE, "one lane per tile of a segment");

    __shared__ ClaimedTile shared_claim;
    __shared__ Affine<float> shared_warp_prefix[WARPS];
    __shared__ float shared_carry;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;

    const ClaimedTile claimed = claim_tile(ws, layout, tiles_per_seq, num_tiles, shared_claim);
    const long long tile = claimed.tile;
    const unsigned generation = claimed.generation;
    const long long seq = tile / tiles_per_seq;
    const long long chunk = tile - seq * tiles_per_seq;
    const TileSteps<TILE> steps(claimed, chunk, layout, a, b, out);
    const int valid = steps.valid;
    const float* a_tile = steps.a;
    const float* b_tile = steps.b;
    float* out_tile = steps.out;
#if RTSCAN_REREAD_HINTS
    const word64 keep = l2_evict_last_policy();     // read again after the look-back
    const word64 stream = l2_evict_first_policy();  // read for the last time, or written
#endif

    const int warp_first = warp_span_start<ITEMS>(int(warp));
    Affine<float> held[REGISTER_CHUNKS > 0 ? REGISTER_CHUNKS : 1][VEC];
#pragma unroll
    for (int c = 0; c < REGISTER_CHUNKS; ++c) {
#if RTSCAN_REREAD_HINTS
        load_steps_with_policy<VEC>(a_tile, b_tile, layout.in_time_stride, first_step<VEC>(warp_first, c, int(lane)),
                                    valid, stream, held[c]);
#else
        load_steps<VEC>(a_tile, b_tile, layout.in_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                        held[c]);
#endif
    }

    // Chunk c's maps: from registers, or read from global memory (`again`: after the look-back).
    auto chunk_maps = [&](int c, bool again, Affine<float> (&maps)[VEC]) {
        if (c < REGISTER_CHUNKS) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) maps[v] = held[c < REGISTER_CHUNKS ? c : 0][v];
        } else {
#if RTSCAN_REREAD_HINTS
            load_steps_with_policy<VEC>(a_tile, b_tile, layout.in_time_stride,
                                        first_step<VEC>(warp_first, c, int(lane)), valid, again ? stream : keep, maps);
#else
            load_steps<VEC>(a_tile, b_tile, layout.in_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                            maps);
#endif
        }
    };
    auto chunk_prefix = [&](const Affine<float> (&maps)[VEC], Affine<float>& warp_running) {
        Affine<float> lane_map = affine_identity<float>();
#pragma unroll
        for (int v = 0; v < VEC; ++v) lane_map = compose(maps[v], lane_map);
        const Affine<float> inclusive = warp_inclusive_scan(lane_map);
        const Affine<float> prefix = compose(exclusive_from_inclusive(inclusive), warp_running);
        warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
        return prefix;
    };

    constexpr bool KEEP_PREFIXES = false;  // registers are what a waiting block must not hold
    Affine<float> lane_prefix[KEEP_PREFIXES ? CHUNKS : 1];
    Affine<float> warp_running = affine_identity<float>();
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        Affine<float> maps[VEC];
        chunk_maps(c, false, maps);
        const Affine<float> prefix = chunk_prefix(maps, warp_running);
        if (KEEP_PREFIXES) lane_prefix[KEEP_PREFIXES ? c : 0] = prefix;
    }
    if (lane == 0) shared_warp_prefix[warp] = warp_running;
    __syncthreads();

    if (warp == 0) {
        const Affine<float> warp_map = lane < WARPS ? shared_warp_prefix[lane] : affine_identity<float>();
        const Affine<float> warps_inclusive = warp_inclusive_scan(warp_map);
        const Affine<float> tile_map = shuffle_map(warps_inclusive, WARPS - 1);
        const Affine<float> warps_exclusive = exclusive_from_inclusive(warps_inclusive);
        SegmentPrefix segment_held;
        const float carry = tile_carry<LOOKBACK_DEPTH, WALK_LANES, SEGMENT>(ws, h0, tile, seq, chunk, tiles_per_seq,
                                                                            generation, tile_map, segment_held);
        if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;
        if (lane == 0) shared_carry = carry;
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
    }
    __syncthreads();

    const float warp_start_state = apply(shared_warp_prefix[warp], shared_carry);
    Affine<float> again_running = affine_identity<float>();
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        Affine<float> maps[VEC];
        chunk_maps(c, true, maps);
        const Affine<float> prefix =
            KEEP_PREFIXES ? lane_prefix[KEEP_PREFIXES ? c : 0] : chunk_prefix(maps, again_running);
        float state = apply(prefix, warp_start_state);
        float states[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[v], state);
#if RTSCAN_REREAD_HINTS
        store_steps_with_policy<VEC>(out_tile, layout.out_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                                     stream, states);
#else
        store_steps<VEC>(out_tile, layout.out_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid, states);
#endif
    }
}

}  // namespace rtscan
