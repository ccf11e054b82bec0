// Single-pass decoupled look-back scan with a protocol warp: lookback.cu's kernel, except that the
// look-back is run by one extra warp that holds no steps, while the data warps use the wait to
// turn each step's map into the map from their warp span's start through that step, in place.
// Once the carry is known, a step's state is then one fma, so the block's last phase is reading
// and storing, not warp scans.
//
// Why: a tile's lifetime at 2^28 is load 5.0, local scan 2.5, wait 6.1, finish 3.2 us (NOTES item
// 24), and the finish recomputes every chunk's warp scan after the carry is known. Those scans do
// not need the carry; only the last fma does. P13 moved them into the first pass, before the
// tile's aggregate is published, and lost; here they run after it, while the block waits anyway.
//
// Template parameters as lookback.cu's, with BLOCK_THREADS the data threads: the block launches
// BLOCK_THREADS + 32 threads (the variant's extra_threads), and a tile is BLOCK_THREADS * ITEMS.
#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "staging.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

// Overwrite one lane's VEC staged maps in place (the layout read_staged reads).
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

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int REGISTER_ITEMS, int WALK_LANES,
          int SEGMENT>
__global__ void __launch_bounds__(BLOCK_THREADS + 32, MIN_BLOCKS)
lookback_split_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                    const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
                    long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS + 32 <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0 && REGISTER_ITEMS % VEC == 0, "whole chunks per thread");
    static_assert(0 <= REGISTER_ITEMS && REGISTER_ITEMS <= ITEMS, "registers hold some of a lane's chunks");
    constexpr int WARPS = BLOCK_THREADS / 32;  // data warps; warp WARPS runs the protocol
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int REGISTER_CHUNKS = REGISTER_ITEMS / VEC;
    constexpr int STAGED_ITEMS = ITEMS - REGISTER_ITEMS;
    constexpr int STAGED_TILE = BLOCK_THREADS * STAGED_ITEMS;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");
    static_assert(WALK_LANES == 1 || WALK_LANES == WARP_SIZE, "a serial or a warp-wide walk");
    static_assert(1 <= SEGMENT && SEGMENT <= WARP_SIZE, "one lane per tile of a segment");
    static_assert(2 * STAGED_TILE * sizeof(float) <= MAX_DYNAMIC_SHARED_BYTES,
                  "the staged a and b fit in shared memory");

    extern __shared__ float4 staged_storage[];
    float* staged_a = reinterpret_cast<float*>(staged_storage);
    float* staged_b = staged_a + STAGED_TILE;
    __shared__ ClaimedTile shared_claim;
    __shared__ Affine<float> shared_warp_prefix[WARPS];
    __shared__ float shared_carry;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;
    const bool protocol_warp = warp == WARPS;

    const ClaimedTile claimed = claim_tile(ws, layout, tiles_per_seq, num_tiles, shared_claim);
    const long long tile = claimed.tile;
    const unsigned generation = claimed.generation;
    const long long seq = tile / tiles_per_seq;
    const long long chunk = tile - seq * tiles_per_seq;
    const TileSteps<TILE> steps(claimed, chunk, layout, a, b, out);
    const int valid = steps.valid;

    const int data_warp = protocol_warp ? 0 : int(warp);  // the protocol warp computes no addresses
    const int warp_first = warp_span_start<ITEMS>(data_warp);
    const int staged_first = warp_span_start<STAGED_ITEMS>(data_warp);
    auto staged_slot = [&](int c) { return first_step<VEC>(staged_first, c - REGISTER_CHUNKS, int(lane)); };
    Affine<float> held[REGISTER_CHUNKS > 0 ? REGISTER_CHUNKS : 1][VEC];
    auto chunk_maps = [&](int c, Affine<float> (&maps)[VEC]) {
        if (c < REGISTER_CHUNKS) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) maps[v] = held[c < REGISTER_CHUNKS ? c : 0][v];
        } else {
            read_staged<VEC>(staged_a + staged_slot(c), staged_b + staged_slot(c),
                             first_step<VEC>(warp_first, c, int(lane)), valid, maps);
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

    if (!protocol_warp) {
#pragma unroll
        for (int c = REGISTER_CHUNKS; c < CHUNKS; ++c) {
            const int first = first_step<VEC>(warp_first, c, int(lane));
            stage_steps<VEC>(staged_a + staged_slot(c), steps.a, layout.in_time_stride, first, valid);
            stage_steps<VEC>(staged_b + staged_slot(c), steps.b, layout.in_time_stride, first, valid);
        }
#pragma unroll
        for (int c = 0; c < REGISTER_CHUNKS; ++c)
            load_steps<VEC>(steps.a, steps.b, layout.in_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                            held[c]);
        wait_for_staged_steps();

        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            chunk_prefix(maps, warp_running);
        }
        if (lane == 0) shared_warp_prefix[warp] = warp_running;
    }
    __syncthreads();

    if (protocol_warp) {
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
    } else {
        // While the protocol warp waits: each step's map becomes the map from the warp span's start
        // through that step, in place (the same scans the first pass ran, then one compose a step).
        Affine<float> again_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            Affine<float> through = chunk_prefix(maps, again_running);
#pragma unroll
            for (int v = 0; v < VEC; ++v) maps[v] = through = compose(maps[v], through);
            if (c < REGISTER_CHUNKS) {
#pragma unroll
                for (int v = 0; v < VEC; ++v) held[c < REGISTER_CHUNKS ? c : 0][v] = maps[v];
            } else {
                write_staged<VEC>(staged_a + staged_slot(c), staged_b + staged_slot(c),
                                  first_step<VEC>(warp_first, c, int(lane)), valid, maps);
            }
        }
    }
    __syncthreads();

    if (!protocol_warp) {
        const float warp_start_state = apply(shared_warp_prefix[warp], shared_carry);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            float states[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) states[v] = apply(maps[v], warp_start_state);
            store_steps<VEC>(steps.out, layout.out_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                             states);
        }
    }
}

}  // namespace rtscan
