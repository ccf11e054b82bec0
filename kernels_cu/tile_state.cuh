// The inter-block protocol of the single-pass scan: tile descriptors, the look-back, and the
// memory-ordering helpers every cross-block access goes through.
//
// Workspace (one per stream, allocated and zeroed once by rtscan/_workspace.py):
//   counters[0]  next tile ticket        counters[1]  tiles finished        counters[2]  generation
//   then three arrays of `capacity` 64-bit words, indexed by tile ticket:
//   inclusive[t]  the state h at the end of tile t (the carry-in of tile t+1)
//   aggregate_a[t], aggregate_b[t]  the tile's own composed map (A, B)
//
// Every word is self-describing: low 32 bits a tag = (generation << 2) | kind, high 32 bits the
// float. A reader trusts a word only if its tag names this launch's generation, so a word is
// never read together with another word it depends on, and no acquire/release pairing is needed:
// single-copy atomicity of aligned 64-bit accesses is the whole argument. Stale words from earlier
// launches carry an older generation and read as "not yet published".
//
// The generation advances once per launch, on the device, by the block that finishes last (see
// finish_tile), so the workspace needs no memset between launches and CUDA graph replays stay
// correct. When the 30-bit generation wraps, that block clears every descriptor first.
//
// Forward progress: tiles are numbered by an atomic ticket drawn when a block starts, so every
// tile a block waits for belongs to a block that is already resident and never waits for a later
// ticket. Block scheduling order is therefore irrelevant.
//
// Determinism: a tile's carry-in is always h_j of the nearest finished predecessor j, folded
// forward through the aggregates of tiles j+1..k-1 one by one with h = fma(A, h, B), which is
// exactly how each of those tiles computes its own inclusive state from its carry-in. Whichever
// predecessor a tile happens to find finished, the carry is the same floating-point computation,
// so the output is bitwise identical from run to run.
#pragma once

#include "affine.cuh"

namespace rtscan {

using word64 = unsigned long long;

constexpr unsigned KIND_AGGREGATE = 1;
constexpr unsigned KIND_INCLUSIVE = 2;
constexpr unsigned GENERATION_MASK = (1u << 30) - 1;
constexpr int WORKSPACE_HEADER_WORDS = 4;  // counters, padded to 16 bytes

struct TileWorkspace {
    unsigned* counters;  // followed by the three descriptor arrays, 16-byte aligned
    long long capacity;  // tiles the descriptor arrays can hold

    __device__ word64* inclusive() const { return reinterpret_cast<word64*>(counters + WORKSPACE_HEADER_WORDS); }
    __device__ word64* aggregate_a() const { return inclusive() + capacity; }
    __device__ word64* aggregate_b() const { return inclusive() + 2 * capacity; }
};

// ---- memory-ordering helpers: the only cross-block accesses in the project -------------------

// Contract: one single-copy-atomic 64-bit store, visible to every block of the grid (.gpu scope);
// no ordering with any other access. Enough because every descriptor word carries its own tag.
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

__device__ __forceinline__ unsigned load_relaxed_gpu(const unsigned* address) {
    unsigned value;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
    return value;
}

__device__ __forceinline__ void store_relaxed_gpu(unsigned* address, unsigned value) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Contract: a relaxed atomic increment; used for the tile ticket, whose only job is to hand out
// distinct numbers in the order blocks start.
__device__ __forceinline__ unsigned fetch_add_relaxed_gpu(unsigned* address, unsigned value) {
    unsigned old;
    asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");
    return old;
}

// Contract: an acquire-release atomic increment at .gpu scope. Release: everything this thread
// did before (reading the generation, drawing a ticket, the look-back reads its warp made before
// a __syncwarp) happens-before any thread that later acquires the counter. Acquire: the block
// that brings the count to its final value sees all of that from every other block.
__device__ __forceinline__ unsigned fetch_add_acq_rel_gpu(unsigned* address, unsigned value) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(address), "r"(value) : "memory");
    return old;
}

// ---- descriptor words --------------------------------------------------------------------------

__device__ __forceinline__ unsigned make_tag(unsigned generation, unsigned kind) {
    return (generation << 2) | kind;
}

__device__ __forceinline__ word64 pack_word(unsigned tag, float value) {
    return (word64(__float_as_uint(value)) << 32) | tag;
}

__device__ __forceinline__ unsigned word_tag(word64 word) { return unsigned(word); }
__device__ __forceinline__ float word_value(word64 word) { return __uint_as_float(unsigned(word >> 32)); }

// Publish a tile's own map, so successors can pass over it before its carry-in is known.
__device__ __forceinline__ void publish_aggregate(const TileWorkspace& ws, long long tile, unsigned generation,
                                                  Affine<float> aggregate) {
    const unsigned tag = make_tag(generation, KIND_AGGREGATE);
    store_relaxed_gpu(ws.aggregate_a() + tile, pack_word(tag, aggregate.a));
    store_relaxed_gpu(ws.aggregate_b() + tile, pack_word(tag, aggregate.b));
}

