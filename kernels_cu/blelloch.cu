// Single-pass scan of S independent sequences whose tiles are scanned by Blelloch's work-efficient
// exclusive scan (an up-sweep and a down-sweep over a balanced tree in shared memory,
// blelloch_tree.cuh); tiles are joined by the same deterministic two-level decoupled look-back as
// lookback.cu (tile_state.cuh).
//
// One block scans one tile of TILE = BLOCK_THREADS * ITEMS consecutive steps of one sequence,
// taken in ticket order. The steps are loaded as lookback.cu lays them out: each warp owns a
// contiguous span of 32 * ITEMS steps, walked in chunks of 32 * VEC, lane l taking VEC consecutive
// steps of each chunk, so every load and store of a warp is one coalesced sweep. A thread keeps
// its steps' maps in registers (the down-sweep overwrites the leaves) and writes them into the
// tree's leaves; the tree then yields each step's exclusive prefix in the tile and, at its root,
// the tile's map for the look-back. Each output is
//
//   h[n] = apply(own map of n, apply(exclusive prefix of n, carry into the tile))   (step_state)
//
// so every step is two fmas from the carry, independent of its neighbours. Across the tree the
// maps are composed products of a's, not the sequential order: that is where float32 rounding,
// overflow and Inf * 0 can differ from the reference.
//
// Why the steps go through registers rather than cp.async (as in lookback.cu): a 16-byte cp.async
// needs a 16-byte aligned destination of four consecutive words, and the tree's padding, which
// keeps the sweeps free of bank conflicts, shifts each row of 32 leaves one word further, so
// three rows in four start off that alignment. The registers are needed anyway: each step's own
// map is used again after the down-sweep has overwritten its leaf.
//
// Template parameters (the runtime arguments are lookback_scan's, so one dispatch launches both):
//   BLOCK_THREADS  threads per block, a multiple of 32, at most 1024
//   ITEMS          steps per thread, a multiple of VEC
//   VEC            steps per lane per chunk: 4 = 16-byte loads and stores, which needs unit time
//                  stride and 16-byte aligned sequences; 1 = any stride, including negative
//   MIN_BLOCKS     blocks per SM the register allocation must allow (__launch_bounds__)
//   LOOKBACK_DEPTH segments per lane in one look-back round: the window is 32 * LOOKBACK_DEPTH
//   ATOMIC_POLLS   1: the look-back polls by atomics, 0: by strong loads (tile_state.cuh,
//                  poll_relaxed_gpu)
//
// Launch: grid = num_tiles blocks of BLOCK_THREADS threads, and dynamic shared memory of
//   2 * 4 * tree_slots(tree_leaves(TILE)) bytes = 8 * (L + (L - 1) / 32 + (L - 1) / 1024),
//   L = the smallest power of two >= BLOCK_THREADS * ITEMS (integer division),
// e.g. 16 896 bytes for TILE = 2048; over 48 KB the function must be opted in first
// (cudaFuncAttributeMaxDynamicSharedMemorySize). Static shared memory: 32 bytes.
#include "affine.cuh"
#include "blelloch_tree.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"

namespace rtscan {

// The up-sweep levels whose nodes all fall to warp 0 (at most 32 of them: sweep_node gives node
// k < BLOCK_THREADS to thread k) run with warp barriers only; wider levels need the block. A
// barrier follows every level: the next one reads what other threads just wrote. Called by every
// thread of the block.
template <int LEAVES, int BLOCK_THREADS>
__device__ __forceinline__ void up_sweep(const Tree& tree, unsigned warp) {
#pragma unroll
    for (int level = 0; level < tree_levels(LEAVES); ++level) {
        if (sweep_nodes(LEAVES, level) > WARP_SIZE) {
            up_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, int(threadIdx.x));
            __syncthreads();
        } else if (warp == 0) {
            up_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, int(threadIdx.x));
            __syncwarp();
        }
    }
}

