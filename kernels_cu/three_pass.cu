// Three-pass scans of S independent sequences, without a look-back: every pass is a plain grid
// whose blocks never wait for one another, and every value is computed in one fixed order, so the
// output is bitwise identical from run to run by construction (no argument about timing needed).
// They are the baselines the single-pass look-back (lookback.cu) is measured against.
//
// Two forms, one launch per pass, all on the same stream:
//
//   three_pass (the seed write-up's multi-block version)
//     1 three_pass_tile_pairs     per tile: scan the tile from the identity; write, for every
//                                 step t, the pair (A_t, B_t) = the map from the tile's start
//                                 through t, and the tile's aggregate
//     2 three_pass_carries        per sequence: scan the tile aggregates into each tile's carry
//     3 three_pass_apply_pairs    per tile: h_t = A_t * carry + B_t (one fma)
//     float32 device traffic per step: 8 B read + 8 B written, then 8 B read + 4 B written
//
//   three_pass_reduce (reduce-then-scan)
//     1 three_pass_tile_aggregates  per tile: the aggregate only (reads a and b)
//     2 three_pass_carries          as above
//     3 three_pass_rescan           per tile: scan the tile again from its carry, write h
//     per step: 8 B read, then 8 B read + 4 B written
//
// Pass 1 and pass 3 run one block per tile of TILE = BLOCK_THREADS * ITEMS steps (its tile from the
// grid index as lookback.cu's from its ticket, seq_layout.cuh's tile_of_ticket: chunk by chunk
// across strided sequences), laid out in registers as in lookback.cu (indexing.cuh). Pass 2 runs
// one block per sequence and walks its aggregates in chunks of BLOCK_THREADS * ITEMS with a block
// scan and a running carry, so a sequence of 65536 tiles takes 16 chunks of 4096 rather than
// 65536 dependent steps. Where the intermediate values live, and the formulas that hand the carry
// on, are in three_pass_index.cuh, which the CPU mirror builds too.
//
// Every kernel takes the same arguments, so the host builds one argument list for the three
// launches; a kernel ignores what it does not need (pass 2 the steps, passes 1 and 3 h0).
//
// Template parameters (rtscan/tuning.py):
//   BLOCK_THREADS  threads per block, a multiple of 32, at most 1024
//   ITEMS          steps per thread (pass 2: aggregates per thread per chunk), a multiple of VEC
//   VEC            steps per lane per chunk: 4 = 16-byte loads and stores, which needs unit time
//                  stride and 16-byte aligned sequences; 1 = any stride, including negative. The
//                  pairs are contiguous either way; pass 2 reads aggregates one per lane (VEC 1),
//                  because a sequence's aggregates start at any word.
//   MIN_BLOCKS     blocks per SM the register allocation must allow (__launch_bounds__)
//
// Launch: passes 1 and 3: grid = num_tiles blocks; pass 2: grid = num_seqs blocks; BLOCK_THREADS
// threads; no dynamic shared memory.
#include "affine.cuh"
#include "block_scan.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "three_pass_index.cuh"
#include "tile_io.cuh"

namespace rtscan {

// Which tile the block scans and where it lives: thread 0 takes the tile from the grid index
// (tile_of_ticket) and finds its sequence's origins (a few 64-bit divisions) and shares them,
// rather than every thread dividing. Called by every thread (it holds a __syncthreads).
struct PlacedTile {
    ClaimedTile claimed;  // TileSteps' input; the generation is unused without a look-back
    long long chunk;      // the tile's place in its sequence
};

template <int TILE>
__device__ __forceinline__ TileSteps<TILE> place_tile(long long tiles_per_seq, const SeqLayout& layout,
                                                      const float* __restrict__ a, const float* __restrict__ b,
                                                      float* __restrict__ out, PlacedTile& shared, long long& tile) {
    if (threadIdx.x == 0) {
        PlacedTile placed;
        const long long chosen = tile_of_ticket(layout, blockIdx.x, tiles_per_seq);
        const long long seq = chosen / tiles_per_seq;
        placed.claimed.tile = chosen;
        placed.claimed.generation = 0;
        sequence_origins(layout, seq, placed.claimed.in_offset, placed.claimed.out_offset);
        placed.chunk = chosen - seq * tiles_per_seq;
        shared = placed;
    }
    __syncthreads();
    const PlacedTile placed = shared;
    tile = placed.claimed.tile;
    return TileSteps<TILE>(placed.claimed, placed.chunk, layout, a, b, out);
}

// Every lane's maps of the tile, all loads issued before any is used.
template <int ITEMS, int VEC, int TILE>
__device__ __forceinline__ void load_tile(const TileSteps<TILE>& steps, long long time_stride,
                                          Affine<float> (&maps)[ITEMS / VEC][VEC]) {
    const int warp_first = warp_span_start<ITEMS>(int(threadIdx.x >> 5));
#pragma unroll
    for (int c = 0; c < ITEMS / VEC; ++c)
        load_steps<VEC>(steps.a, steps.b, time_stride, first_step<VEC>(warp_first, c, int(threadIdx.x & 31)),
                        steps.valid, maps[c]);
}

template <int BLOCK_THREADS, int ITEMS, int VEC>
__device__ __forceinline__ void check_shape() {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0, "whole chunks per thread");
}

