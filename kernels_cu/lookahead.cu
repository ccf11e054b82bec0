// Single-pass look-ahead scan: each block reduces one tile and scans another, LAG tickets older,
// so that no block waits for its predecessors' maps, and the second read of a tile hits L2.
//
// Why. lookback.cu's blocks hold their tile through the look-back, and the waits line the blocks
// up in waves that leave the memory idle (profiling/NOTES.md, items 8, 16 and 30). Here block
// `ticket` first reads tile `ticket` from DRAM, computes its map (the composition of its steps)
// and publishes it; then it reads tile `ticket - LAG` again, which LAG tickets earlier another
// block read, so it is in L2, and by then every earlier tile's map is out: its carry is one L2
// round trip, issued while its steps are on their way. DRAM sees each step read once and written
// once; L2 serves the second read. The cache hints (l2_policy.cuh) keep the lines that are yet to
// be read again and let the reread lines and the output go first. LAG * TILE * 8 bytes wait in L2.
//
// Rows of one tile (one tile per sequence) need no maps: there LAG is 0 and nothing is reduced.
//
// Layout. Lane `lane` of warp `warp` owns, in each of the CHUNKS chunks of its warp's span, RUN
// consecutive steps (first_step<RUN>, indexing.cuh), read as RUN / VEC loads of VEC steps. A run
// of 8 or 16 steps is one serial composition per lane and one warp scan per chunk; the lanes'
// loads of a run share 32-byte sectors, which L1 keeps between them.
//
// The carries are tile_carry's (tile_state.cuh: publish_segment_end, lookahead_carry): the same
// maps, warp scans and fmas, so the output is bitwise the same run to run.
//
// Template parameters (chosen per architecture in rtscan/tuning.py):
//   BLOCK_THREADS  threads, a multiple of 32, at most 1024
//   ITEMS          steps per thread, a multiple of RUN
//   VEC            steps per load: 4 = 16 bytes, which needs unit time stride and 16-byte aligned
//                  sequences; 1 = any stride, including negative
//   RUN            consecutive steps per lane per chunk, a multiple of VEC
//   MIN_BLOCKS     blocks per SM the register allocation must allow (__launch_bounds__)
//   LOOKBACK_DEPTH segments per lane in one look-back round
//   LAG            tickets between reducing a tile and scanning it
#include "affine.cuh"
#include "indexing.cuh"
#include "l2_policy.cuh"
#include "seq_layout.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

