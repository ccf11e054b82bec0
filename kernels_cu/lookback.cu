// Single-pass decoupled look-back scan (Merrill & Garland, NVR-2016-002) of S independent
// sequences: several items per thread, staged through shared memory and scanned in registers,
// warp-parallel look-back, two-level (over segments of 32 tiles) or one-level (over tiles, SEGMENT
// 1; tile_state.cuh).
//
// One block scans one tile of TILE = BLOCK_THREADS * ITEMS consecutive steps of one sequence.
// Each warp that holds steps owns a contiguous span of 32 * ITEMS of them and walks it in chunks
// of 32 * VEC: lane l handles steps [chunk * 32 * VEC + l * VEC, +VEC), so a chunk is one
// coalesced sweep (16-byte vectors when VEC = 4).
//
// Most of the tile's a and b is staged in shared memory by asynchronous copies (cp.async); a
// lane's first REGISTER_ITEMS steps may instead be loaded straight into registers. Tile data that
// waits costs no issue slots, and the tile bytes an SM holds while its blocks wait in the
// look-back bound the rate (profiling/PREDICTIONS.md, P1-P6), so both stores are used. The scan
// reads the steps twice, once to build each lane's map and once, after the carry is known, to
// run the recurrence and write h. On the 16-byte path a lane's copies land in up to four groups,
// and the first pass scans each group as soon as it has landed (P38: on an H200, 2^28 gained 8 %
// and 64 x 65536 6 %, profiling/results/h200/p38-ab-2026-11-30b.txt).
//
// Who runs the look-back (PROTOCOL_WARP). With 0, warp 0 holds steps and runs it, and the second
// pass uses the lane prefixes the first pass kept in registers, or recomputes each chunk's warp
// scan after the carry is known where registers hold steps. With 1, the block has one more
// warp, which holds no steps and runs the look-back; meanwhile the data warps rewrite each step's
// map, in place, as the map from their warp span's start through that step, so that once the
// carry is known a step is one fma and a store. None of that rewriting needs the carry, and it
// starts only after the tile's aggregate is out (P13 did it before, and lost). On an H200 it
// mostly freed registers for a larger tile: 352 x 56 with it ran 2^28 at 0.75-0.77 of copy against
// 0.70 (P35, P36; profiling/results/h200/bench-2026-11-30m.txt and -n.txt). Once the first pass
// overlapped the copies (P38), 352 x 48 with it also won from 2^21 steps and on 64 x 65536 (P42).
// The rewrite did not pay where the carry is known at once (rows of one tile) and cost a quarter
// on the scalar path: the short and batch shapes keep 0 (tuning.py). With 1 and MIN_BLOCKS 2 the
// block also takes part in claim_tile's stagger (tile_state.cuh). With runs (RUN_CHUNKS below)
// there is no rewrite: the kept prefixes leave the second pass one fma a step without it, and
// the long tile with runs is also the fastest for rows of one tile (P145).
//
// Template parameters (chosen per architecture in rtscan/tuning.py):
//   BLOCK_THREADS  threads holding steps, a multiple of 32; the block launches BLOCK_THREADS +
//                  32 * PROTOCOL_WARP threads, at most 1024
//   ITEMS          steps per thread, a multiple of VEC
//   VEC            steps per lane per chunk: 4 = 16-byte copies and stores, which needs unit time
//                  stride and 16-byte aligned sequences, counted from each row's boundary where the
//                  layout has a head (seq_layout.cuh); 1 = any stride, including negative
//   MIN_BLOCKS     blocks per SM the register allocation must allow (__launch_bounds__)
//   LOOKBACK_DEPTH segments per lane in one look-back round: the window is 32 * LOOKBACK_DEPTH
//   REGISTER_ITEMS of a thread's ITEMS, how many are held in registers (a multiple of VEC)
//   WALK_LANES     lanes that read predecessors in the look-back: 32 (warp-parallel walk) or 1
//                  (serial walk, the seed's first look-back; variant lookback_serial)
//   SEGMENT        tiles per segment of the two-level look-back: 32, or 1 for the seed's one-level
//                  look-back over tiles (lookback_serial, lookback_warp, and sm_90's large shape:
//                  with a protocol warp it pays once a launch holds several waves, P48-P50)
//   PROTOCOL_WARP  1: an extra warp runs the look-back while the data warps prepare the second
//                  pass; 0: warp 0 holds steps and runs it
//   ATOMIC_POLLS   1: the look-back polls by atomics, which leave the SM's copies at full rate;
//                  0: by strong loads, quicker where the poll is the whole wait
//                  (tile_state.cuh, poll_relaxed_gpu)
//   CHUNKS_FIRST   1: tickets take chunk c of every sequence before chunk c + 1 of any, even where a
//                  sequence's steps are adjacent (seq_layout.cuh, tile_of_ticket); 0: along each
//                  sequence in turn there
//   RUN_CHUNKS     1: every chunk is scanned across the warp, in the first pass and, where
//                  registers hold steps, again in the rewrite or the second pass; 2, 4 or 8
//                  (16-byte path, with a protocol warp and register chunks): the staged
//                  chunks are read back in runs of RUN_CHUNKS chunks, RUN_CHUNKS * 4 consecutive
//                  steps a lane (indexing.cuh's run_step and staged_vector_slot), one warp scan a
//                  run, and each thread keeps the prefixes of its register chunks and runs in shared
//                  memory, from which the second pass runs each lane's steps one fma at a time: no
//                  second warp scan and no rewrite. One-wave launches are held by the tile's own
//                  shuffles and shared-memory traffic (profiling/NOTES.md, items 90 and 93).
//   SEQUENCES_PER_TILE 1: the block scans one tile of one sequence; WARPS (row warps): each warp
//                  scans a whole sequence of its own, of at most 32 * ITEMS steps; 0 (packed rows,
//                  one chunk a lane, ITEMS = VEC): each warp scans as many whole sequences as fit,
//                  floor(32 / q), q consecutive lanes each, where q = ceil(span / VEC) and span is the
//                  launch's length and longest row head (SeqLayout.longest_head, from which the
//                  host counted the block's rows). The host sends only rows of one tile, on the
//                  16-byte path: no row waits on another, so nothing is published or polled. What it
//                  buys is blocks of more than one row for rows too short for one warp's span: an SM
//                  takes at most 32 blocks, so one-warp tiles hold at most 32 rows an SM in flight, and
//                  a short row's speed is the bytes its SM holds (profiling/NOTES.md, items 127 and
//                  133; P227 packed them to the lane).
#include "affine.cuh"
#include "indexing.cuh"
#include "seq_layout.cuh"
#include "staging.cuh"
#include "tile_io.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

