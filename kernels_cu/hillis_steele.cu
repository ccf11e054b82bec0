// Single-pass scan of S independent sequences whose tiles are scanned by Hillis-Steele (Kogge-
// Stone) log-step doubling, one step per thread, held in registers; tiles are joined by the same
// deterministic two-level decoupled look-back as lookback.cu (tile_state.cuh).
//
// It is the step-efficient, work-inefficient way to scan a tile: every step's inclusive map is
// built by doubling, 5 rounds of shuffles inside each warp and then ceil(log2(WARPS)) rounds
// across the warps through shared memory (hillis_steele_rounds.cuh), never by a serial loop.
// The project's first comparison ran Hillis-Steele as PyTorch operations, with the framework's
// launches and memory round trips in the loop; this kernel is the fair version of that baseline.
//
// One block scans one tile of BLOCK_THREADS consecutive steps of one sequence: thread t owns
// tile step t. Steps past the end of the sequence are the identity map and are never read or
// written.
//
// Template parameters (the runtime arguments are lookback_scan's, so one dispatch launches both):
//   BLOCK_THREADS  threads per block = steps per tile, a multiple of 32, at most 1024
//   VEC            must be 1: a thread owns one step, loaded and stored as a scalar at the
//                  layout's time strides (any stride, including negative), so the host always
//                  picks 1, whatever the alignment. It is kept only so that the template's
//                  parameters line up with the registry's launch shape.
//   MIN_BLOCKS     blocks per SM the register allocation must allow (__launch_bounds__)
//   LOOKBACK_DEPTH segments per lane in one look-back round: the window is 32 * LOOKBACK_DEPTH
//   ATOMIC_POLLS   1: the look-back polls by atomics, 0: by strong loads (tile_state.cuh,
//                  poll_relaxed_gpu)
//
// Launch: grid = num_tiles blocks, no dynamic shared memory. Static shared memory: 64 bytes of
// block-wide values and 2 * 8 * WARPS bytes of running maps (192 bytes at 256 threads, 576 at
// 1024).
//
// Registers: lookback_carry alone takes about 32 (ptxas 13.0), so under a cap of 32 (MIN_BLOCKS =
// 2048 / BLOCK_THREADS) warp 0's look-back spills on sm_80, sm_90 and sm_100. Under a cap of 40
// (MIN_BLOCKS = 1536 / BLOCK_THREADS: 256 x 6, 512 x 3, 768 x 2), and with 1024 threads x 1
// block, LOOKBACK_DEPTH 1 compiles without spills on sm_80, sm_86, sm_89, sm_90 and sm_100;
// depth 2 needs more than 40.
#include "affine.cuh"
#include "hillis_steele_rounds.cuh"
#include "indexing.cuh"
#include "perturb.cuh"
#include "seq_layout.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

template <int BLOCK_THREADS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int ATOMIC_POLLS = 0>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
hillis_steele_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                   const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
                   long long num_tiles) {
    static_assert(BLOCK_THREADS % WARP_SIZE == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(VEC == 1, "one step per thread, loaded and stored as a scalar");
    constexpr int WARPS = BLOCK_THREADS / WARP_SIZE;
    constexpr int ROUNDS = cross_warp_rounds(WARPS);
    constexpr int TILE = BLOCK_THREADS;

    __shared__ long long shared_tile, shared_seq, shared_chunk, shared_in_offset, shared_out_offset;
    __shared__ unsigned shared_generation;
    __shared__ Affine<float> shared_running[2][WARPS];  // the warps' running maps, two rounds' worth
    __shared__ float shared_carry;
    __shared__ SegmentPrefix shared_parked;  // warp 0's segment prefix while it looks back

    const int lane = int(threadIdx.x) & (WARP_SIZE - 1);
    const int warp = int(threadIdx.x) / WARP_SIZE;

    if (threadIdx.x == 0) {
        long long ticket;
        unsigned generation;
        draw_ticket(ws, num_tiles, ticket, generation);
        const long long tile = tile_of_ticket(layout, ticket, tiles_per_seq);
        const long long seq = tile / tiles_per_seq;
        long long in_offset, out_offset;
        sequence_origins(layout, seq, in_offset, out_offset);
        shared_tile = tile;
        shared_seq = seq;
        shared_chunk = tile - seq * tiles_per_seq;
        shared_generation = generation;
        shared_in_offset = in_offset;
        shared_out_offset = out_offset;
    }
    __syncthreads();
    // This thread's step within its sequence, computed again from shared memory where it is
    // needed rather than kept across the look-back, where registers are scarce: keeping it spills.
    auto own_step = [&] { return shared_chunk * TILE + threadIdx.x; };

    Affine<float> own = affine_identity<float>();
    if (own_step() < layout.length) {
        const long long offset = shared_in_offset + own_step() * layout.in_time_stride;
        own = {__ldcg(a + offset), __ldcg(b + offset)};  // .cg: read once, not worth a place in L1
    }

    // In-warp rounds by shuffles, then the cross-warp rounds. Every lane of a warp computes the
    // warp's running map alike, so none has to broadcast it afterwards; lane 0 alone writes it.
    const Affine<float> lane_inclusive = warp_inclusive_scan(own);
    Affine<float> running = shuffle_map(lane_inclusive, WARP_SIZE - 1);
    if (lane == 0) shared_running[round_source_buffer(0)][warp] = running;
    __syncthreads();
#pragma unroll
    for (int round = 0; round < ROUNDS; ++round) {
        if (round_takes(warp, round))
            running = round_combine(running, shared_running[round_source_buffer(round)][round_partner(warp, round)]);
        if (lane == 0) shared_running[round_target_buffer(round)][warp] = running;
        __syncthreads();  // one barrier per round is enough with two buffers (hillis_steele_rounds.cuh)
    }
    const Affine<float>(&warps_through)[WARPS] = shared_running[round_source_buffer(ROUNDS)];
    const Affine<float> tile_inclusive =
        warp == 0 ? lane_inclusive : compose(lane_inclusive, warps_through[warps_before(warp)]);

    if (warp == 0) {
        const float carry = tile_carry<LOOKBACK_DEPTH, WARP_SIZE, SEGMENT_TILES, ATOMIC_POLLS != 0>(
            ws, h0, shared_tile, shared_seq, shared_chunk, tiles_per_seq, shared_generation, warps_through[WARPS - 1],
            shared_parked);
        if (lane == 0) shared_carry = carry;
        if (shared_generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
    }
    __syncthreads();

    // One fma from the carry. The inclusive map is a composed product of a's, not the sequential
    // order: that is where float32 rounding, overflow and Inf * 0 can differ from the reference.
    if (own_step() < layout.length)
        out[shared_out_offset + own_step() * layout.out_time_stride] = apply(tile_inclusive, shared_carry);
}

}  // namespace rtscan
