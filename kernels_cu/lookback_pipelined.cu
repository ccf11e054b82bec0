// Single-pass decoupled look-back scan with persistent, double-buffered blocks: while a block
// scans one tile (its look-back wait included), the cp.async copies of its next tile are already
// in flight into a second shared-memory stage.
//
// Why: in lookback.cu a block holds one tile from its first load to its last store, and a new
// tile's loads start only when a block exits. When the finished frontier stalls, every resident
// block ends up waiting in its look-back at once, nothing is loading, and the blocks then move in
// convoys (profiling/NOTES.md, items 8-16). Here a waiting block keeps one tile of loads in
// flight, so the memory system stays busy through the waits.
//
// Tiles, chunks, lanes and the look-back are lookback.cu's (REGISTER_ITEMS must be 0: every step
// is staged, so the next tile's copies cost no registers). The grid is at most what fits on the
// GPU at once (rtscan/_kernels.py), and each block walks tiles in ticket order:
//   before the loop: draw tickets t0 and t1, issue the copies of both (one cp.async group each);
//   per tile: thread 0 draws the ticket after next; wait for this tile's group only; scan it
//   (lookback.cu's two passes and look-back); publish the drawn ticket and issue its copies into
//   the stage just scanned.
// Each lane copies its own slots and reads back only those, so reusing a stage needs no barrier.
//
// Forward progress: a block waits only for tiles with smaller tickets than the one it scans. A
// block's prefetched ticket is larger than its current one, so every ticket below the smallest
// current tile of all blocks is finished, and the block holding that smallest tile never waits
// on unfinished work. This holds whichever blocks are resident, since a block draws only while
// it runs.
//
// Tickets: each block draws until it receives one at or past num_tiles, then stops, so one launch
// draws exactly num_tiles + gridDim.x tickets; draw_ticket resets the ticket word at the last of
// them (tile_state.cuh). In the launch that wraps the generation, each block counts itself
// finished once, after its last draw and its last look-back (finish_wrapping_launch over blocks).
#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "staging.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

// Thread 0's draw of one ticket, located in the input and output; a ticket at or past num_tiles
// means the block has no more work (its offsets are then unused).
__device__ __forceinline__ ClaimedTile draw_tile(const TileWorkspace& ws, const SeqLayout& layout,
                                                 long long tiles_per_seq, long long num_tiles, long long draws) {
    ClaimedTile claimed = {0, 0, 0, 0};
    draw_ticket(ws, draws, claimed.tile, claimed.generation);
    if (claimed.tile < num_tiles)
        sequence_origins(layout, claimed.tile / tiles_per_seq, claimed.in_offset, claimed.out_offset);
    return claimed;
}

