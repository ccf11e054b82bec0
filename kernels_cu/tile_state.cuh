// The inter-block protocol of the single-pass scan: tile and segment descriptors, the two-level
// look-back, and the memory-ordering helpers every cross-block access goes through.
//
// Two levels. Consecutive tiles of one sequence form segments of SEGMENT_TILES (32) tiles. The
// carry into a tile is (the composed maps of the earlier tiles of its segment) applied to (the
// state at the end of the previous segment). The first factor needs only the segment mates'
// aggregates, one warp-wide read. The second is the previous segment's map, one more warp-wide
// read of its tiles' aggregates, applied to the state before that segment, which a decoupled
// look-back over segments finds.
// One level over tiles would walk and fold one tile per step, and on an H200 that walk, not the
// memory, bounded the scan (profiling/PREDICTIONS.md, P1 and P4): a segment step covers 32 tiles.
//
// Workspace (one per stream, allocated and zeroed once by rtscan/_workspace.py):
//   ticket word (64-bit): low 32 bits the next tile ticket, high 32 bits the generation
//   finished (32-bit): tiles finished, counted only in the rare launch that wraps the generation
//   then five arrays of `capacity` 64-bit words:
//   tile aggregate_a[t], aggregate_b[t]   tile t's own composed map (A, B), indexed by ticket
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
// Forward progress: tiles are numbered by the ticket, drawn when a block starts, and a segment's
// descriptors are published by its last tile, so every word a block waits for is written by a
// block with an earlier ticket, which is already resident and never waits for a later one.
// Block scheduling order is therefore irrelevant.
//
// Determinism: the end states of segments form one sequential chain, H[g] = fma(A[g], H[g-1],
// B[g]) with (A[g], B[g]) the segment's aggregate, and the look-back rebuilds exactly that chain
// from whichever finished segment it finds, one fma per segment; the last link, from the previous
// segment's tiles, is the same fma on the same bits (previous_segment_map). The in-segment factor is a
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

