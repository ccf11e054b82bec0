// Single-pass decoupled look-back scan (Merrill & Garland, NVR-2016-002) of S independent
// sequences, several items per thread in registers, warp-parallel look-back.
//
// One block scans one tile of TILE = BLOCK_THREADS * ITEMS consecutive steps of one sequence.
// Each warp owns a contiguous span of 32 * ITEMS steps and walks it in chunks of 32 * VEC: lane l
// holds steps [chunk * 32 * VEC + l * VEC, +VEC), so a chunk's loads are one coalesced sweep
// (16-byte vectors when VEC = 4) and no shared-memory transpose is needed.
//
// Template parameters (chosen per architecture in rtscan/tuning.py):
//   BLOCK_THREADS  threads per block, a multiple of 32, at most 1024
//   ITEMS          steps per thread, a multiple of VEC
//   VEC            steps per lane per chunk: 4 = float4 loads and stores, which needs unit time
//                  stride and 16-byte aligned sequences; 1 = any stride, including negative
#include "affine.cuh"
#include "seq_layout.cuh"
#include "tile_state.cuh"

namespace rtscan {

// Inclusive scan of one map per lane across the warp, lane 0 first; fixed shuffle order, so the
// result does not depend on timing.
__device__ __forceinline__ Affine<float> warp_inclusive_scan(Affine<float> map) {
    const unsigned lane = threadIdx.x & 31;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const Affine<float> earlier = {__shfl_up_sync(0xffffffffu, map.a, offset),
                                       __shfl_up_sync(0xffffffffu, map.b, offset)};
        if (lane >= unsigned(offset)) map = compose(map, earlier);
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

template <int VEC>
__device__ __forceinline__ void load_steps(const float* __restrict__ source, long long time_stride, long long first,
                                           long long valid, float (&values)[VEC], float fill) {
    if (VEC == 4 && first + VEC <= valid) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(source + first));
        values[0] = v.x; values[1] = v.y; values[2] = v.z; values[3] = v.w;
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            values[v] = first + v < valid ? __ldg(source + (first + v) * time_stride) : fill;
    }
}

template <int VEC>
__device__ __forceinline__ void store_steps(float* __restrict__ target, long long time_stride, long long first,
                                            long long valid, const float (&values)[VEC]) {
    if (VEC == 4 && first + VEC <= valid) {
        *reinterpret_cast<float4*>(target + first) = make_float4(values[0], values[1], values[2], values[3]);
    } else {
#pragma unroll
        for (int v = 0; v < VEC; ++v)
            if (first + v < valid) target[(first + v) * time_stride] = values[v];
    }
}