__device__ __forceinline__ void commit_staged_group() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Wait for every copy group but the newest: this tile's copies, not the next tile's.
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
    static_assert(REGISTER_ITEMS == 0, "every step staged: the next tile's copies must not need registers");
    constexpr int WARPS = BLOCK_THREADS / 32;
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");
    static_assert(WALK_LANES == 1 || WALK_LANES == WARP_SIZE, "a serial or a warp-wide walk");
    static_assert(1 <= SEGMENT && SEGMENT <= WARP_SIZE, "one lane per tile of a segment");
    static_assert(4 * TILE * sizeof(float) <= MAX_DYNAMIC_SHARED_BYTES, "two stages of a and b fit in shared memory");

    // Two stages, each a then b of one tile: the launch passes 4 * TILE * 4 bytes.
    extern __shared__ float4 staged_storage[];
    __shared__ ClaimedTile shared_claims[2];  // the tile of each stage
    __shared__ Affine<float> shared_warp_prefix[WARPS];
    __shared__ float shared_carry;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;
    const long long draws = num_tiles + gridDim.x;  // one ticket past the last tile per block
    const int warp_first = warp_span_start<ITEMS>(int(warp));
    auto stage_a = [&](int stage) { return reinterpret_cast<float*>(staged_storage) + stage * 2 * TILE; };
    auto stage_b = [&](int stage) { return stage_a(stage) + TILE; };
    auto tile_steps = [&](const ClaimedTile& claimed) {
        return TileSteps<TILE>(claimed, claimed.tile % tiles_per_seq, layout, a, b, out);
    };
    // One group per stage fill, empty when there is no tile, so that wait_group counts stay uniform.
    auto issue_copies = [&](int stage, const ClaimedTile& claimed) {
        if (claimed.tile < num_tiles) {
            const TileSteps<TILE> steps = tile_steps(claimed);
#pragma unroll
            for (int c = 0; c < CHUNKS; ++c) {
                const int first = first_step<VEC>(warp_first, c, int(lane));
                stage_steps<VEC>(stage_a(stage) + first, steps.a, layout.in_time_stride, first, steps.valid);
                stage_steps<VEC>(stage_b(stage) + first, steps.b, layout.in_time_stride, first, steps.valid);
            }
        }
        commit_staged_group();
    };

    const ClaimedTile no_tile = {num_tiles, 0, 0, 0};
    if (threadIdx.x == 0) {
        shared_claims[0] = draw_tile(ws, layout, tiles_per_seq, num_tiles, draws);
        shared_claims[1] = shared_claims[0].tile < num_tiles
                               ? draw_tile(ws, layout, tiles_per_seq, num_tiles, draws)
                               : no_tile;
    }
    __syncthreads();
    const unsigned generation = shared_claims[0].generation;
    issue_copies(0, shared_claims[0]);
    issue_copies(1, shared_claims[1]);

    for (int stage = 0;; stage ^= 1) {
        const ClaimedTile here = shared_claims[stage];
        if (here.tile >= num_tiles) break;  // block-uniform: every thread read the same word
        const bool more = shared_claims[stage ^ 1].tile < num_tiles;
        // Thread 0 draws the ticket after next now; its result is first used after this tile's
        // scan, so the atomic's round trip overlaps the scan.
        ClaimedTile after_next = no_tile;
        if (threadIdx.x == 0 && more) after_next = draw_tile(ws, layout, tiles_per_seq, num_tiles, draws);
        wait_for_all_but_newest_group();

        const long long tile = here.tile;
        const long long seq = tile / tiles_per_seq;
        const long long chunk = tile - seq * tiles_per_seq;
        const TileSteps<TILE> steps = tile_steps(here);
        const int valid = steps.valid;
        const float* staged_a = stage_a(stage);
        const float* staged_b = stage_b(stage);

        auto chunk_maps = [&](int c, Affine<float> (&maps)[VEC]) {
            const int first = first_step<VEC>(warp_first, c, int(lane));
            read_staged<VEC>(staged_a + first, staged_b + first, first, valid, maps);
        };
        // lookback.cu's first pass: each chunk's lane prefix within the warp span, kept for the
        // second pass, and the warp's aggregate.
        Affine<float> lane_prefix[CHUNKS];
        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            Affine<float> lane_map = affine_identity<float>();
#pragma unroll
            for (int v = 0; v < VEC; ++v) lane_map = compose(maps[v], lane_map);
            const Affine<float> inclusive = warp_inclusive_scan(lane_map);
            lane_prefix[c] = compose(exclusive_from_inclusive(inclusive), warp_running);
            warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
        }
        if (lane == 0) shared_warp_prefix[warp] = warp_running;
        __syncthreads();

        if (warp == 0) {
            const Affine<float> warp_map = lane < WARPS ? shared_warp_prefix[lane] : affine_identity<float>();
            const Affine<float> warps_inclusive = warp_inclusive_scan(warp_map);
            const Affine<float> tile_map = shuffle_map(warps_inclusive, WARPS - 1);
            const Affine<float> warps_exclusive = exclusive_from_inclusive(warps_inclusive);
            SegmentPrefix segment_held;
            const float carry = tile_carry<LOOKBACK_DEPTH, WALK_LANES, SEGMENT>(
                ws, h0, tile, seq, chunk, tiles_per_seq, generation, tile_map, segment_held);
            if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;
            if (lane == 0) shared_carry = carry;
        }
        __syncthreads();

        const float warp_start_state = apply(shared_warp_prefix[warp], shared_carry);
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            float state = apply(lane_prefix[c], warp_start_state);
            float states[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[v], state);
            store_steps<VEC>(steps.out, layout.out_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                             states);
        }

        if (threadIdx.x == 0) shared_claims[stage] = after_next;
        __syncthreads();  // the drawn ticket is visible; every thread is past reading this stage's claim
        issue_copies(stage, shared_claims[stage]);
    }

    if (warp == 0 && generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, gridDim.x);
}

}  // namespace rtscan
