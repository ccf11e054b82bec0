// The inter-block protocol of the single-pass scan: tile and segment descriptors, the two-level
// look-back, and the memory-ordering helpers every cross-block access goes through.
//
// Two levels. Consecutive tiles of one sequence form segments of SEGMENT_TILES (32) tiles. The
// carry into a tile is (the composed maps of the earlier tiles of its segment) applied to (the
// state at the end of the previous segment). The first factor needs only the segment mates'
// aggregates, one warp-wide read; the second is found by a decoupled look-back over segments.
// One level over tiles (SEGMENT 1: each tile its own segment) walks and folds one tile per step;
// on an H200 that walk, not the memory, bounded the scan while warp 0 ran it (profiling/
// PREDICTIONS.md, P1 and P4): a segment step covers 32 tiles. With a protocol warp running it, on
// launches of several waves, one level won again (sm_90's large shape; P48-P50).
//
// Workspace (one per stream, allocated and zeroed once by rtscan/_workspace.py):
//   ticket word (64-bit): low 32 bits the next tile ticket, high 32 bits the generation
//   finished (32-bit): tiles finished, counted only in the rare launch that wraps the generation
//   then five arrays of `capacity` 64-bit words:
//   tile aggregate_a[t], aggregate_b[t]   tile t's own composed map (A, B), indexed by tile
//   segment inclusive[g]                  the state at the end of segment g (carry of segment g+1)
//   segment aggregate_a[g], aggregate_b[g] segment g's composed map
//   (a segment index g = sequence * segments per sequence + segment position, below the tiles)
//
// Every descriptor word is self-describing: low 32 bits the generation of the launch that wrote
// it, high 32 bits the float. A reader trusts a word only if it carries this launch's generation,
// so a word is never read together with another word it depends on, and no acquire/release
// pairing is needed: single-copy atomicity of aligned 64-bit accesses is the whole argument.
// Words from earlier launches carry an older generation and read as "not yet published"; zeroed
// memory reads so too, because generations start at 1 and skip 0.
//
// The generation advances once per launch, on the device, without a memset or a fence: a block
// draws its ticket and reads the generation in ONE atomic on the ticket word (draw_ticket), and
// the block that draws the last ticket stores the next generation with the ticket reset to 0.
// CUDA graph replays therefore stay correct. Once every 2^32 - 1 launches the generation would
// wrap; that launch instead counts finished tiles and its last block clears every descriptor
// before starting again at generation 1 (finish_wrapping_launch).
//
// Forward progress: a block's tile follows from its ticket (seq_layout.cuh's tile_of_ticket), drawn
// when it starts (after claim_tile's stagger, if any), in an order where each tile of a sequence
// comes after the earlier ones, and a segment's descriptors are published by its last tile, so
// every word a block waits for is written by a block with an earlier ticket, which is already
// resident and never waits for a later one.
// Block scheduling order is therefore irrelevant. (Launches whose sequences are one tile each, so
// that no tile waits on another, take tiles by block index from two waves on, or at most one an
// SM: claim_tile.)
//
// Determinism: the end states of segments form one sequential chain, H[g] = fma(A[g], H[g-1],
// B[g]) with (A[g], B[g]) the segment's aggregate, and the look-back rebuilds exactly that chain
// from whichever finished segment it finds, one fma per segment. The in-segment factor is a
// fixed-order warp scan of the segment mates' aggregates (warp_scan.cuh). Neither depends on
// which predecessors happened to be finished, so the output is bitwise identical run to run.
#pragma once

#include "affine.cuh"
#include "indexing.cuh"
#include "perturb.cuh"
#include "seq_layout.cuh"
#include "warp_scan.cuh"

