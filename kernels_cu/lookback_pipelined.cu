// Single-pass decoupled look-back scan with persistent blocks and three cp.async stages: a block
// publishes the aggregate of its next tile before it waits for the carry of its current one, and
// the copies of the tile after next are in flight through both.
//
// Why: in lookback.cu a block holds one tile from its first load to its last store and a new
// tile's loads start only when a block exits. When the finished frontier stalls, every resident
// block waits in its look-back at once, nothing loads, and the blocks then move in convoys
// (profiling/NOTES.md, items 8-16). A persistent block that only prefetched (P28's first form:
// publish, wait, scan, then the next tile) ran at 0.42 of copy: each tile's aggregate then waited
// for its block's previous look-back, so every wait delayed the whole grid. Here a tile's aggregate
// goes out as soon as its copies have landed and the block's previous scan is done, as in
// lookback.cu, and the wait for a carry overlaps the next tile's first pass.
//
// Tiles, chunks, lanes and the look-back are lookback.cu's; every step is staged (no register-held
// steps), so the copies in flight cost no registers. Block k of G scans tiles k, k + G, k + 2G, ...
// (the i-th of them, T_i, in stage i mod 3). Per iteration i, with T_i's first pass done and its
// aggregate published:
//   1. issue T_{i+2}'s copies (into the stage T_{i-1} has just left);
//   2. wait for T_{i+1}'s copies, run its first pass, publish its aggregate;
//   3. warp 0 resolves T_i's carry (segment mates, look-back over segments);
//   4. T_i's second pass writes h.
// Each lane copies its own slots and reads back only those, so reusing a stage needs no barrier.
//
// Forward progress needs every block resident at once (the host launches cooperatively, with at
// most the blocks the device holds): a block waits only for tiles below the one it resolves, and
// step 2 never waits on another block, so the block holding the lowest unresolved tile always
// progresses. Tiles are assigned by block index, not drawn; each block draws one ticket only to
// read the launch's generation (draw_ticket resets the ticket word at the G-th draw), and in the
// launch that wraps the generation each block counts itself finished once, at its end.
#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "staging.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