// Contract: one single-copy-atomic 64-bit load that observes the coherent (L2) value at .gpu
// scope, never a stale L1 line; no ordering with any other access.
__device__ __forceinline__ word64 load_relaxed_gpu(const word64* address) {
    word64 value;
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

// One predecessor's three words as loaded, before any is looked at: the protocol issues several
// such reads back to back and only then uses them, so their round trips overlap (P11).
struct PredecessorWords {
    word64 inclusive, aggregate_a, aggregate_b;
};

__device__ __forceinline__ PredecessorWords load_predecessor(const Descriptors& level, long long predecessor) {
    return {load_relaxed_gpu(level.inclusive + predecessor), load_relaxed_gpu(level.aggregate_a + predecessor),
            load_relaxed_gpu(level.aggregate_b + predecessor)};
}

__device__ __forceinline__ PredecessorView view_of(const PredecessorWords& words, unsigned generation) {
    return {word_tag(words.inclusive) == generation,
            word_tag(words.aggregate_a) == generation && word_tag(words.aggregate_b) == generation,
            word_value(words.inclusive), word_value(words.aggregate_a), word_value(words.aggregate_b)};
}

__device__ __forceinline__ PredecessorView read_predecessor(const Descriptors& level, long long predecessor,
                                                            unsigned generation) {
    return view_of(load_predecessor(level, predecessor), generation);
}

// The first window's words of lookback_carry<DEPTH, LANES> for `segment` at `position`, loaded
// without being looked at (words of lanes that read nothing are zero, which no generation matches).
template <int DEPTH, int LANES = WARP_SIZE>
__device__ __forceinline__ void load_first_window(const Descriptors& segments, long long segment, long long position,
                                                  PredecessorWords (&words)[DEPTH]) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int d = 0; d < DEPTH; ++d) {
        const long long distance = lookback_distance<DEPTH, LANES>(lane, d, 0);
        words[d] = lane < LANES && distance <= position ? load_predecessor(segments, segment - distance)
                                                        : PredecessorWords{0, 0, 0};
    }
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
// `first`, when given, holds the first window's words as load_first_window loaded them: the first
// try looks at those instead of loading again.
template <int DEPTH, int LANES = WARP_SIZE>
__device__ __forceinline__ float lookback_carry(const Descriptors& segments, long long segment, long long position,
                                                unsigned generation, const PredecessorWords* first = nullptr) {
    constexpr int SPAN = LANES * DEPTH;
    const int lane = threadIdx.x & 31;
    const PredecessorView nothing = {false, false, 0.0f, 0.0f, 0.0f};
    bool first_try = first != nullptr;

    for (long long window = 0;; ++window) {
        PredecessorView seen[DEPTH];
        int first_finished;  // window position (LANES d + lane) of the nearest finished predecessor
        while (true) {
#pragma unroll
            for (int d = 0; d < DEPTH; ++d) {
                const long long distance = lookback_distance<DEPTH, LANES>(lane, d, window);
                const bool reads = lane < LANES && distance <= position;
                if (first_try)
                    seen[d] = view_of(first[d], generation);  // zero words where `reads` is false
                else
                    seen[d] = reads ? read_predecessor(segments, segment - distance, generation) : nothing;
            }
            first_try = false;
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
        if (first_finished == SPAN) continue;  // a whole window of aggregates: look further back

        // Fold forward from the finished predecessor, nearest last, one fma per segment: first the
        // rest of this window, then each nearer window, re-reading its (immutable) aggregates.
        float state = 0.0f;
#pragma unroll
        for (int d = 0; d < DEPTH; ++d) {
            const float candidate = __shfl_sync(0xffffffffu, seen[d].state, unsigned(first_finished) % LANES);
            if (d == first_finished / LANES) state = candidate;
        }
        for (long long nearer = window; nearer >= 0; --nearer) {
            if (nearer != window) {
                // Tags not checked again: this warp saw each of these words carry this launch's
                // generation, a word is written once per launch, and read-read coherence keeps a
                // later read of the same address by the same thread from returning an older value.
#pragma unroll
                for (int d = 0; d < DEPTH; ++d)
                    if (lane < LANES)
                        seen[d] = read_predecessor(
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

// A tile aggregate's two words as first loaded, not yet looked at (zero, matching no generation,
// for a lane that reads none), and the polling that waits until both carry this launch's
// generation. Polled flat out: sleeping between polls made no difference (PREDICTIONS.md, P5).
struct AggregateWords {
    word64 a, b;
};

__device__ __forceinline__ AggregateWords load_aggregate(const Descriptors& tiles, long long tile, bool reads) {
    if (!reads) return {0, 0};
    return {load_relaxed_gpu(tiles.aggregate_a + tile), load_relaxed_gpu(tiles.aggregate_b + tile)};
}

__device__ __forceinline__ Affine<float> await_aggregate(const Descriptors& tiles, long long tile, AggregateWords words,
                                                        unsigned generation) {
    while (word_tag(words.a) != generation || word_tag(words.b) != generation)
        words = load_aggregate(tiles, tile, true);  // two independent loads per try
    return {word_value(words.a), word_value(words.b)};
}

// Called by all 32 lanes of one warp, for the tile at `position` (0 .. SEGMENT_TILES - 1) in its
// segment, whose own map is `own`. Lane k < position waits for the aggregate of the segment's
// tile k (an earlier ticket, so it is published or about to be), starting from `mate`, its first
// load (load_aggregate(tiles, tile - position + lane, lane < position)); lane `position` holds
// `own`, later lanes the identity; one fixed-order warp scan then composes them. Lane k's result
// depends only on the maps of tiles 0..k, so `before` is the same whichever tile computes it.
__device__ __forceinline__ SegmentPrefix segment_prefix(const Descriptors& tiles, long long tile, int position,
                                                        Affine<float> own, unsigned generation, AggregateWords mate) {
    const int lane = threadIdx.x & 31;
    Affine<float> map = affine_identity<float>();
    if (lane < position)
        map = await_aggregate(tiles, tile - position + lane, mate, generation);
    else if (lane == position)
        map = own;
    const Affine<float> inclusive = warp_inclusive_scan(map);
    const Affine<float> before = shuffle_map(inclusive, position == 0 ? 0 : position - 1);
    return {position == 0 ? affine_identity<float>() : before, shuffle_map(inclusive, position)};
}

// Called by all 32 lanes of one warp: the composed map of the SEGMENT tiles of the segment before
// this tile's (`first` is the ticket of its tile 0), read from the tiles' own aggregates, starting
// from `words`, lane k's first load of tile first + k (load_aggregate(tiles, first + lane, lane <
// SEGMENT)). That segment's last tile publishes the same map as the segment's aggregate, but only
// after reading these words itself; reading them here takes that relay off the critical path
// (profiling/PREDICTIONS.md, P10). The maps are the ones the last tile composes (its own is
// published with the same bits) in the same fixed-order warp scan, so the result is bitwise the
// segment's aggregate.
template <int SEGMENT>
__device__ __forceinline__ Affine<float> previous_segment_map(const Descriptors& tiles, long long first,
                                                              unsigned generation, AggregateWords words) {
    const int lane = threadIdx.x & 31;
    const Affine<float> map =
        lane < SEGMENT ? await_aggregate(tiles, first + lane, words, generation) : affine_identity<float>();
    return shuffle_map(warp_inclusive_scan(map), SEGMENT - 1);
}

// A block's side of the protocol once its tile's own map `tile_map` is known, called by the 32
// lanes of one warp: publish the aggregate, compose the segment mates' (segment_prefix), find the
// state before the segment, publish the segment's aggregate and end state. Returns, on lane 0,
// the state just before tile `tile` (the `chunk`-th of sequence `seq`). `held` keeps lane 0's
// segment prefix meanwhile: shared memory where registers are scarce (hillis_steele.cu), a local
// elsewhere.
//
// The state before segment g > 0 is H[g-1] = apply(map of segment g-1, H[g-2]): the map from the
// segment's tiles (previous_segment_map), H[g-2] from h0 (g = 1) or the look-back over segments
// before g-1, the same fma as every other link of the chain. With FROM_TILES false (the lean path)
// the look-back starts at g itself and takes the previous segment's aggregate as published, and
// each word is first loaded where it is used (the seed's one-level look-back, SEGMENT 1, has no
// other way; hillis_steele.cu keeps that path to stay at 40 registers).
template <int DEPTH, int LANES = WARP_SIZE, int SEGMENT = SEGMENT_TILES, bool FROM_TILES = (SEGMENT > 1)>
__device__ __forceinline__ float tile_carry(const TileWorkspace& ws, const float* __restrict__ h0, long long tile,
                                            long long seq, long long chunk, long long tiles_per_seq,
                                            unsigned generation, Affine<float> tile_map, SegmentPrefix& held) {
    const int lane = int(threadIdx.x) & (WARP_SIZE - 1);
    const int position = place_in_segment<SEGMENT>(chunk);
    const long long segment_position = segment_of<SEGMENT>(chunk);
    const long long segment = seq * segments_per_sequence<SEGMENT>(tiles_per_seq) + segment_position;
    const bool has_successor = chunk + 1 < tiles_per_seq;
    const bool ends_segment = position == SEGMENT - 1;
    static_assert(!FROM_TILES || SEGMENT > 1, "a one-tile segment's map is its tile's, read by the look-back");

    // Publish first: later segment mates, and the next segment's tiles, wait for this aggregate.
    perturb(tile, 0);
    if (lane == 0 && has_successor && SEGMENT > 1) publish_aggregate(ws.tiles(), tile, generation, tile_map);
    // Then the first load of every word this tile may wait for, all issued before any is looked
    // at: the words are usually published already, and each round trip is ~2 us under full load
    // (P11). Only the polls of words not yet published come after. (The lean path, FROM_TILES
    // false, loads each word where it is used, to save registers.)
    const AggregateWords mate = load_aggregate(ws.tiles(), tile - position + lane, FROM_TILES && lane < position);
    const bool reads_previous = FROM_TILES && segment_position > 0;
    const long long previous_first = tile - position - SEGMENT;
    const AggregateWords previous = load_aggregate(ws.tiles(), previous_first + lane, reads_previous && lane < SEGMENT);
    const long long walk_from = FROM_TILES ? segment - 1 : segment;  // the segment the look-back starts at
    const long long walk_position = FROM_TILES ? segment_position - 1 : segment_position;
    PredecessorWords window[DEPTH];
    if (FROM_TILES) load_first_window<DEPTH, LANES>(ws.segments(), walk_from, walk_position, window);  // none at <= 0

    const SegmentPrefix prefix = segment_prefix(ws.tiles(), tile, position, tile_map, generation, mate);
    // A sequence's first segment publishes only its end state (its carry is h0, known at once):
    // a look-back that saw its aggregate alone would walk on past the sequence start.
    if (lane == 0 && has_successor && ends_segment && segment_position > 0)
        publish_aggregate(ws.segments(), segment, generation, prefix.through);
    if (lane == 0) held = prefix;
    perturb(tile, 1);
    // The state before the segment the look-back starts at (h0 before a sequence's first segment),
    // then, reading from tiles, the previous segment's map applied to it.
    const float walked = walk_position > 0
        ? lookback_carry<DEPTH, LANES>(ws.segments(), walk_from, walk_position, generation,
                                       FROM_TILES ? window : nullptr)
        : h0 != nullptr ? h0[seq] : 0.0f;
    const float segment_carry =  // the state just before this segment
        reads_previous ? apply(previous_segment_map<SEGMENT>(ws.tiles(), previous_first, generation, previous), walked)
                       : walked;
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

// Called by every thread of the block before anything else (it holds a __syncthreads): thread 0
// draws the ticket, the block reads it back from `shared`.
__device__ __forceinline__ ClaimedTile claim_tile(const TileWorkspace& ws, const SeqLayout& layout,
                                                  long long tiles_per_seq, long long num_tiles, ClaimedTile& shared) {
    if (threadIdx.x == 0) {
        ClaimedTile claimed;
        draw_ticket(ws, num_tiles, claimed.tile, claimed.generation);
        sequence_origins(layout, claimed.tile / tiles_per_seq, claimed.in_offset, claimed.out_offset);
        shared = claimed;
    }
    __syncthreads();
    return shared;
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