namespace rtscan {

using word64 = unsigned long long;

constexpr unsigned FIRST_GENERATION = 1;
constexpr unsigned WRAPPING_GENERATION = 0xffffffffu;  // the launch after it starts again at 1

// One level of descriptors. Tiles publish only aggregates (inclusive is null for them).
struct Descriptors {
    word64* inclusive;
    word64* aggregate_a;
    word64* aggregate_b;
};

struct TileWorkspace {
    word64* ticket;      // then `finished` and padding, then the five descriptor arrays
    long long capacity;  // tiles (and so segments) each descriptor array can hold

    __device__ unsigned* finished() const { return reinterpret_cast<unsigned*>(ticket + 1); }
    __device__ word64* descriptor_words() const { return ticket + 2; }
    __device__ long long descriptor_word_count() const { return 5 * capacity; }
    __device__ Descriptors tiles() const {
        return {nullptr, descriptor_words(), descriptor_words() + capacity};
    }
    __device__ Descriptors segments() const {
        word64* first = descriptor_words() + 2 * capacity;
        return {first, first + capacity, first + 2 * capacity};
    }
};

// ---- memory-ordering helpers: the only cross-block accesses in the project -------------------

// Contract: one single-copy-atomic 64-bit store, visible to every block of the grid (.gpu scope);
// no ordering with any other access. Enough because every descriptor word carries its generation.
__device__ __forceinline__ void store_relaxed_gpu(word64* address, word64 value) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

// Contract: one single-copy-atomic 64-bit read of the coherent (L2) value at .gpu scope, never a
// stale L1 line; no ordering with any other access. Two forms, the same contract:
//   ATOMIC false: ld.relaxed.gpu, a strong load.
//   ATOMIC true: atom.relaxed.gpu.or with 0, a read-modify-write that the L2 executes and that
//     writes back the value it read. Being one atomic RMW, no store can fall between its read and
//     its write, so it never undoes a publication; it may write only where a descriptor may be
//     written, hence the non-const address. The words it touches are this workspace's
//     descriptors, which finish_wrapping_launch clears only after every block's accesses.
// Why two: on an H200, one lane per SM polling by strong loads cut what that SM's cp.async and
// TMA copies brought in by about 30 % (4.5 TB/s over 132 SMs to 3.0-3.3); polling by atomics cut
// nothing, though each atomic poll took longer (median 1.2-1.4 us under copies, against 0.4-0.5).
// So atomics pay where the SM's other block is loading while this one waits (P86, P87:
// results/h200/poll-under-load-2026-11-30.txt, p86-ab-2026-11-30.txt, p87-ab-2026-11-30.txt),
// and cost where the poll's round trip is the whole wait. Each shape chooses (tuning.py).
template <bool ATOMIC>
__device__ __forceinline__ word64 poll_relaxed_gpu(word64* address) {
    word64 value;
    if (ATOMIC)
        asm volatile("atom.relaxed.gpu.global.or.b64 %0, [%1], 0;" : "=l"(value) : "l"(address) : "memory");
    else
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    return value;
}

__device__ __forceinline__ void store_relaxed_gpu(unsigned* address, unsigned value) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Contract: a relaxed 64-bit atomic increment at .gpu scope. All increments of one address form
// one coherence order, and a later store to that address by a thread that observed the final
// count is ordered after all of them; nothing else is ordered.
__device__ __forceinline__ word64 fetch_add_relaxed_gpu(word64* address, word64 value) {
    word64 old;
    asm volatile("atom.relaxed.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(address), "l"(value) : "memory");
    return old;
}

// Contract: an acquire-release atomic increment at .gpu scope. Release: everything this thread
// did before, and what its warp did before a __syncwarp, happens-before any thread that later
// acquires the counter. Acquire: the thread that brings the count to its final value sees all of
// that from every other block.
__device__ __forceinline__ unsigned fetch_add_acq_rel_gpu(unsigned* address, unsigned value) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");
    return old;
}

// ---- descriptor words --------------------------------------------------------------------------

__device__ __forceinline__ word64 pack_word(unsigned generation, float value) {
    return (word64(__float_as_uint(value)) << 32) | generation;
}

__device__ __forceinline__ unsigned word_tag(word64 word) { return unsigned(word); }
__device__ __forceinline__ float word_value(word64 word) { return __uint_as_float(unsigned(word >> 32)); }

// Publish an entry's own map (a tile's or a segment's), so successors can pass over it before its
// carry-in is known.
__device__ __forceinline__ void publish_aggregate(const Descriptors& level, long long entry, unsigned generation,
                                                  Affine<float> aggregate) {
    store_relaxed_gpu(level.aggregate_a + entry, pack_word(generation, aggregate.a));
    store_relaxed_gpu(level.aggregate_b + entry, pack_word(generation, aggregate.b));
}

// Publish the state at the end of a segment: the carry-in of the next one.
__device__ __forceinline__ void publish_inclusive(const Descriptors& level, long long entry, unsigned generation,
                                                  float state) {
    store_relaxed_gpu(level.inclusive + entry, pack_word(generation, state));
}

// ---- the look-back ---------------------------------------------------------------------------

// What one lane saw of one predecessor: the tags already checked, only the floats kept.
struct PredecessorView {
    bool finished;      // its inclusive state is published
    bool aggregated;    // its aggregate is published
    float state, a, b;
};

template <bool ATOMIC_POLLS>
__device__ __forceinline__ PredecessorView read_predecessor(const Descriptors& level, long long predecessor,
                                                            unsigned generation) {
    // Three independent reads; the caller issues those of every depth before using any.
    const word64 inclusive = poll_relaxed_gpu<ATOMIC_POLLS>(level.inclusive + predecessor);
    const word64 aggregate_a = poll_relaxed_gpu<ATOMIC_POLLS>(level.aggregate_a + predecessor);
    const word64 aggregate_b = poll_relaxed_gpu<ATOMIC_POLLS>(level.aggregate_b + predecessor);
    return {word_tag(inclusive) == generation,
            word_tag(aggregate_a) == generation && word_tag(aggregate_b) == generation,
            word_value(inclusive), word_value(aggregate_a), word_value(aggregate_b)};
}

// Called by all 32 lanes of one warp. Returns the state just before segment `segment`, whose
// position in its sequence is `position` > 0 (segment 0 starts from h0 and never looks back).
//
// A window is LANES * DEPTH predecessors, read with one round of loads: lane l < LANES, depth d
// looks 1 + l + LANES d + LANES DEPTH w segments back in window w (indexing.cuh). LANES = 32 is
// the warp-parallel walk, LANES = 1 the serial walk (one thread, one predecessor per round);
// DEPTH is a tuning parameter. Lanes at or past LANES, and lanes whose predecessor would lie
// before the sequence's first segment, read nothing, so no read leaves the descriptor arrays and
// none touches another sequence's segments. Segment 0 of a sequence publishes its end state
// whenever a segment follows, and never its aggregate, so the walk waits there rather than
// passing over it.
//
// A walk past the first window folds back through the nearer ones. The aggregates of the first
// STASHED_WINDOWS windows are kept in shared memory as the walk passes them, each lane its own,
// so that folding back costs no second round trip for those (P76: in a launch's first wave no
// tile is finished yet, and tile k walks back about k / SPAN windows); farther ones are read again.
constexpr int STASHED_WINDOWS = 4;

template <int DEPTH, int LANES = WARP_SIZE, bool ATOMIC_POLLS = false>
__device__ __forceinline__ float lookback_carry(const Descriptors& segments, long long segment, long long position,
                                                unsigned generation) {
    constexpr int SPAN = LANES * DEPTH;
    const int lane = threadIdx.x & 31;
    const PredecessorView nothing = {false, false, 0.0f, 0.0f, 0.0f};
    // Written and read back by the same lane only: no barrier is needed. One warp a block walks.
    __shared__ float2 stashed[STASHED_WINDOWS][DEPTH][LANES];

    for (long long window = 0;; ++window) {
        PredecessorView seen[DEPTH];
        int first_finished;  // window position (LANES d + lane) of the nearest finished predecessor
        while (true) {
#pragma unroll
            for (int d = 0; d < DEPTH; ++d) {
                const long long distance = lookback_distance<DEPTH, LANES>(lane, d, window);
                const bool reads = lane < LANES && distance <= position;
                seen[d] = reads ? read_predecessor<ATOMIC_POLLS>(segments, segment - distance, generation) : nothing;
            }
            first_finished = SPAN;
#pragma unroll
            for (int d = DEPTH - 1; d >= 0; --d) {
                const unsigned finished_lanes = __ballot_sync(0xffffffffu, seen[d].finished);
                if (finished_lanes) first_finished = window_position<LANES>(d, __ffs(finished_lanes) - 1);
            }
            // Only predecessors nearer than the nearest finished one must show their aggregate.
            bool ready = true;
#pragma unroll
            for (int d = 0; d < DEPTH; ++d) {
                const long long distance = lookback_distance<DEPTH, LANES>(lane, d, window);
                const bool needed =
                    lane < LANES && distance <= position && window_position<LANES>(d, lane) < first_finished;
                ready = ready && (!needed || seen[d].aggregated);
            }
            if (__all_sync(0xffffffffu, ready)) break;
        }
        if (first_finished == SPAN) {  // a whole window of aggregates: look further back
            if (window < STASHED_WINDOWS && lane < LANES) {
#pragma unroll
                for (int d = 0; d < DEPTH; ++d) stashed[window][d][lane] = make_float2(seen[d].a, seen[d].b);
            }
            continue;
        }

        // Fold forward from the finished predecessor, nearest last, one fma per segment: first the
        // rest of this window, then each nearer window, its (immutable) aggregates taken from the
        // stash or read again.
        float state = 0.0f;
#pragma unroll
        for (int d = 0; d < DEPTH; ++d) {
            const float candidate = __shfl_sync(0xffffffffu, seen[d].state, unsigned(first_finished) % LANES);
            if (d == first_finished / LANES) state = candidate;
        }
        for (long long nearer = window; nearer >= 0; --nearer) {
            if (nearer != window && nearer < STASHED_WINDOWS) {
#pragma unroll
                for (int d = 0; d < DEPTH; ++d)
                    if (lane < LANES) {
                        const float2 map = stashed[nearer][d][lane];
                        seen[d].a = map.x;
                        seen[d].b = map.y;
                    }
            } else if (nearer != window) {
                // Tags not checked again: this warp saw each of these words carry this launch's
                // generation, a word is written once per launch, and read-read coherence keeps a
                // later read of the same address by the same thread from returning an older value.
#pragma unroll
                for (int d = 0; d < DEPTH; ++d)
                    if (lane < LANES)
                        seen[d] = read_predecessor<ATOMIC_POLLS>(
                            segments, segment - lookback_distance<DEPTH, LANES>(lane, d, nearer), generation);
            }
            // Fully unrolled with a predicate rather than a loop bound, so that every shuffle is
            // independent of `state` and can be issued early: only the fmas form the chain.
            const int start = nearer == window ? first_finished - 1 : SPAN - 1;
#pragma unroll
            for (int d = DEPTH - 1; d >= 0; --d) {
                if (window_position<LANES>(d, 0) > start) continue;  // warp-uniform
#pragma unroll
                for (int source = LANES - 1; source >= 0; --source) {
                    const Affine<float> map = {__shfl_sync(0xffffffffu, seen[d].a, source),
                                               __shfl_sync(0xffffffffu, seen[d].b, source)};
                    if (window_position<LANES>(d, source) <= start) state = apply(map, state);
                }
            }
        }
        return state;
    }
}

// What a tile takes from its segment: the composed maps of the segment's tiles before it, and
// through it (the segment's aggregate when the tile is the segment's last).
struct SegmentPrefix {
    Affine<float> before;
    Affine<float> through;
};

// Called by all 32 lanes of one warp, for the tile at `position` (0 .. SEGMENT_TILES - 1) in its
// segment, whose own map is `own`. Lane k < position waits for the aggregate of the segment's
// tile k (an earlier ticket, so it is published or about to be), lane `position` holds `own`,
// later lanes the identity; one fixed-order warp scan then composes them. Lane k's result
// depends only on the maps of tiles 0..k, so `before` is the same whichever tile computes it.
template <bool ATOMIC_POLLS>
__device__ __forceinline__ SegmentPrefix segment_prefix(const Descriptors& tiles, long long tile, int position,
                                                        Affine<float> own, unsigned generation) {
    const int lane = threadIdx.x & 31;
    Affine<float> map = affine_identity<float>();
    if (lane < position) {
        const long long mate = tile - position + lane;
        word64 a, b;
        // Polled flat out: sleeping between polls made no difference (PREDICTIONS.md, P5).
        do {  // two independent reads per try; each word carries its own generation
            a = poll_relaxed_gpu<ATOMIC_POLLS>(tiles.aggregate_a + mate);
            b = poll_relaxed_gpu<ATOMIC_POLLS>(tiles.aggregate_b + mate);
        } while (word_tag(a) != generation || word_tag(b) != generation);
        map = {word_value(a), word_value(b)};
    } else if (lane == position) {
        map = own;
    }
    const Affine<float> inclusive = warp_inclusive_scan(map);
    const Affine<float> before = shuffle_map(inclusive, position == 0 ? 0 : position - 1);
    return {position == 0 ? affine_identity<float>() : before, shuffle_map(inclusive, position)};
}

// A block's side of the protocol once its tile's own map `tile_map` is known, called by the 32
// lanes of one warp: publish the aggregate, compose the segment mates' (segment_prefix), look
// back over segments, publish the segment's aggregate and end state. Returns, on lane 0, the state
// just before tile `tile` (the `chunk`-th of sequence `seq`). `held` keeps lane 0's segment prefix
// during the look-back: shared memory where registers are scarce (hillis_steele.cu), a local
// elsewhere. lookback.cu, blelloch.cu and hillis_steele.cu all take their carry from here.
template <int DEPTH, int LANES = WARP_SIZE, int SEGMENT = SEGMENT_TILES, bool ATOMIC_POLLS = false>
__device__ __forceinline__ float tile_carry(const TileWorkspace& ws, const float* __restrict__ h0, long long tile,
                                            long long seq, long long chunk, long long tiles_per_seq,
                                            unsigned generation, Affine<float> tile_map, SegmentPrefix& held) {
    // A sequence of one tile publishes nothing and waits for nothing: its carry is its h0, the value
    // the protocol below would return, without its scan of segment mates on the way (P225).
    if (tiles_per_seq == 1) return h0 != nullptr ? h0[seq] : 0.0f;
    const int lane = int(threadIdx.x) & (WARP_SIZE - 1);
    const int position = place_in_segment<SEGMENT>(chunk);
    const long long segment_position = segment_of<SEGMENT>(chunk);
    const long long segment = seq * segments_per_sequence<SEGMENT>(tiles_per_seq) + segment_position;
    const bool has_successor = chunk + 1 < tiles_per_seq;
    const bool ends_segment = position == SEGMENT - 1;

    // Publish first: later segment mates wait for this aggregate (the last one's is folded into
    // the segment's aggregate instead, and nobody reads it on its own).
    perturb(tile, 0);
    if (lane == 0 && has_successor && !ends_segment) publish_aggregate(ws.tiles(), tile, generation, tile_map);
    const SegmentPrefix prefix = segment_prefix<ATOMIC_POLLS>(ws.tiles(), tile, position, tile_map, generation);
    // A sequence's first segment publishes only its end state (its carry is h0, known at once):
    // a look-back that saw its aggregate alone would walk on past the sequence start.
    if (lane == 0 && has_successor && ends_segment && segment_position > 0)
        publish_aggregate(ws.segments(), segment, generation, prefix.through);
    if (lane == 0) held = prefix;
    perturb(tile, 1);
    float segment_carry;  // the state just before this segment
    if (segment_position == 0)
        segment_carry = h0 != nullptr ? h0[seq] : 0.0f;
    else
        segment_carry =
            lookback_carry<DEPTH, LANES, ATOMIC_POLLS>(ws.segments(), segment, segment_position, generation);
    if (lane == 0 && has_successor && ends_segment)
        publish_inclusive(ws.segments(), segment, generation, apply(held.through, segment_carry));
    return lane != 0 || position == 0 ? segment_carry : apply(held.before, segment_carry);
}

// Called by one thread when its block starts: draws the block's tile ticket and reads the
// generation in one atomic. The block that draws the last ticket stores the next generation with
// the ticket reset to 0; by fetch_add_relaxed_gpu's contract that store follows every other
// block's draw, so no block of this launch can see it, and the next launch on the stream, which
// starts after this one has finished, sees it.
__device__ __forceinline__ void draw_ticket(const TileWorkspace& ws, long long num_tiles, long long& tile,
                                            unsigned& generation) {
    const word64 drawn = fetch_add_relaxed_gpu(ws.ticket, word64(1));
    generation = unsigned(drawn >> 32);
    tile = (long long)unsigned(drawn);
    if (tile == num_tiles - 1 && generation != WRAPPING_GENERATION)
        store_relaxed_gpu(ws.ticket, word64(generation + 1) << 32);
}

// A block's tile, drawn by its thread 0 and shared with the block: the ticket, the launch's
// generation, and where the tile's sequence starts in the input and the output (seq_layout.cuh).
struct ClaimedTile {
    long long tile;
    unsigned generation;
    long long in_offset, out_offset;
};

// How long the second block of each SM waits before its first ticket when `stagger` asks it to.
constexpr unsigned STAGGER_NS = 4000;

// Called by every thread of the block before anything else (it holds a __syncthreads): thread 0
// draws the ticket, the block reads it back from `shared`.
//
// With `stagger` (shapes of two blocks an SM), in launches of at least 4 x nsmid tiles (two waves
// of them): a launch's blocks otherwise start together, load together, then scan and store
// together while the memory idles (profiling/NOTES.md, item 41). Blocks nsmid .. 2 nsmid - 1,
// about the second block of each SM as the scheduler places the first wave (%nsmid counts SM
// identifiers, at least the SMs; on an H200 blocks 0-131 took one SM each and an SM's second
// block was 124-132 later: P107's probe, NOTES item 71), sleep about 4 us first (__nanosleep is
// approximate): half a tile's load, a quarter of its life, so that an SM's two blocks drift apart. The sleep comes
// before the ticket: no tile ever waits on a sleeping block, and every drawn ticket's
// predecessors have started (the look-back's forward-progress assumption). Shorter launches skip
// it: on one wave it only delayed half the blocks, -7 % on 64 x 65536 (P58, P59;
// profiling/results/h200/p58-ab-2026-11-30.txt, p59-ab-2026-11-30.txt). With atomic polls it
// still pays: without it 2^24-2^28 ran 2-5 % slower (P90, p90-ab-2026-11-30.txt).
__device__ __forceinline__ ClaimedTile claim_tile(const TileWorkspace& ws, const SeqLayout& layout,
                                                  long long tiles_per_seq, long long num_tiles, ClaimedTile& shared,
                                                  bool stagger = false, bool chunks_first = false,
                                                  bool several_rows = false, int rows_a_block = 1,
                                                  int row_in_block = 0) {
    if (threadIdx.x == 0) {
        unsigned sm_count;
        asm volatile("mov.u32 %0, %%nsmid;" : "=r"(sm_count));
        const bool two_waves = num_tiles >= 4LL * sm_count;
        if (stagger && two_waves && blockIdx.x >= sm_count && blockIdx.x < 2 * sm_count) __nanosleep(STAGGER_NS);
        ClaimedTile claimed;
        long long ticket;
        if (tiles_per_seq == 1 && (two_waves || num_tiles <= sm_count)) {
            // Each tile is its sequence's only one and waits for no other, so no order is needed:
            // the block's own index, without the atomic's round trip before its first copy. From
            // two waves, and at most a tile an SM (P226); between, on one full wave, tickets in
            // arrival order ran 5 % faster (P148, P149: they keep an SM's two tiles near each
            // other). The generation is never read: no descriptor is published or polled.
            ticket = blockIdx.x;
            claimed.generation = FIRST_GENERATION;
        } else {
            draw_ticket(ws, num_tiles, ticket, claimed.generation);
        }
        claimed.tile = tile_of_ticket(layout, ticket, tiles_per_seq, chunks_first);
        if (!several_rows)
            sequence_origins(layout, claimed.tile / tiles_per_seq, claimed.in_offset, claimed.out_offset);
        shared = claimed;
    }
    __syncthreads();
    if (!several_rows) return shared;
    // Row warps and packed rows (lookback.cu's SEQUENCES_PER_TILE, one tile a sequence): the ticket
    // names a group of `rows_a_block` sequences, of which this thread scans the `row_in_block`-th, or
    // none where that is negative (lanes past a warp's rows). Those, and rows past the last, get
    // sequence num_seqs or beyond: they load and store nothing, but still get an origin (the last
    // row's). Every thread finds its own origin before its loads, so a batch of one axis (the usual
    // one, merged) takes it without a division (P227). Here rather than in sequence_origins, whose
    // other callers run it once a block: there the same short cut moved their kernels' registers.
    ClaimedTile mine = shared;
    mine.tile = row_in_block >= 0 ? shared.tile * rows_a_block + row_in_block : layout.num_seqs;
    const long long row = min(mine.tile, layout.num_seqs - 1);
    if (layout.batch_rank == 1) {
        mine.in_offset = layout.in_origin + row * layout.in_batch_stride[0];
        mine.out_offset = layout.out_origin + row * layout.out_batch_stride[0];
    } else {
        sequence_origins(layout, row, mine.in_offset, mine.out_offset);
    }
    return mine;
}

// Only in the launch whose generation is WRAPPING_GENERATION (once per 2^32 - 1 launches), called
// by a whole warp after its block's look-back reads and publications. The block that finishes
// last clears every descriptor, so no word of any earlier generation survives, and starts the
// next launch at FIRST_GENERATION. Every other block's reads and writes of descriptors happen-
// before the clearing by fetch_add_acq_rel_gpu's contract.
__device__ __forceinline__ void finish_wrapping_launch(const TileWorkspace& ws, long long num_tiles) {
    const unsigned lane = threadIdx.x & 31;
    __syncwarp();
    unsigned finished_before = 0;
    if (lane == 0) finished_before = fetch_add_acq_rel_gpu(ws.finished(), 1u);
    if (__shfl_sync(0xffffffffu, finished_before, 0) != unsigned(num_tiles - 1)) return;
    // A shuffle orders no memory: this barrier puts lane 0's acquire before every lane's clearing,
    // so no lane's zero can be overtaken by another block's publication of this launch.
    __syncwarp();
    word64* words = ws.descriptor_words();
    for (long long i = lane; i < ws.descriptor_word_count(); i += WARP_SIZE) store_relaxed_gpu(words + i, word64(0));
    __syncwarp();
    if (lane == 0) {
        store_relaxed_gpu(ws.finished(), 0u);
        store_relaxed_gpu(ws.ticket, word64(FIRST_GENERATION) << 32);
    }
}

}  // namespace rtscan
