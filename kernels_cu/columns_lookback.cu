// Time-major batches in one pass: lanes across sequences, tiles joined by a decoupled look-back
// with one sequence a lane (lane_lookback.cuh). `columns` (columns.cu) reads every step twice in
// three passes, 20 bytes a step against a copy's 12, and ran at the memory's rate in each pass
// (profiling/NOTES.md, item 73): 0.54 of copy at best. This kernel reads and writes each step
// once.
//
// A tile is SEQUENCES neighbouring sequences (one group: 32, 16 or 8) over SPANS * ITEMS
// consecutive steps (one chunk of the time axis). Lane l of every warp holds sequence l % SEQUENCES
// of the group, and span lane_span(warp, lane) of the chunk: ITEMS steps, the first
// REGISTER_ITEMS in registers and the rest in shared memory, copied there by cp.async (more bytes in
// flight than registers alone allow). A warp's load or store of one step is then 32 words from
// 32 / SEQUENCES rows of SEQUENCES neighbouring sequences: coalesced wherever the innermost batch
// axis is contiguous (any layout is correct, only slower). Where each tile, lane and step is, and
// where a lane's descriptors live, is columns_lookback_index.cuh's, which the CPU mirror builds
// too. Then:
//   1 each thread composes its span's maps; warp 0 composes the spans' maps per sequence (the
//     tile's aggregate for it), and its lanes l < SEQUENCES publish it and look back along
//     sequence l for the carry (chunk 0 takes h0 and publishes its end state at once; a lane whose
//     predecessor's end state it already read while the loads were in flight takes that);
//   2 each thread applies the earlier spans' maps to the carry, then walks its steps, one fma and
//     one store a step.
// Tiles are taken in ticket order, chunk-major, so a tile's predecessors hold earlier tickets: the
// look-back's forward progress.
//
// Every value comes from a fixed order (a thread's steps, the warps in order, the look-back's
// chain), so the output is bitwise identical from run to run.
//
// Template parameters (rtscan/tuning.py): BLOCK_THREADS (a multiple of 32), ITEMS (steps a thread
// holds), REGISTER_ITEMS (of them, how many in registers), MIN_BLOCKS (__launch_bounds__),
// LOOKBACK_DEPTH (predecessors a lane reads per round), ATOMIC_POLLS (tile_state.cuh's
// poll_relaxed_gpu), SEQUENCES (a tile's sequences). Launch: one block per tile, tiles_per_seq
// chunks times ceil(num_seqs / SEQUENCES) groups, 2 * BLOCK_THREADS * (ITEMS - REGISTER_ITEMS) * 4
// bytes of dynamic shared memory; the workspace holds SEQUENCES entries per tile.
#include "affine.cuh"
#include "columns_lookback_index.cuh"
#include "lane_lookback.cuh"
#include "seq_layout.cuh"
#include "staging.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"  // shuffle_map