// Publish the state at the end of a tile: the carry-in of the next one.
__device__ __forceinline__ void publish_inclusive(const TileWorkspace& ws, long long tile, unsigned generation,
                                                  float state) {
    store_relaxed_gpu(ws.inclusive() + tile, pack_word(make_tag(generation, KIND_INCLUSIVE), state));
}

// ---- the look-back ---------------------------------------------------------------------------

// Called by all 32 lanes of one warp. Returns the state just before tile `tile`, whose position
// in its sequence is `chunk` > 0 (chunk 0 starts from h0 and never looks back).
//
// Window w covers predecessors chunk-1-32w-lane, lane 0 the nearest. Lanes whose predecessor
// would lie before the sequence's first tile read nothing, so no read leaves the descriptor
// arrays and none touches another sequence's tiles (tile 0 of a sequence always publishes its
// inclusive state, so the walk ends there at the latest).
__device__ __forceinline__ float lookback_carry(const TileWorkspace& ws, long long tile, long long chunk,
                                                unsigned generation) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned inclusive_tag = make_tag(generation, KIND_INCLUSIVE);
    const unsigned aggregate_tag = make_tag(generation, KIND_AGGREGATE);

    for (long long window = 0;; ++window) {
        const long long distance = 1 + lane + 32 * window;  // how many tiles back this lane looks
        const bool exists = distance <= chunk;
        const long long predecessor = tile - distance;
        word64 inclusive = 0, aggregate_a = 0, aggregate_b = 0;
        unsigned first_inclusive;
        while (true) {
            if (exists) {  // three independent loads, in flight together
                inclusive = load_relaxed_gpu(ws.inclusive() + predecessor);
                aggregate_a = load_relaxed_gpu(ws.aggregate_a() + predecessor);
                aggregate_b = load_relaxed_gpu(ws.aggregate_b() + predecessor);
            }
            const unsigned inclusive_lanes = __ballot_sync(0xffffffffu, exists && word_tag(inclusive) == inclusive_tag);
            first_inclusive = inclusive_lanes ? __ffs(inclusive_lanes) - 1 : 32;
            // Only the lanes nearer than the first finished predecessor must show their aggregate.
            const bool needed = exists && lane < first_inclusive;
            const bool ready = !needed || (word_tag(aggregate_a) == aggregate_tag && word_tag(aggregate_b) == aggregate_tag);
            if (__all_sync(0xffffffffu, ready)) break;
        }
        if (first_inclusive == 32) continue;  // 32 aggregates, no finished tile yet: look further back

        // Fold forward from the finished predecessor, nearest-last, one fma per tile: first the
        // rest of this window, then each nearer window, re-reading their (immutable) aggregates.
        float state = __shfl_sync(0xffffffffu, word_value(inclusive), first_inclusive);
        for (long long nearer = window; nearer >= 0; --nearer) {
            if (nearer != window) {
                const long long predecessor_nearer = tile - (1 + lane + 32 * nearer);
                aggregate_a = load_relaxed_gpu(ws.aggregate_a() + predecessor_nearer);
                aggregate_b = load_relaxed_gpu(ws.aggregate_b() + predecessor_nearer);
            }
            const int start_lane = nearer == window ? int(first_inclusive) - 1 : 31;
            for (int source = start_lane; source >= 0; --source) {
                const Affine<float> map = {__shfl_sync(0xffffffffu, word_value(aggregate_a), source),
                                           __shfl_sync(0xffffffffu, word_value(aggregate_b), source)};
                state = apply(map, state);
            }
        }
        return state;
    }
}

// Called by one thread per block, after its warp's look-back reads (a __syncwarp before it) and
// after the block drew its ticket. The block that finishes last resets the ticket and finished
// counters and advances the generation for the next launch on this workspace, clearing all
// descriptors first when the generation wraps. Every other block's reads of the generation and
// the descriptors happen-before that (fetch_add_acq_rel_gpu's contract), so none can see the new
// generation, and the next launch, ordered after this one on the stream, sees all of it.
// Returns true in the block that finished last, whose warp must then call clear_descriptors if
// the returned generation is 0.
__device__ __forceinline__ bool finish_tile(const TileWorkspace& ws, long long num_tiles, unsigned generation,
                                            unsigned& next_generation) {
    next_generation = (generation + 1) & GENERATION_MASK;
    const unsigned finished_before = fetch_add_acq_rel_gpu(ws.counters + 1, 1);
    return finished_before == unsigned(num_tiles - 1);
}

__device__ __forceinline__ void reset_counters(const TileWorkspace& ws, unsigned next_generation) {
    store_relaxed_gpu(ws.counters + 0, 0u);
    store_relaxed_gpu(ws.counters + 1, 0u);
    store_relaxed_gpu(ws.counters + 2, next_generation);
}

// One warp clears every descriptor word; runs once per 2^30 launches.
__device__ __forceinline__ void clear_descriptors(const TileWorkspace& ws) {
    const unsigned lane = threadIdx.x & 31;
    word64* words = ws.inclusive();
    for (long long i = lane; i < 3 * ws.capacity; i += 32) store_relaxed_gpu(words + i, word64(0));
}

}  // namespace rtscan