// Pass 1, both forms: the tile scanned from the identity; its aggregate, and with WRITE_PAIRS the
// map from the tile's start through each step.
template <int BLOCK_THREADS, int ITEMS, int VEC, bool WRITE_PAIRS>
__device__ __forceinline__ void scan_tile_from_identity(const float* __restrict__ a, const float* __restrict__ b,
                                                        float* __restrict__ out, const SeqLayout& layout,
                                                        const ThreePassScratch& scratch, long long tiles_per_seq) {
    check_shape<BLOCK_THREADS, ITEMS, VEC>();
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    __shared__ PlacedTile shared_place;
    __shared__ Affine<float> shared_warps[BLOCK_THREADS / 32];

    long long tile;
    const TileSteps<TILE> steps = place_tile<TILE>(tiles_per_seq, layout, a, b, out, shared_place, tile);
    Affine<float> maps[CHUNKS][VEC];
    load_tile<ITEMS, VEC>(steps, layout.in_time_stride, maps);
    Affine<float> prefix[CHUNKS];
    const Affine<float> tile_map = block_exclusive_scan<BLOCK_THREADS, CHUNKS, VEC>(maps, prefix, shared_warps);
    if (threadIdx.x == 0) {
        scratch.aggregate_a[aggregate_slot(tile)] = tile_map.a;
        scratch.aggregate_b[aggregate_slot(tile)] = tile_map.b;
    }
    if (WRITE_PAIRS) {
        float* pair_a = scratch.pair_a + pair_slot<TILE>(tile);
        float* pair_b = scratch.pair_b + pair_slot<TILE>(tile);
        const int warp_first = warp_span_start<ITEMS>(int(threadIdx.x >> 5));
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> through = prefix[c];
            float through_a[VEC], through_b[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                through = compose(maps[c][v], through);
                through_a[v] = through.a;
                through_b[v] = through.b;
            }
            const int first = first_step<VEC>(warp_first, c, int(threadIdx.x & 31));
            store_steps<VEC>(pair_a, 1, first, steps.valid, through_a);
            store_steps<VEC>(pair_b, 1, first, steps.valid, through_b);
        }
    }
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
three_pass_tile_pairs(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                      const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                      long long tiles_per_seq, long long num_tiles) {
    scan_tile_from_identity<BLOCK_THREADS, ITEMS, VEC, true>(a, b, out, layout, scratch, tiles_per_seq);
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
three_pass_tile_aggregates(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                           const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                           long long tiles_per_seq, long long num_tiles) {
    scan_tile_from_identity<BLOCK_THREADS, ITEMS, VEC, false>(a, b, out, layout, scratch, tiles_per_seq);
}

// Pass 2, both forms: one block per sequence. The carry into the sequence's tile k is the state
// after the aggregates of its tiles 0..k-1 act on h0; a chunk's block scan gives each tile the
// composed aggregates between the running carry and itself, and the running carry then passes
// over the whole chunk. Fixed association: the same bits on every run.
template <int BLOCK_THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
three_pass_carries(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                   const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                   long long tiles_per_seq, long long num_tiles) {
    check_shape<BLOCK_THREADS, ITEMS, 1>();
    constexpr int CHUNK = BLOCK_THREADS * ITEMS;
    __shared__ Affine<float> shared_warps[BLOCK_THREADS / 32];

    const long long seq = blockIdx.x;
    const long long first = sequence_slots(seq, tiles_per_seq);
    const float* aggregate_a = scratch.aggregate_a + first;
    const float* aggregate_b = scratch.aggregate_b + first;
    float* carry = scratch.carry + first;
    const int warp_first = warp_span_start<ITEMS>(int(threadIdx.x >> 5));
    const int lane = int(threadIdx.x & 31);

    float running = first_tile_carry(h0, seq);
    for (long long chunk_start = 0; chunk_start < tiles_per_seq; chunk_start += CHUNK) {
        const int valid = int(min((long long)CHUNK, tiles_per_seq - chunk_start));
        Affine<float> maps[ITEMS][1];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            load_steps<1>(aggregate_a + chunk_start, aggregate_b + chunk_start, 1, first_step<1>(warp_first, i, lane),
                          valid, maps[i]);
        Affine<float> before[ITEMS];
        const Affine<float> chunk_map = block_exclusive_scan<BLOCK_THREADS, ITEMS, 1>(maps, before, shared_warps);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const int k = first_step<1>(warp_first, i, lane);
            if (k < valid) carry[chunk_start + k] = carry_after(before[i], running);
        }
        running = carry_after(chunk_map, running);
    }
}