namespace rtscan {

template <int BLOCK_THREADS, int ITEMS, int REGISTER_ITEMS, int MIN_BLOCKS, int LOOKBACK_DEPTH, int ATOMIC_POLLS,
          int SEQUENCES>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
columns_lookback_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                      const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
                      long long num_tiles) {
    static_assert(BLOCK_THREADS % WARP_SIZE == 0 && BLOCK_THREADS <= 1024, "whole warps, at most 1024 threads");
    static_assert(ITEMS >= 1 && LOOKBACK_DEPTH >= 1, "a step a thread, a predecessor a round");
    static_assert(1 <= REGISTER_ITEMS && REGISTER_ITEMS <= ITEMS, "registers hold a thread's first steps");
    static_assert(SEQUENCES == 32 || SEQUENCES == 16 || SEQUENCES == 8, "a warp's lanes, a half or a quarter");
    constexpr int PARTS = WARP_SIZE / SEQUENCES;  // spans a warp holds
    constexpr int WARPS = BLOCK_THREADS / WARP_SIZE;
    constexpr int SPANS = WARPS * PARTS;
    constexpr int STAGED_ITEMS = ITEMS - REGISTER_ITEMS;
    // A thread's steps past its first REGISTER_ITEMS wait in dynamic shared memory (the launch
    // passes 2 * BLOCK_THREADS * STAGED_ITEMS * 4 bytes), staged step j of thread x at
    // j * BLOCK_THREADS + x: a warp's copies of one step are 32 neighbouring words. On a 128-byte
    // boundary, as lookback.cu's staging (P201).
    extern __shared__ __align__(128) float staged_storage[];
    float* staged_a = staged_storage;
    float* staged_b = staged_storage + BLOCK_THREADS * STAGED_ITEMS;
    auto staged_slot = [&](int i) { return (i - REGISTER_ITEMS) * BLOCK_THREADS + int(threadIdx.x); };
    __shared__ long long shared_ticket;
    __shared__ unsigned shared_generation;
    __shared__ Affine<float> span_maps[SPANS][SEQUENCES];
    __shared__ float shared_carry[SEQUENCES];
    __shared__ LaneStash<LOOKBACK_DEPTH, SEQUENCES> lookback_stash;  // warp 0's walk (lane_lookback.cuh)

    const int lane = int(threadIdx.x) & (WARP_SIZE - 1);
    const int warp = int(threadIdx.x) / WARP_SIZE;
    if (threadIdx.x == 0) {
        long long ticket;
        unsigned generation;
        draw_ticket(ws, num_tiles, ticket, generation);
        shared_ticket = ticket;
        shared_generation = generation;
    }
    __syncthreads();
    const unsigned generation = shared_generation;
    const LaneTile tile = lane_tile_of_ticket(shared_ticket, lane_groups<SEQUENCES>(layout.num_seqs));
    const long long chunk = tile.chunk;
    const long long seq = lane_sequence<SEQUENCES>(tile, lane);
    const int column = lane % SEQUENCES;  // the tile's sequence this lane holds
    const int span = lane_span<SEQUENCES>(warp, lane);
    const bool has_seq = seq < layout.num_seqs;  // the last group's lanes past num_seqs idle

    long long in_offset = 0, out_offset = 0;
    if (has_seq) sequence_origins(layout, seq, in_offset, out_offset);
    const long long first = lane_first_step<ITEMS, SPANS>(chunk, span);
    const int count = has_seq && first < layout.length ? int(min((long long)ITEMS, layout.length - first)) : 0;

    // All of a thread's loads are issued before any is used: the staged steps' copies first, then
    // the registers' loads.
    const long long first_offset = in_offset + first * layout.in_time_stride;
#pragma unroll
    for (int i = REGISTER_ITEMS; i < ITEMS; ++i) {
        stage_steps<1>(staged_a + staged_slot(i), a + first_offset, layout.in_time_stride, i, count);
        stage_steps<1>(staged_b + staged_slot(i), b + first_offset, layout.in_time_stride, i, count);
    }
    Affine<float> held[REGISTER_ITEMS];
#pragma unroll
    for (int i = 0; i < REGISTER_ITEMS; ++i) {
        const long long offset = in_offset + (first + i) * layout.in_time_stride;
        held[i] = i < count ? Affine<float>{__ldcg(a + offset), __ldcg(b + offset)} : affine_identity<float>();
    }
    // With the loads in flight, warp 0's lanes read their predecessor's end state once: where it
    // was finished before this tile started (a launch of more groups than the GPU holds tiles,
    // whose tickets put a tile's predecessor a wave or more before it), the carry is known by the
    // time the aggregate is, without the look-back's round trip under load (P255). The word is the
    // look-back's own, self-describing and trusted only with this launch's generation
    // (tile_state.cuh), so reading it earlier changes no value; 0 is no launch's generation.
    word64 early_inclusive = 0;
    if (warp == 0 && has_seq && lane < SEQUENCES && chunk > 0)
        early_inclusive = poll_relaxed_gpu<ATOMIC_POLLS != 0>(
            ws.segments().inclusive + predecessor_slot<SEQUENCES>(lane_slot<SEQUENCES>(tile, tiles_per_seq, lane), 1));
    // Step i's map, from registers or from its staged slot (the identity past the sequence's end).
    auto step_map = [&](int i) {
        if (i < REGISTER_ITEMS) return held[i < REGISTER_ITEMS ? i : 0];
        return i < count ? Affine<float>{staged_a[staged_slot(i)], staged_b[staged_slot(i)]}
                         : affine_identity<float>();
    };
    Affine<float> running = affine_identity<float>();
#pragma unroll
    for (int i = 0; i < REGISTER_ITEMS; ++i) running = compose(held[i], running);
    wait_for_staged_steps();  // each thread reads back only the slots it copied
#pragma unroll
    for (int i = REGISTER_ITEMS; i < ITEMS; ++i) running = compose(step_map(i), running);
    span_maps[span][column] = running;
    __syncthreads();

    if (warp == 0) {
        // Part p of warp 0 composes spans p * WARPS .. p * WARPS + WARPS - 1, and lane `column`
        // joins the parts' runs in order (the mirror groups the composes alike: the bits depend on
        // the grouping).
        Affine<float> run = affine_identity<float>();
#pragma unroll
        for (int w = 0; w < WARPS; ++w) run = compose(span_maps[lane / SEQUENCES * WARPS + w][column], run);
        Affine<float> aggregate = run;
#pragma unroll
        for (int p = 1; p < PARTS; ++p) aggregate = compose(shuffle_map(run, column + p * SEQUENCES), aggregate);
        const long long slot = lane_slot<SEQUENCES>(tile, tiles_per_seq, lane);
        const bool has_successor = chunk + 1 < tiles_per_seq;
        float carry = 0.0f;
        if (has_seq && lane < SEQUENCES) {
            if (chunk == 0) {
                carry = lane_first_carry(h0, seq);
            } else if (word_tag(early_inclusive) == generation) {
                carry = word_value(early_inclusive);  // the look-back's carry from a finished predecessor
            } else {
                if (has_successor) publish_aggregate(ws.segments(), slot, generation, aggregate);
                carry = lane_lookback_carry<LOOKBACK_DEPTH, SEQUENCES, ATOMIC_POLLS != 0>(
                    ws.segments(), slot, chunk, generation, lookback_stash, lane);
            }
            if (has_successor) publish_inclusive(ws.segments(), slot, generation, apply(aggregate, carry));
        }
        if (lane < SEQUENCES) shared_carry[lane] = carry;
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
    }
    __syncthreads();

    float state = shared_carry[column];
    for (int s = 0; s < span; ++s) state = apply(span_maps[s][column], state);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        if (i < count) {
            state = apply(step_map(i), state);
            out[out_offset + (first + i) * layout.out_time_stride] = state;
        }
    }
}

}  // namespace rtscan