__device__ __forceinline__ void commit_staged_group() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Wait for every copy group but the newest: the next tile's copies, not those of the tile after.
__device__ __forceinline__ void wait_for_all_but_newest_group() {
    asm volatile("cp.async.wait_group 1;" ::: "memory");
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int REGISTER_ITEMS, int WALK_LANES,
          int SEGMENT>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
lookback_pipelined_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                        const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
                        long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0, "whole chunks per thread");
    static_assert(REGISTER_ITEMS == 0, "every step staged: copies in flight must not need registers");
    constexpr int STAGES = 3;
    constexpr int WARPS = BLOCK_THREADS / 32;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");
    static_assert(WALK_LANES == 1 || WALK_LANES == WARP_SIZE, "a serial or a warp-wide walk");
    static_assert(1 <= SEGMENT && SEGMENT <= WARP_SIZE, "one lane per tile of a segment");
    static_assert(STAGES * 2 * TILE * sizeof(float) <= MAX_DYNAMIC_SHARED_BYTES, "three stages of a and b fit");

    // Three stages, each a then b of one tile: the launch passes 3 * 2 * TILE * 4 bytes.
    extern __shared__ float4 staged_storage[];
    __shared__ Affine<float> shared_warp_map[WARPS];          // a first pass's warp aggregates
    __shared__ Affine<float> shared_warp_prefix[2][WARPS];    // per tile parity: map before each warp
    __shared__ float shared_carry;
    __shared__ unsigned shared_generation;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;
    const int warp_first = warp_span_start<ITEMS>(int(warp));
    const long long grid = gridDim.x;
    const long long my_tiles = (num_tiles - blockIdx.x + grid - 1) / grid;  // at least 1: grid <= num_tiles
    auto tile_of = [&](long long i) { return blockIdx.x + i * grid; };
    auto stage_a = [&](long long i) { return reinterpret_cast<float*>(staged_storage) + int(i % STAGES) * 2 * TILE; };
    auto stage_b = [&](long long i) { return stage_a(i) + TILE; };
    auto steps_of = [&](long long tile) {
        const long long seq = tile / tiles_per_seq;
        ClaimedTile where = {tile, 0, 0, 0};
        sequence_origins(layout, seq, where.in_offset, where.out_offset);
        return TileSteps<TILE>(where, tile - seq * tiles_per_seq, layout, a, b, out);
    };
    // One group per tile, empty past the block's last, so that wait_group counts stay uniform.
    auto issue_copies = [&](long long i) {
        if (i < my_tiles) {
            const TileSteps<TILE> steps = steps_of(tile_of(i));
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int first = first_step<VEC>(warp_first, c, int(lane));
                stage_steps<VEC>(stage_a(i) + first, steps.a, layout.in_time_stride, first, steps.valid);
                stage_steps<VEC>(stage_b(i) + first, steps.b, layout.in_time_stride, first, steps.valid);
            }
        }
        commit_staged_group();
    };
    auto chunk_maps = [&](long long i, int valid, int c, Affine<float> (&maps)[VEC]) {
        const int first = first_step<VEC>(warp_first, c, int(lane));
        read_staged<VEC>(stage_a(i) + first, stage_b(i) + first, first, valid, maps);
    };

    if (threadIdx.x == 0) {
        long long unused_ticket;
        draw_ticket(ws, grid, unused_ticket, shared_generation);
    }
    issue_copies(0);
    issue_copies(1);

    // The first pass of T_i, ending with its aggregate published: each chunk's lane prefix within
    // the warp span (kept for the second pass), the warp prefixes in shared_warp_prefix[i & 1], and
    // on warp 0 the tile's map (returned). Holds two block barriers.
    auto first_pass = [&](long long i, Affine<float> (&lane_prefix)[CHUNKS]) {
        wait_for_all_but_newest_group();
        const long long tile = tile_of(i);
        const int valid = int(min((long long)TILE, layout.length - (tile % tiles_per_seq) * TILE));
        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(i, valid, c, maps);
            Affine<float> lane_map = affine_identity<float>();
#pragma unroll
            for (int v = 0; v < VEC; ++v) lane_map = compose(maps[v], lane_map);
            const Affine<float> inclusive = warp_inclusive_scan(lane_map);
            lane_prefix[c] = compose(exclusive_from_inclusive(inclusive), warp_running);
            warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
        }
        if (lane == 0) shared_warp_map[warp] = warp_running;
        __syncthreads();
        Affine<float> tile_map = affine_identity<float>();
        if (warp == 0) {
            const Affine<float> warp_map = lane < WARPS ? shared_warp_map[lane] : affine_identity<float>();
            const Affine<float> warps_inclusive = warp_inclusive_scan(warp_map);
            tile_map = shuffle_map(warps_inclusive, WARPS - 1);
            // Every lane shuffles (a full-mask shuffle that some lanes skip never completes).
            const Affine<float> warps_exclusive = exclusive_from_inclusive(warps_inclusive);
            if (lane < WARPS) shared_warp_prefix[i & 1][lane] = warps_exclusive;
            publish_tile_aggregate<SEGMENT>(ws, tile, tile % tiles_per_seq, tiles_per_seq, shared_generation,
                                            tile_map);
        }
        __syncthreads();  // shared_warp_map is free again, shared_warp_prefix[i & 1] written
        return tile_map;
    };

    __syncthreads();  // shared_generation
    const unsigned generation = shared_generation;
    Affine<float> lane_prefix[CHUNKS];
    Affine<float> tile_map = first_pass(0, lane_prefix);
    for (long long i = 0; i < my_tiles; ++i) {
        issue_copies(i + 2);
        Affine<float> next_prefix[CHUNKS];
        Affine<float> next_map = affine_identity<float>();
        if (i + 1 < my_tiles) next_map = first_pass(i + 1, next_prefix);

        const long long tile = tile_of(i);
        const long long seq = tile / tiles_per_seq;
        const long long chunk = tile - seq * tiles_per_seq;
        if (warp == 0) {
            SegmentPrefix segment_held;
            const float carry = resolve_tile_carry<LOOKBACK_DEPTH, WALK_LANES, SEGMENT>(
                ws, h0, tile, seq, chunk, tiles_per_seq, generation, tile_map, segment_held);
            if (lane == 0) shared_carry = carry;
        }
        __syncthreads();

        const TileSteps<TILE> steps = steps_of(tile);
        const float warp_start_state = apply(shared_warp_prefix[i & 1][warp], shared_carry);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(i, steps.valid, c, maps);
            float state = apply(lane_prefix[c], warp_start_state);
            float states[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[v], state);
            store_steps<VEC>(steps.out, layout.out_time_stride, first_step<VEC>(warp_first, c, int(lane)),
                             steps.valid, states);
        }
        __syncthreads();  // shared_carry and shared_warp_prefix[i & 1] are free for T_{i+1} and T_{i+2}
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) lane_prefix[c] = next_prefix[c];
        tile_map = next_map;
    }

    if (warp == 0 && generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, grid);
}

}  // namespace rtscan