// Pass 3 of three_pass: each step's state from its pair and the tile's carry, no scan.
template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
three_pass_apply_pairs(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                       const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                       long long tiles_per_seq, long long num_tiles) {
    check_shape<BLOCK_THREADS, ITEMS, VEC>();
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    __shared__ PlacedTile shared_place;

    long long tile;
    const TileSteps<TILE> steps = place_tile<TILE>(tiles_per_seq, layout, a, b, out, shared_place, tile);
    const float carry = __ldcg(scratch.carry + carry_slot(tile));
    const float* pair_a = scratch.pair_a + pair_slot<TILE>(tile);
    const float* pair_b = scratch.pair_b + pair_slot<TILE>(tile);
    const int warp_first = warp_span_start<ITEMS>(int(threadIdx.x >> 5));
#pragma unroll
    for (int c = 0; c < ITEMS / VEC; ++c) {
        const int first = first_step<VEC>(warp_first, c, int(threadIdx.x & 31));
        Affine<float> through[VEC];
        load_steps<VEC>(pair_a, pair_b, 1, first, steps.valid, through);
        float states[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) states[v] = state_from_pair(through[v], carry);
        store_steps<VEC>(steps.out, layout.out_time_stride, first, steps.valid, states);
    }
}

// Pass 3 of three_pass_reduce: the tile scanned again (the same association as pass 1), each
// lane's state started from its prefix applied to the carry, then one fma per step. Every step
// is read before it is written by the same thread, so out may be a or b.
template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
three_pass_rescan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                  const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                  long long tiles_per_seq, long long num_tiles) {
    check_shape<BLOCK_THREADS, ITEMS, VEC>();
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    __shared__ PlacedTile shared_place;
    __shared__ Affine<float> shared_warps[BLOCK_THREADS / 32];

    long long tile;
    const TileSteps<TILE> steps = place_tile<TILE>(tiles_per_seq, layout, a, b, out, shared_place, tile);
    Affine<float> maps[CHUNKS][VEC];
    load_tile<ITEMS, VEC>(steps, layout.in_time_stride, maps);
    const float carry = __ldcg(scratch.carry + carry_slot(tile));
    Affine<float> prefix[CHUNKS];
    block_exclusive_scan<BLOCK_THREADS, CHUNKS, VEC>(maps, prefix, shared_warps);
    const int warp_first = warp_span_start<ITEMS>(int(threadIdx.x >> 5));
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        float state = state_before(prefix[c], carry);
        float states[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[c][v], state);
        store_steps<VEC>(steps.out, layout.out_time_stride, first_step<VEC>(warp_first, c, int(threadIdx.x & 31)),
                         steps.valid, states);
    }
}

}  // namespace rtscan