// floor(n / d) for 0 <= n <= 32 and 1 <= d <= 32, given per_d = 1 / d to a few ulps (__fdividef): n / d
// lies at least 1 / d >= 1 / 32 below the next integer or on one, so (n + 1/2) / d is at least 1 / 64
// from every integer, far beyond the product's few ulps. lookback.cu's packed rows divide by their
// lanes a row this way: a handful of instructions where an integer division takes a few dozen.
__device__ __forceinline__ int small_quotient(int n, float per_d) {
    return int((float(n) + 0.5f) * per_d);
}

// Copy groups a lane's staged chunks are split into (at most 4: wait_for_staged_groups' range).
constexpr int STAGE_GROUPS = 4;

template <int BLOCK_THREADS, int ITEMS, int VEC, int MIN_BLOCKS, int LOOKBACK_DEPTH, int REGISTER_ITEMS, int WALK_LANES,
          int SEGMENT, int PROTOCOL_WARP, int ATOMIC_POLLS = 0, int CHUNKS_FIRST = 0, int RUN_CHUNKS = 1,
          int SEQUENCES_PER_TILE = 1>
__global__ void __launch_bounds__(BLOCK_THREADS + 32 * PROTOCOL_WARP, MIN_BLOCKS)
lookback_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
              const float* __restrict__ h0, SeqLayout layout, TileWorkspace ws, long long tiles_per_seq,
              long long num_tiles) {
    static_assert(BLOCK_THREADS % 32 == 0, "whole warps");
    static_assert(PROTOCOL_WARP == 0 || PROTOCOL_WARP == 1, "at most one protocol warp");
    static_assert(BLOCK_THREADS + 32 * PROTOCOL_WARP <= 1024, "at most 1024 threads");
    static_assert(VEC == 1 || VEC == 4, "scalar or 16-byte steps");
    static_assert(ITEMS % VEC == 0 && REGISTER_ITEMS % VEC == 0, "whole chunks per thread");
    static_assert(0 <= REGISTER_ITEMS && REGISTER_ITEMS <= ITEMS, "registers hold some of a lane's chunks");
    constexpr int WARPS = BLOCK_THREADS / 32;  // warps holding steps
    constexpr int CHUNKS = ITEMS / VEC;
    constexpr int REGISTER_CHUNKS = REGISTER_ITEMS / VEC;  // a lane's first chunks, held in registers
    constexpr int STAGED_ITEMS = ITEMS - REGISTER_ITEMS;   // the rest, staged in shared memory
    constexpr int STAGED_TILE = BLOCK_THREADS * STAGED_ITEMS;
    constexpr int TILE = BLOCK_THREADS * ITEMS;
    static_assert(WARPS <= 32, "one warp scans the warp aggregates");
    static_assert(WALK_LANES == 1 || WALK_LANES == WARP_SIZE, "a serial or a warp-wide walk");
    constexpr bool PACKED_ROWS = SEQUENCES_PER_TILE == 0;
    constexpr bool ROW_WARPS = SEQUENCES_PER_TILE != 1;  // a tile of several rows, one tile each
    static_assert(!ROW_WARPS || ((SEQUENCES_PER_TILE == WARPS || (PACKED_ROWS && ITEMS == VEC)) && VEC == 4 &&
                                 PROTOCOL_WARP == 0 && RUN_CHUNKS == 1),
                  "row warps: a sequence a warp, or packed rows of one chunk a lane; 16-byte steps, no protocol "
                  "warp, no runs");
    static_assert(1 <= SEGMENT && SEGMENT <= WARP_SIZE, "one lane per tile of a segment");
    constexpr int RUN = RUN_CHUNKS;
    constexpr int RUNS = RUN > 1 ? (CHUNKS - REGISTER_CHUNKS) / RUN : 0;  // a lane's runs
    // Runs are measured (and mirrored) only with a protocol warp and register chunks, which also
    // keep the head (below) out of them: without either they gained nothing (P143).
    static_assert(RUN == 1 || (VEC == 4 && PROTOCOL_WARP == 1 && REGISTER_CHUNKS > 0 &&
                               RUNS * RUN == CHUNKS - REGISTER_CHUNKS && 1 <= RUNS && RUNS <= STAGE_GROUPS &&
                               (RUN == 2 || RUN == 4 || RUN == 8)),
                  "runs: 16-byte steps, a protocol warp, register chunks, and the staged chunks in one to "
                  "four runs of 2, 4 or 8 (staged_vector_slot)");
    // With runs, each thread's prefixes of its register chunks and runs, beside the staged steps.
    constexpr int KEPT_PREFIXES = RUN > 1 ? REGISTER_CHUNKS + RUNS : 0;
    static_assert(2 * STAGED_TILE * sizeof(float) + KEPT_PREFIXES * BLOCK_THREADS * sizeof(Affine<float>) <=
                      MAX_DYNAMIC_SHARED_BYTES,
                  "the staged a and b fit in shared memory");

    // The staged part of a and b, then any kept prefixes, in dynamic shared memory: the launch
    // passes 2 * STAGED_TILE * 4 + KEPT_PREFIXES * BLOCK_THREADS * 8 bytes (registry.py's
    // staged_tile_bytes), which may exceed the 48 KB a static array is limited to. It starts after
    // the static variables, on only their 16-byte alignment unless asked for more: 16 bytes off a
    // 128-byte boundary, a tile's 16-byte copies and reads ran up to 14 % slower on an H200 (the
    // 256-thread tiles, whose static bytes were 2160, until P201; the long tile when ClaimedTile
    // grew by 16 bytes, P200: profiling/results/h200/p200-probe-2026-12-01-29.txt).
    extern __shared__ __align__(128) float4 staged_storage[];
    float* staged_a = reinterpret_cast<float*>(staged_storage);
    float* staged_b = staged_a + STAGED_TILE;
    Affine<float>* kept_prefix = reinterpret_cast<Affine<float>*>(staged_b + STAGED_TILE);
    __shared__ ClaimedTile shared_claim;
    __shared__ Affine<float> shared_warp_prefix[WARPS];
    __shared__ float shared_carry;

    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = threadIdx.x >> 5;
    const bool holds_steps = PROTOCOL_WARP == 0 || warp < WARPS;  // always, without a protocol warp
    const bool runs_protocol = warp == (PROTOCOL_WARP ? WARPS : 0);

    constexpr bool STAGGER = PROTOCOL_WARP == 1 && MIN_BLOCKS == 2;  // the shapes P58-P59 measured it on
    // Lanes scanning one row: a warp, or with packed rows as many as the launch's rows take; rows a
    // warp; which row of the block is this lane's. All before claim_tile's barrier, and the divisions
    // by one reciprocal: packed rows' blocks are many and short, and ran as fast as they issue (one
    // runtime division more cost 1-6 %, P227).
    // Packed rows: a row's steps and the launch's longest row head.
    const int span = PACKED_ROWS ? int(layout.length) + layout.longest_head : 0;
    const int row_lanes = PACKED_ROWS ? (span + VEC - 1) / VEC : WARP_SIZE;
    const float per_row = PACKED_ROWS ? __fdividef(1.0f, float(row_lanes)) : 0.0f;
    const int rows_a_warp = PACKED_ROWS ? small_quotient(WARP_SIZE, per_row) : 1;
    const int row_in_warp = PACKED_ROWS ? small_quotient(int(lane), per_row) : 0;
    const int step_lane = int(lane) - row_in_warp * row_lanes;  // this lane's place among its row's lanes
    const int row_in_block = row_in_warp < rows_a_warp ? int(warp) * rows_a_warp + row_in_warp : -1;  // -1: none
    // With row warps, the tile is this thread's row (tile_state.cuh's claim_tile); lanes past a warp's
    // rows or past the last sequence load, scan and store nothing, but keep to the block's barriers.
    const ClaimedTile claimed = claim_tile(ws, layout, tiles_per_seq, num_tiles, shared_claim, STAGGER, CHUNKS_FIRST,
                                           ROW_WARPS, WARPS * rows_a_warp, row_in_block);
    const bool past_last_sequence = ROW_WARPS && claimed.tile >= layout.num_seqs;
    const long long tile = claimed.tile;
    const unsigned generation = claimed.generation;
    // Row warps take one tile a row (the host's contract): no division.
    const long long seq = ROW_WARPS ? tile : tile / tiles_per_seq;
    const long long chunk = ROW_WARPS ? 0 : tile - seq * tiles_per_seq;
    // seq_layout.cuh's head: where the layout has one, this sequence is scanned from the boundary of
    // `layout.head` elements (a 128- or 16-byte boundary) at or before its step 0, whose distance
    // from it a, b and out share (the host checked). So every row of a batch takes 16-byte steps
    // from a line, whatever its length, without the host knowing where each row starts.
    const int row_head = VEC == 4 && layout.head
        ? int(((reinterpret_cast<unsigned long long>(a) >> 2) + claimed.in_offset) & (layout.head - 1)) : 0;
    const TileSteps<ROW_WARPS ? WARP_SIZE * ITEMS : TILE> steps(claimed, chunk, layout, a, b, out, row_head);
    const int valid = past_last_sequence ? 0 : steps.valid;
    const float* a_tile = steps.a;
    const float* b_tile = steps.b;
    float* out_tile = steps.out;

    // Lane `lane` of warp `warp` owns chunk c's steps first_step(warp_first, c, step_lane) .. + VEC of
    // the tile (of its row, with row warps: step_lane is its place among the row's lanes). Its first
    // REGISTER_CHUNKS chunks are loaded into registers, the others copied into shared memory, packed
    // per warp: staged chunk c sits at staged_slot(c). With runs, lane l also reads vector j of run r,
    // which starts at step run_first(r, j), from run_slot(r, j).
    const int warp_first = ROW_WARPS ? 0 : warp_span_start<ITEMS>(int(warp));
    const int staged_first = warp_span_start<STAGED_ITEMS>(int(warp));
    auto staged_slot = [&](int c) {
        return staged_first + VEC * staged_vector_slot<RUN>((c - REGISTER_CHUNKS) * WARP_SIZE + int(lane));
    };
    auto run_first = [&](int r, int j) {
        return run_step<VEC, RUN>(warp_first, REGISTER_CHUNKS + r * RUN, int(lane), j);
    };
    auto run_slot = [&](int r, int j) {
        return staged_first + VEC * staged_vector_slot<RUN>((r * WARP_SIZE + int(lane)) * RUN + j);
    };
    // Staged chunk c belongs to copy group stage_group(c), 0 .. STAGE_GROUPS_USED - 1, in order: with
    // runs, one group a run. The scalar path waits for all its copies at once: with groups, ptxas
    // spilled the short shape.
    constexpr int STAGED_CHUNKS = CHUNKS - REGISTER_CHUNKS > 0 ? CHUNKS - REGISTER_CHUNKS : 1;
    constexpr int STAGE_GROUPS_USED = RUN > 1   ? RUNS
                                      : VEC == 1 ? 1
                                      : STAGED_CHUNKS < STAGE_GROUPS ? STAGED_CHUNKS : STAGE_GROUPS;
    auto stage_group = [&](int c) { return (c - REGISTER_CHUNKS) * STAGE_GROUPS_USED / STAGED_CHUNKS; };
    Affine<float> held[REGISTER_CHUNKS > 0 ? REGISTER_CHUNKS : 1][VEC];
    // Steps before the sequence's first (the row head above; 16-byte path only) were loaded with the
    // first vectors: the part of the 128-byte line holding step 0 before it, which lies in the same
    // page as step 0, so the read cannot fault, and inside the allocation wherever the allocation
    // starts on a line (cudaMalloc's start at least 256-byte aligned: CUDA C++ Programming Guide,
    // "Device Memory Accesses"). They are not the caller's: every read here makes them the
    // identity. Only lanes 0-7 of warp 0 (of every row's lanes, with row warps) hold them, in chunk 0
    // (head < 32 < 32 * VEC; a register chunk wherever there are runs), so the maps the rewrite composes
    // from the warp span's start stay the identity there too, and the final store skips them.
    const int head = VEC == 4 && (warp == 0 || ROW_WARPS) ? steps.head : 0;
    auto chunk_maps = [&](int c, Affine<float> (&maps)[VEC]) {
        if (c < REGISTER_CHUNKS) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) maps[v] = held[c < REGISTER_CHUNKS ? c : 0][v];
        } else {
            read_staged<VEC>(staged_a + staged_slot(c), staged_b + staged_slot(c),
                             first_step<VEC>(warp_first, c, step_lane), valid, maps);
        }
        if (c == 0 && head > 0) {
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                if (first_step<VEC>(warp_first, 0, step_lane) + v < head) maps[v] = affine_identity<float>();
        }
    };
    // Lane l's maps of vector j of run r (steps past the sequence's end are identities).
    auto run_maps = [&](int r, int j, Affine<float> (&maps)[VEC]) {
        read_staged<VEC>(staged_a + run_slot(r, j), staged_b + run_slot(r, j), run_first(r, j), valid, maps);
    };
    // One piece (a chunk or a run) of the warp's running scan: `lane_map`, this lane's steps of it
    // composed serially, scanned across the warp (across the row's lanes, with row warps); returns the
    // map from the warp span's (row's) start to just before this lane's first step of the piece, and
    // moves `warp_running` past the piece.
    auto lane_prefix_of = [&](Affine<float> lane_map, Affine<float>& warp_running) {
        const Affine<float> inclusive = group_inclusive_scan(lane_map, unsigned(step_lane), unsigned(row_lanes));
        const Affine<float> prefix = compose(group_exclusive_from_inclusive(inclusive, unsigned(step_lane)),
                                             warp_running);
        // Packed rows are one chunk a lane: nothing follows the piece. Elsewhere a row is the warp's.
        if (!PACKED_ROWS) warp_running = compose(shuffle_map(inclusive, WARP_SIZE - 1), warp_running);
        return prefix;
    };
    auto chunk_prefix = [&](const Affine<float> (&maps)[VEC], Affine<float>& warp_running) {
        Affine<float> lane_map = affine_identity<float>();
#pragma unroll
        for (int v = 0; v < VEC; ++v) lane_map = compose(maps[v], lane_map);
        return lane_prefix_of(lane_map, warp_running);
    };
    // With runs, kept prefix k of this thread: its register chunk k, then its run k - REGISTER_CHUNKS.
    auto kept = [&](int k) -> Affine<float>& { return kept_prefix[k * BLOCK_THREADS + int(threadIdx.x)]; };

    // The lane prefixes are kept for the second pass: in registers when no steps are held there, in
    // shared memory with runs (kept, above). Otherwise the second pass or the rewrite computes them
    // again (the same operations, so the same bits).
    constexpr bool KEEP_PREFIXES = REGISTER_CHUNKS == 0 && RUN == 1;
    Affine<float> lane_prefix[KEEP_PREFIXES ? CHUNKS : 1];
    if (holds_steps) {
        // Steps are requested in the order the first pass uses them: the register chunks, then the
        // staged chunks in up to STAGE_GROUPS groups, so that the scan of a group's chunks starts
        // once that group has landed, while later groups are still on their way. Without runs, each
        // lane reads back only what it copied itself: its own waits are all the ordering needed;
        // runs read what other lanes of the warp copied, after a warp barrier. (The CPU mirror
        // cannot check the group counts; the GPU tests do.)
#pragma unroll
        for (int c = 0; c < REGISTER_CHUNKS; ++c)
            load_steps<VEC>(a_tile, b_tile, layout.in_time_stride, first_step<VEC>(warp_first, c, step_lane), valid,
                            held[c]);
#pragma unroll
        for (int c = REGISTER_CHUNKS; c < CHUNKS; ++c) {
            const int first = first_step<VEC>(warp_first, c, step_lane);
            stage_steps<VEC>(staged_a + staged_slot(c), a_tile, layout.in_time_stride, first, valid);
            stage_steps<VEC>(staged_b + staged_slot(c), b_tile, layout.in_time_stride, first, valid);
            if (STAGE_GROUPS_USED > 1 && (c + 1 == CHUNKS || stage_group(c + 1) != stage_group(c)))
                commit_staged_group();
        }
        if (STAGE_GROUPS_USED == 1) wait_for_staged_steps();

        Affine<float> warp_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < (RUN > 1 ? REGISTER_CHUNKS : CHUNKS); ++c) {
            if (STAGE_GROUPS_USED > 1 && c >= REGISTER_CHUNKS &&
                (c == REGISTER_CHUNKS || stage_group(c) != stage_group(c - 1)))
                wait_for_staged_groups(STAGE_GROUPS_USED - 1 - stage_group(c));
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            const Affine<float> prefix = chunk_prefix(maps, warp_running);
            if (KEEP_PREFIXES) lane_prefix[KEEP_PREFIXES ? c : 0] = prefix;
            if (RUN > 1) kept(c) = prefix;
        }