// A tile of the launch and where its sequence starts; every thread computes its own copy.
__device__ __forceinline__ ClaimedTile locate_tile(const SeqLayout& layout, long long tile, unsigned generation,
                                                   long long tiles_per_seq) {
    ClaimedTile located{tile, generation, 0, 0};
    sequence_origins(layout, tile / tiles_per_seq, located.in_offset, located.out_offset);
    return located;
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int RUN, int MIN_BLOCKS, int LOOKBACK_DEPTH, int LAG>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
lookahead_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
               const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
               long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(RUN % VEC == 0 && ITEMS % RUN == 0, "whole loads per run, whole runs per thread");
    static_assert(LAG >= 0, "a tile is scanned after it is reduced");
    constexpr int WARPS = BLOCK_THREADS / 32;
    constexpr int CHUNKS = ITEMS / RUN;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");

    __shared__ long long shared_ticket;
    __shared__ unsigned shared_generation;
    __shared__ Affine<float> shared_warp_map[WARPS];
    __shared__ float shared_carry;

    const int lane = int(threadIdx.x & 31);
    const int warp = int(threadIdx.x >> 5);
    // Rows of one tile are scanned at once: nothing waits for their maps.
    const long long lag = tiles_per_seq > 1 ? LAG : 0;
    const long long tickets = num_tiles + lag;
    if (threadIdx.x == 0) {
        long long ticket;
        unsigned generation;
        draw_ticket(ws, tickets, ticket, generation);
        shared_ticket = ticket;
        shared_generation = generation;
    }
    __syncthreads();
    const long long ticket = shared_ticket;
    const unsigned generation = shared_generation;

    const int warp_first = warp_span_start<ITEMS>(warp);
    Affine<float> steps[CHUNKS][RUN];
    auto load_tile = [&](const TileSteps<TILE>& tile, l2_policy policy) {
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
            for (int piece = 0; piece < RUN / VEC; ++piece) {
                Affine<float> maps[VEC];
                load_steps_hinted<VEC>(tile.a, tile.b, layout.in_time_stride,
                                       first_step<RUN>(warp_first, c, lane) + piece * VEC, tile.valid, policy, maps);
#pragma unroll
                for (int v = 0; v < VEC; ++v) steps[c][piece * VEC + v] = maps[v];
            }
    };
    auto run_map = [&](int c) {  // the lane's run in chunk c, composed serially
        Affine<float> map = affine_identity<float>();
#pragma unroll
        for (int v = 0; v < RUN; ++v) map = compose(steps[c][v], map);
        return map;
    };
    // Warp 0 composes the warp maps in shared_warp_map; returns the tile's map and leaves each
    // warp's exclusive prefix in shared_warp_map.
    auto scan_warp_maps = [&]() {
        const Affine<float> warp_map = lane < WARPS ? shared_warp_map[lane] : affine_identity<float>();
        const Affine<float> inclusive = warp_inclusive_scan(warp_map);
        const Affine<float> exclusive = exclusive_from_inclusive(inclusive);
        if (lane < WARPS) shared_warp_map[lane] = exclusive;
        return shuffle_map(inclusive, WARPS - 1);
    };

    // Reduce tile `ticket`: its map, published at once for the scans LAG tickets later.
    const bool reduces = tiles_per_seq > 1 && ticket < num_tiles;  // block-uniform
    const long long reduced_seq = ticket / tiles_per_seq;
    const long long reduced_chunk = ticket - reduced_seq * tiles_per_seq;
    Affine<float> reduced_map = affine_identity<float>();  // on warp 0
    if (reduces) {
        load_tile(TileSteps<TILE>(locate_tile(layout, ticket, generation, tiles_per_seq), reduced_chunk, layout, a, b,
                                  out),
                  l2_evict_last());
        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c)
            warp_running = compose(shuffle_map(warp_inclusive_scan(run_map(c)), WARP_SIZE - 1), warp_running);
        if (lane == 0) shared_warp_map[warp] = warp_running;
        __syncthreads();
        if (warp == 0) {
            reduced_map = scan_warp_maps();
            // Every tile's map, the last of a sequence's too: its scan awaits it before writing h
            // (lookahead_carry), and the fence puts this block's reads of the steps before that.
            perturb(ticket, 2);
            if (lane == 0) {
                fence_acq_rel_gpu();
                publish_aggregate(ws.tiles(), ticket, generation, reduced_map);
            }
        }
        __syncthreads();  // shared_warp_map is the scan's next
    }

    // Scan tile `ticket - lag`: its steps again (from L2 when lag > 0), its carry from published
    // maps, then h.
    const long long scanned = ticket - lag;
    if (scanned >= 0 && scanned < num_tiles) {  // block-uniform
        const long long seq = scanned / tiles_per_seq;
        const long long chunk = scanned - seq * tiles_per_seq;
        const TileSteps<TILE> tile(locate_tile(layout, scanned, generation, tiles_per_seq), chunk, layout, a, b, out);
        load_tile(tile, l2_evict_first());
        float carry = 0.0f;  // on lane 0 of warp 0; its reads go out while the steps are on their way
        if (warp == 0)
            carry = tiles_per_seq > 1 ? lookahead_carry<LOOKBACK_DEPTH>(ws, h0, scanned, seq, chunk, tiles_per_seq,
                                                                         generation)
                                      : (h0 != nullptr ? h0[seq] : 0.0f);
        Affine<float> lane_prefix[CHUNKS];  // from the warp span's start to just before the lane's run
        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            const Affine<float> inclusive = warp_inclusive_scan(run_map(c));
            lane_prefix[c] = compose(exclusive_from_inclusive(inclusive), warp_running);
            warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
        }
        if (lane == 0) shared_warp_map[warp] = warp_running;
        __syncthreads();
        if (warp == 0) {
            scan_warp_maps();
            if (lane == 0) shared_carry = carry;
        }
        __syncthreads();
        // Across lanes and warps the maps are composed products of a's, not the sequential order:
        // there float32 rounding, overflow and Inf * 0 can differ from the reference.
        const float warp_start_state = apply(shared_warp_map[warp], shared_carry);
        const l2_policy streaming = l2_evict_first();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            float state = apply(lane_prefix[c], warp_start_state);
#pragma unroll
            for (int piece = 0; piece < RUN / VEC; ++piece) {
                float states[VEC];
#pragma unroll
                for (int v = 0; v < VEC; ++v) states[v] = state = apply(steps[c][piece * VEC + v], state);
                store_steps_hinted<VEC>(tile.out, layout.out_time_stride,
                                        first_step<RUN>(warp_first, c, lane) + piece * VEC, tile.valid, streaming,
                                        states);
            }
        }
    }

    // Last, off every other block's path: a segment's map, from its mates' (earlier tickets), then
    // this block's part in the wrapping launch (after all of its descriptor reads and writes).
    if (warp == 0) {
        if (reduces)
            publish_segment_end(ws, ticket, reduced_seq, reduced_chunk, tiles_per_seq, generation, reduced_map);
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, tickets);
    }
}

}  // namespace rtscan