template <int BLOCK_THREADS, int ITEMS, int VEC>
__global__ void __launch_bounds__(BLOCK_THREADS)
lookback_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
              const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
              long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0, "whole chunks per thread");
    constexpr int WARPS = BLOCK_THREADS / 32;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr long long TILE = (long long)BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");

    __shared__ long long shared_tile, shared_in_offset, shared_out_offset;
    __shared__ unsigned shared_generation;
    __shared__ Affine<float> shared_warp_prefix[WARPS];
    __shared__ float shared_carry;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;

    if (threadIdx.x == 0) {
        shared_generation = load_relaxed_gpu(ws.counters + 2);
        const long long tile = fetch_add_relaxed_gpu(ws.counters + 0, 1u);
        long long in_offset, out_offset;
        sequence_origins(layout, tile / tiles_per_seq, in_offset, out_offset);
        shared_tile = tile;
        shared_in_offset = in_offset;
        shared_out_offset = out_offset;
    }
    __syncthreads();
    const long long tile = shared_tile;
    const unsigned generation = shared_generation;
    const long long seq = tile / tiles_per_seq;
    const long long chunk = tile - seq * tiles_per_seq;
    const long long tile_first = chunk * TILE;
    const long long valid = min(TILE, layout.length - tile_first);  // steps of this tile that exist
    const float* a_tile = a + shared_in_offset + tile_first * layout.in_time_stride;
    const float* b_tile = b + shared_in_offset + tile_first * layout.in_time_stride;
    float* out_tile = out + shared_out_offset + tile_first * layout.out_time_stride;

    // Load every step first so that all loads are in flight before the first use. Missing steps
    // past the end of the sequence are the identity map and change nothing.
    const long long warp_first = (long long)warp * 32 * ITEMS;
    float a_items[CHUNKS][VEC], b_items[CHUNKS][VEC];
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        const long long first = warp_first + c * 32 * VEC + lane * VEC;
        load_steps<VEC>(a_tile, layout.in_time_stride, first, valid, a_items[c], 1.0f);
        load_steps<VEC>(b_tile, layout.in_time_stride, first, valid, b_items[c], 0.0f);
    }

    // Per chunk: this lane's VEC steps composed serially, scanned across the warp; lane_prefix[c]
    // is the map from the warp span's start to just before this lane's first step of chunk c.
    Affine<float> lane_prefix[CHUNKS];
    Affine<float> warp_running = affine_identity<float>();
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        Affine<float> lane_map = affine_identity<float>();
#pragma unroll
        for (int v = 0; v < VEC; ++v) lane_map = compose(Affine<float>{a_items[c][v], b_items[c][v]}, lane_map);
        const Affine<float> inclusive = warp_inclusive_scan(lane_map);
        lane_prefix[c] = compose(exclusive_from_inclusive(inclusive), warp_running);
        warp_running = compose(shuffle_map(inclusive, 31), warp_running);
    }
    if (lane == 0) shared_warp_prefix[warp] = warp_running;
    __syncthreads();

    if (warp == 0) {
        // Scan the warp aggregates; lane w ends with the map of warps 0..w.
        const Affine<float> warp_map = lane < WARPS ? shared_warp_prefix[lane] : affine_identity<float>();
        const Affine<float> warps_inclusive = warp_inclusive_scan(warp_map);
        const Affine<float> tile_map = shuffle_map(warps_inclusive, WARPS - 1);
        const Affine<float> warps_exclusive = exclusive_from_inclusive(warps_inclusive);
        const bool has_successor = chunk + 1 < tiles_per_seq;

        float carry;
        if (chunk == 0) {
            carry = h0 != nullptr ? h0[seq] : 0.0f;
        } else {
            if (lane == 0 && has_successor) publish_aggregate(ws, tile, generation, tile_map);
            carry = lookback_carry(ws, tile, chunk, generation);
        }
        if (lane == 0 && has_successor) publish_inclusive(ws, tile, generation, apply(tile_map, carry));
        __syncwarp();  // every lane's look-back reads come before this block reports finished

        if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;
        if (lane == 0) shared_carry = carry;

        unsigned next_generation = 0;
        const bool last = lane == 0 && finish_tile(ws, num_tiles, generation, next_generation);
        if (__shfl_sync(0xffffffffu, last, 0)) {
            next_generation = __shfl_sync(0xffffffffu, next_generation, 0);
            if (next_generation == 0) clear_descriptors(ws);
            __syncwarp();
            if (lane == 0) reset_counters(ws, next_generation);
        }
    }
    __syncthreads();

    // The state at the start of this warp's span, then each lane's steps one fma at a time: the
    // same recurrence, in the same order, as the float64 reference runs it.
    const float warp_start_state = apply(shared_warp_prefix[warp], shared_carry);
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        float state = apply(lane_prefix[c], warp_start_state);
#pragma unroll
        for (int v = 0; v < VEC; ++v) {
            state = apply(Affine<float>{a_items[c][v], b_items[c][v]}, state);
            b_items[c][v] = state;
        }
        const long long first = warp_first + c * 32 * VEC + lane * VEC;
        store_steps<VEC>(out_tile, layout.out_time_stride, first, valid, b_items[c]);
    }
}

}  // namespace rtscan