#pragma unroll
        for (int r = 0; r < RUNS; ++r) {
            if (STAGE_GROUPS_USED > 1) wait_for_staged_groups(RUNS - 1 - r);
            __syncwarp();  // a run's vectors were copied by other lanes: each lane's wait, then this barrier
            Affine<float> lane_map = affine_identity<float>();
#pragma unroll
            for (int j = 0; j < RUN; ++j) {
                Affine<float> maps[VEC];
                run_maps(r, j, maps);
#pragma unroll
                for (int v = 0; v < VEC; ++v) lane_map = compose(maps[v], lane_map);
            }
            kept(REGISTER_CHUNKS + r) = lane_prefix_of(lane_map, warp_running);
        }
        if (lane == 0) shared_warp_prefix[warp] = warp_running;
    }
    __syncthreads();

    if (runs_protocol && !ROW_WARPS) {
        // Scan the warp aggregates; lane w ends with the map of warps 0..w.
        const Affine<float> warp_map = lane < WARPS ? shared_warp_prefix[lane] : affine_identity<float>();
        const Affine<float> warps_inclusive = warp_inclusive_scan(warp_map);
        const Affine<float> tile_map = shuffle_map(warps_inclusive, WARPS - 1);
        const Affine<float> warps_exclusive = exclusive_from_inclusive(warps_inclusive);
        SegmentPrefix segment_held;  // lane 0's segment prefix during the look-back
        const float carry = tile_carry<LOOKBACK_DEPTH, WALK_LANES, SEGMENT, ATOMIC_POLLS != 0>(
            ws, h0, tile, seq, chunk, tiles_per_seq, generation, tile_map, segment_held);
        // With one warp, the compiler reads shared_warp_prefix's one element above in every lane (the
        // lanes past WARPS drop the value): this barrier orders those reads before lane 0's write.
        if (WARPS == 1) __syncwarp();
        if (lane < WARPS) shared_warp_prefix[lane] = warps_exclusive;
        if (lane == 0) shared_carry = carry;
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
    } else if (runs_protocol) {  // row warps: each sequence's carry is its h0 (below), nothing to wait for
        if (generation == WRAPPING_GENERATION) finish_wrapping_launch(ws, num_tiles);
    } else if (PROTOCOL_WARP && RUN == 1) {
        // While the protocol warp waits: each step's map becomes the map from the warp span's start
        // through that step, where the step is held.
        Affine<float> again_running = affine_identity<float>();
#pragma unroll
        for (int c = 0; c < CHUNKS; ++c) {
            Affine<float> maps[VEC];
            chunk_maps(c, maps);
            Affine<float> through =
                KEEP_PREFIXES ? lane_prefix[KEEP_PREFIXES ? c : 0] : chunk_prefix(maps, again_running);
#pragma unroll
            for (int v = 0; v < VEC; ++v) maps[v] = through = compose(maps[v], through);
            if (c < REGISTER_CHUNKS) {
#pragma unroll
                for (int v = 0; v < VEC; ++v) held[c < REGISTER_CHUNKS ? c : 0][v] = maps[v];
            } else {
                write_staged<VEC>(staged_a + staged_slot(c), staged_b + staged_slot(c),
                                  first_step<VEC>(warp_first, c, step_lane), valid, maps);
            }
        }
    }
    __syncthreads();
    if (!holds_steps) return;

    // The state at the start of this warp's span (from the warp prefix map), then each step's
    // state: with the rewrite (a protocol warp, no runs), its rewritten map applied to that state;
    // otherwise the state at the start of each lane's chunk or run (from its prefix map), then that
    // lane's steps one fma at a time. Across lanes and warps the maps are composed products of a's,
    // not the sequential order: that is where float32 rounding, overflow and Inf * 0 can differ
    // from the reference.
    // Row warps: a sequence's state before its first step is its h0, applied through the identity
    // as a one-warp tile applies its warp's prefix (the same bits: 1 * -0 + 0 is +0 there too).
    const float warp_start_state =
        ROW_WARPS ? apply(affine_identity<float>(), h0 != nullptr && !past_last_sequence ? h0[seq] : 0.0f)
                  : apply(shared_warp_prefix[warp], shared_carry);
    Affine<float> again_running = affine_identity<float>();
