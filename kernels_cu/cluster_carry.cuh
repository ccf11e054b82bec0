// A row's tiles as one thread-block cluster (sm_90 and later): the carry from the cluster mates'
// aggregates, read from their shared memory, with no look-back, no ticket and no workspace.
//
// Each block of a cluster of CLUSTER blocks scans tile `rank` (its %cluster_ctarank) of one row of
// exactly CLUSTER tiles. The hardware starts a cluster's blocks together, so no block ever waits
// for one that has not started: the forward-progress argument the look-back's tickets make
// (tile_state.cuh) holds here by construction, and tiles can be numbered by blockIdx.x.
//
// The cluster barrier is used twice. Every thread of every block arrives once per phase, in order,
// and waits on a phase before it arrives at the next (PTX's rule for barrier.cluster):
//   phase 1: a block's protocol warp arrives with release after its lane 0 has written the tile's
//            aggregate to `published`; the data warps arrive as they start (they publish
//            nothing). A wait with acquire that returns has seen every block's arrival, so every
//            mate's `published` is written and visible to the reads that follow it.
//   phase 2: a block arrives once it has read its mates (the protocol warp) or its carry is known
//            (the data warps). The protocol warp waits on it before it exits, so no block leaves,
//            freeing its shared memory, while a later mate may still read it.
// Determinism: the carry of tile k is h0 with the aggregates of tiles 0 .. k - 1 applied in order,
// one fma each, the same operations whatever the timing.
#pragma once

#include "affine.cuh"
#include "seq_layout.cuh"
#include "tile_state.cuh"
#include "warp_scan.cuh"

namespace rtscan {

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// Arrive at the cluster barrier's current phase; with release, this thread's earlier writes are
// visible to every thread whose wait with acquire returns on this phase.
__device__ __forceinline__ void cluster_arrive_release() {
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}
// Arrive, ordering nothing: for threads with nothing to publish.
__device__ __forceinline__ void cluster_arrive_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}
// Wait until every thread of the cluster that has not exited has arrived at this thread's phase;
// acquire: the releasing arrivals' writes are visible after it.
__device__ __forceinline__ void cluster_wait_acquire() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }

// The map at `local`'s place in the shared memory of cluster block `rank`, in one 8-byte load, so
// `local` must be 8-byte aligned (a weak load: phase 1's release and acquire order it after the
// mate's write).
__device__ __forceinline__ Affine<float> load_mate_map(const Affine<float>* local, unsigned rank) {
    const unsigned address = unsigned(__cvta_generic_to_shared(local));
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(address), "r"(rank));
    Affine<float> map;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];" : "=f"(map.a), "=f"(map.b) : "r"(remote) : "memory");
    return map;
}

// Called by every thread of the block before anything else (it holds a __syncthreads), as
// claim_tile: the block's tile is its blockIdx.x, rows laid out one after another.
__device__ __forceinline__ ClaimedTile cluster_tile(const SeqLayout& layout, long long tiles_per_seq,
                                                    ClaimedTile& shared) {
    if (threadIdx.x == 0) {
        ClaimedTile claimed;
        claimed.tile = blockIdx.x;
        claimed.generation = 0;
        sequence_origins(layout, claimed.tile / tiles_per_seq, claimed.in_offset, claimed.out_offset);
        shared = claimed;
    }
    __syncthreads();
    return shared;
}

// Called by the whole protocol warp: the state just before tile `rank` of its row, from h0 (null:
// 0) and the mates' aggregates. `published` is this block's slot for its own aggregate, read by
// its later mates. Returns with phase 1 complete and phase 2 arrived at; the caller waits on
// phase 2 before it exits.
template <int CLUSTER>
__device__ __forceinline__ float cluster_carry(const float* __restrict__ h0, long long seq, unsigned rank,
                                               Affine<float> tile_map, Affine<float>& published) {
    static_assert(2 <= CLUSTER && CLUSTER <= 8, "a portable cluster size, one lane per mate");
    const unsigned lane = threadIdx.x & 31;
    if (lane == 0) published = tile_map;
    cluster_arrive_release();
    cluster_wait_acquire();
    const Affine<float> mate = lane < rank ? load_mate_map(&published, lane) : affine_identity<float>();
    float state = h0 != nullptr ? h0[seq] : 0.0f;
#pragma unroll
    for (unsigned j = 0; j + 1 < CLUSTER; ++j) {
        const Affine<float> map = shuffle_map(mate, int(j));
        if (j < rank) state = apply(map, state);
    }
    // Phase 2: this block's reads of its mates are done (release: ordered before the arrival).
    cluster_arrive_release();
    return state;
}

}  // namespace rtscan