// The down-sweep's narrow top levels, by warp 0 alone, after it has put the identity at the root
// (the first warp barrier: every lane has read the tile's map there); the block barrier that
// follows hands the result to the wide levels.
template <int LEAVES, int BLOCK_THREADS>
__device__ __forceinline__ void down_sweep_top(const Tree& tree) {
    __syncwarp();
    if (threadIdx.x == 0) tree.store(tree_root(LEAVES), affine_identity<float>());
    __syncwarp();
#pragma unroll
    for (int level = tree_levels(LEAVES) - 1; level >= 0; --level) {
        if (sweep_nodes(LEAVES, level) > WARP_SIZE) continue;
        down_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, int(threadIdx.x));
        __syncwarp();
    }
}

// The down-sweep's wide levels, by every thread of the block, each followed by a block barrier
// (the last one orders the leaves' prefixes before the threads read them).
template <int LEAVES, int BLOCK_THREADS>
__device__ __forceinline__ void down_sweep_wide(const Tree& tree) {
#pragma unroll
    for (int level = tree_levels(LEAVES) - 1; level >= 0; --level) {
        if (sweep_nodes(LEAVES, level) <= WARP_SIZE) continue;
        down_sweep_level<LEAVES, BLOCK_THREADS>(tree, level, int(threadIdx.x));
        __syncthreads();
    }
}

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int ATOMIC_POLLS = 0>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
blelloch_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
              const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
              long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0, "whole chunks per thread");
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    constexpr int LEAVES = tree_leaves(TILE);
    static_assert(2 * tree_slots(LEAVES) * sizeof(float) <= MAX_DYNAMIC_SHARED_BYTES, "the tree fits in shared memory");

    // The tree, in dynamic shared memory (the launch passes 2 * 4 * tree_slots(LEAVES) bytes,
    // which may exceed the 48 KB a static array is limited to), on a 128-byte boundary as
    // lookback.cu's staging (P201).
    extern __shared__ __align__(128) float tree_storage[];
    const Tree tree = tree_in(tree_storage, LEAVES);
    __shared__ ClaimedTile shared_claim;
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

    // Every load first, then every leaf: the loads' latencies overlap.
    const int warp_first = warp_span_start<ITEMS>(int(warp));
    Affine<float> own[CHUNKS][VEC];
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c)
        load_steps<VEC>(a_tile, b_tile, layout.in_time_stride, first_step<VEC>(warp_first, c, int(lane)), valid,
                        own[c]);
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
        for (int v = 0; v < VEC; ++v) tree.store(first_step<VEC>(warp_first, c, int(lane)) + v, own[c][v]);
    // Leaves past the tile, when it is not a power of two: no thread owns them.
    for (int leaf = TILE + int(threadIdx.x); leaf < LEAVES; leaf += BLOCK_THREADS)
        tree.store(leaf, affine_identity<float>());
    __syncthreads();  // every leaf is written before any is combined

    up_sweep<LEAVES, BLOCK_THREADS>(tree, warp);
    if (warp == 0) {
        // The root is read after the up-sweep's last warp barrier; down_sweep_top clears it.
        const Affine<float> tile_map = tree.load(tree_root(LEAVES));
        SegmentPrefix held;
        const float carry = tile_carry<LOOKBACK_DEPTH, WARP_SIZE, SEGMENT_TILES, ATOMIC_POLLS != 0>(
            ws, h0, tile, seq, chunk, tiles_per_seq, generation, tile_map, held);
        if (lane == 0) shared_carry = carry;
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
        down_sweep_top<LEAVES, BLOCK_THREADS>(tree);
    }
    __syncthreads();  // the top levels and the carry, to every warp
    down_sweep_wide<LEAVES, BLOCK_THREADS>(tree);

    const float carry = shared_carry;
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
        const int first = first_step<VEC>(warp_first, c, int(lane));
        float states[VEC];
#pragma unroll
        for (int v = 0; v < VEC; ++v) states[v] = step_state(tree.load(first + v), own[c][v], carry);
        store_steps<VEC>(out_tile, layout.out_time_stride, first, valid, states);
    }
}

}  // namespace rtscan
