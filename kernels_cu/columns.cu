// Time-major batches, lanes across sequences: reduce-then-scan in three passes, one thread per
// sequence. The look-back kernels give a tile's lanes consecutive steps of one sequence, which in
// a time-major batch (steps, sequences) lie a row apart: a warp's load then touches 32 sectors for
// 32 words, and such batches ran at 0.10-0.39 of copy (P95, P96). Here a block takes BLOCK_THREADS
// neighbouring sequences over the same CHUNK = BLOCK_THREADS * ITEMS steps, and a warp's load of
// one step is one row of 32 neighbouring sequences: coalesced wherever the innermost batch axis is
// contiguous (any layout is correct, only slower).
//
//   1 columns_aggregates   per (sequence, chunk): the chunk's composed map, one step at a time
//   2 three_pass_carries   per sequence: the chunks' carries (three_pass.cu, shared unchanged)
//   3 columns_rescan       per (sequence, chunk): the chunk again from its carry, one fma a step,
//                          writing h
//   float32 device traffic per step: 8 B read, then 8 B read + 4 B written, as three_pass_reduce
//
// Every value comes from a fixed order (a thread's steps in sequence, pass 2's fixed block scan),
// so the output is bitwise identical from run to run. Where each thread works is in
// columns_index.cuh, which the CPU mirror builds too.
//
// Template parameters (rtscan/tuning.py): BLOCK_THREADS (sequences a block covers, a multiple of
// 32), ITEMS (CHUNK / BLOCK_THREADS: the chunk is counted as a three-pass tile, so the scratch,
// pass 2 and rtscan/_scan.py's tiles_per_seq serve unchanged), MIN_BLOCKS (__launch_bounds__).
// Launch: passes 1 and 3: grid = column_blocks x tiles_per_seq; pass 2: one block per sequence.
#include "affine.cuh"
#include "columns_index.cuh"
#include "seq_layout.cuh"
#include "three_pass.cu"  // pass 2, three_pass_carries, and the scratch it shares

namespace rtscan {

// Steps a thread loads as one group; the next group's loads are in flight while it uses one.
constexpr int COLUMN_UNROLL = 8;

// A thread's sequence and chunk: where its steps start in a, b and out, and how many exist.
struct ColumnSteps {
    long long seq, tile;
    const float* a;
    const float* b;
    float* out;
    int valid;
};

template <int BLOCK_THREADS, int CHUNK>
__device__ __forceinline__ ColumnSteps column_steps(const SeqLayout& layout, long long tiles_per_seq, const float* a,
                                                    const float* b, float* out) {
    const ColumnPlace place = column_place(blockIdx.x, int(threadIdx.x), BLOCK_THREADS, layout.num_seqs);
    ColumnSteps steps = {place.seq, place.seq * tiles_per_seq + place.chunk, a, b, out, 0};
    if (place.seq >= layout.num_seqs) return steps;
    long long in_origin, out_origin;
    sequence_origins(layout, place.seq, in_origin, out_origin);
    const long long first = place.chunk * CHUNK;
    steps.a = a + in_origin + first * layout.in_time_stride;
    steps.b = b + in_origin + first * layout.in_time_stride;
    steps.out = out + out_origin + first * layout.out_time_stride;
    steps.valid = int(min((long long)CHUNK, layout.length - first));
    return steps;
}

// The maps of steps start .. start + COLUMN_UNROLL - 1 (those that exist), all loads issued first.
__device__ __forceinline__ void load_column_maps(const ColumnSteps& steps, long long stride, int start,
                                                 Affine<float> (&maps)[COLUMN_UNROLL]) {
#pragma unroll
    for (int u = 0; u < COLUMN_UNROLL; ++u) {
        const long long offset = (long long)(start + u) * stride;
        maps[u] = start + u < steps.valid ? Affine<float>{__ldcg(steps.a + offset), __ldcg(steps.b + offset)}
                                          : affine_identity<float>();
    }
}

// Calls visit(map, step) for each of a thread's steps in order. The loads of the next group are
// issued before the current group is used: a thread's chain of steps is serial, so with one group
// in flight at a time pass 1 waited out each group's round trip and moved its bytes at 0.57 of the
// copy's rate, and 0.70 with the next group in flight (P100; profiling/results/h200/
// columns-sweep-p100-2026-11-30-13.txt and -p100b-, passes.py --time-major).
template <typename Visit>
__device__ __forceinline__ void walk_column(const ColumnSteps& steps, long long stride, Visit&& visit) {
    Affine<float> group[COLUMN_UNROLL];
    load_column_maps(steps, stride, 0, group);
    for (int start = 0; start < steps.valid; start += COLUMN_UNROLL) {
        Affine<float> next[COLUMN_UNROLL];
        load_column_maps(steps, stride, start + COLUMN_UNROLL, next);
#pragma unroll
        for (int u = 0; u < COLUMN_UNROLL; ++u) {
            if (start + u < steps.valid) visit(group[u], start + u);
            group[u] = next[u];
        }
    }
}

template <int BLOCK_THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
columns_aggregates(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                   const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
                   long long tiles_per_seq, long long num_tiles) {
    check_shape<BLOCK_THREADS, ITEMS, 1>();
    const ColumnSteps steps = column_steps<BLOCK_THREADS, BLOCK_THREADS * ITEMS>(layout, tiles_per_seq, a, b, out);
    if (steps.seq >= layout.num_seqs) return;
    Affine<float> running = affine_identity<float>();
    walk_column(steps, layout.in_time_stride, [&](Affine<float> map, int) { running = compose(map, running); });
    scratch.aggregate_a[aggregate_slot(steps.tile)] = running.a;
    scratch.aggregate_b[aggregate_slot(steps.tile)] = running.b;
}

template <int BLOCK_THREADS, int ITEMS, int MIN_BLOCKS>
__global__ void __launch_bounds__(BLOCK_THREADS, MIN_BLOCKS)
columns_rescan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
               const float* __restrict__ h0, SeqLayout layout, ThreePassScratch scratch,
               long long tiles_per_seq, long long num_tiles) {
    check_shape<BLOCK_THREADS, ITEMS, 1>();
    const ColumnSteps steps = column_steps<BLOCK_THREADS, BLOCK_THREADS * ITEMS>(layout, tiles_per_seq, a, b, out);
    if (steps.seq >= layout.num_seqs) return;
    float state = __ldcg(scratch.carry + carry_slot(steps.tile));
    walk_column(steps, layout.in_time_stride, [&](Affine<float> map, int step) {
        state = apply(map, state);
        steps.out[(long long)step * layout.out_time_stride] = state;
    });
}

}  // namespace rtscan