#pragma unroll
    for (int c = 0; c < (RUN > 1 ? REGISTER_CHUNKS : CHUNKS); ++c) {
        Affine<float> maps[VEC];
        chunk_maps(c, maps);
        float states[VEC];
        if (PROTOCOL_WARP && RUN == 1) {
#pragma unroll
            for (int v = 0; v < VEC; ++v) states[v] = apply(maps[v], warp_start_state);
        } else {
            const Affine<float> prefix = RUN > 1          ? kept(c)
                                         : KEEP_PREFIXES ? lane_prefix[KEEP_PREFIXES ? c : 0]
                                                         : chunk_prefix(maps, again_running);
            float state = apply(prefix, warp_start_state);
#pragma unroll
            for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[v], state);
        }
        store_steps<VEC>(out_tile, layout.out_time_stride, first_step<VEC>(warp_first, c, step_lane), valid, states,
                         head);
    }
    // Runs: each lane's steps of a run from its kept prefix, one fma at a time. The states are in
    // the run's order, lane by lane; stored from there, a warp's 16-byte stores would each cover
    // twice the lines, half of each sector, and ran a fifth slower (profiling/NOTES.md, item 93).
    // So they go through the run's own a slots, which no other lane reads any more, and out a chunk
    // at a time.
    if constexpr (RUN > 1) {  // (VEC is 4 here: the states' helpers move 16 bytes)
#pragma unroll
        for (int r = 0; r < RUNS; ++r) {
            float state = apply(kept(REGISTER_CHUNKS + r), warp_start_state);
#pragma unroll
            for (int j = 0; j < RUN; ++j) {
                Affine<float> maps[VEC];
                run_maps(r, j, maps);
                float states[VEC];
#pragma unroll
                for (int v = 0; v < VEC; ++v) states[v] = state = apply(maps[v], state);
                write_states(staged_a + run_slot(r, j), states);
            }
            __syncwarp();  // the chunks below were written by other lanes of the warp
#pragma unroll
            for (int c = REGISTER_CHUNKS + r * RUN; c < REGISTER_CHUNKS + (r + 1) * RUN; ++c) {
                float states[VEC];
                read_states(staged_a + staged_slot(c), states);
                store_steps<VEC>(out_tile, layout.out_time_stride, first_step<VEC>(warp_first, c, step_lane), valid,
                                 states, head);
            }
        }
    }
}

}  // namespace rtscan
