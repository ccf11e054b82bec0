// Would a one-wave launch gain from storing a tile stripe by stripe as its copies land, and what do
// a scan's block-wide waits cost it? A microbenchmark beside the scan, not part of the package
// (P136, P137).
//
// The scan's one-wave launches (64 x 65536, 2^22) load every tile at once, then store every tile
// at once (NOTES 65, 90). Here 256 blocks of 352 threads, two an SM, each move one long tile's
// bytes (16896 steps: a and b in, h out) with no scan: the tile in four stripes of 4224 steps,
// stripe 0 loaded into registers (LDG.128) and stripes 1-3 staged in shared memory by cp.async in
// three groups, as lookback.cu keeps a tile; each output is a * 0.5 + b of its step. The mode is
// a set of flags:
//   SYNC     the block waits for its whole tile (__syncthreads) before any store, as the scan's
//            aggregate needs; without it each thread stores once its own steps have landed
//   STRIPED  with SYNC: the block waits stripe by stripe, and stores each stripe once it has
//            landed (what a striped tile whose carry is known could do)
//   DELAY    the first stores wait DELAY_NS more (a carry's round trip, NOTES 90: 1.5-2 us from
//            the last earlier aggregate to the carry)
//   TICKET   thread 0 draws the block's tile by an atomic before any load, as claim_tile does
// Launches are replayed from a CUDA graph; a copy of the same bytes (a device-to-device memcpy of
// 6 B a step each way, as `rtscan bench` times it) is timed the same way in the same run.
// Usage on a GPU machine:  nvcc -arch=sm_90 -O3 -o /tmp/overlap profiling/overlap_rate.cu && /tmp/overlap
#include "tile_copies.cuh"

constexpr int THREADS = 352;
constexpr int TILE = 16896;                      // steps a block (the long shape's tile)
constexpr int STRIPES = 4;
constexpr int STRIPE_VECTORS = TILE / STRIPES / 4;  // 1056 float4 of a (and of b) a stripe
constexpr int PER_THREAD = STRIPE_VECTORS / THREADS;  // 3
static_assert(PER_THREAD * THREADS == STRIPE_VECTORS, "whole vectors a thread");
constexpr int SHARED_BYTES = (STRIPES - 1) * STRIPE_VECTORS * 2 * 16;  // stripes 1-3 of a and b: 101376 B
constexpr unsigned long long DELAY_NS = 1500;

__device__ __forceinline__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

template <int PENDING>
__device__ __forceinline__ void wait_groups() {
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

__device__ __forceinline__ float4 step_out(float4 a, float4 b) {
    return make_float4(a.x * 0.5f + b.x, a.y * 0.5f + b.y, a.z * 0.5f + b.z, a.w * 0.5f + b.w);
}

constexpr int SYNC = 1, STRIPED = 2, DELAY = 4, TICKET = 8;
__device__ unsigned tickets;

__global__ void __launch_bounds__(THREADS, 2) move_tile(const float4* __restrict__ a, const float4* __restrict__ b,
                                                        float4* __restrict__ out, int mode) {
    extern __shared__ __align__(16) float4 staged[];  // [stripe - 1][a, b][STRIPE_VECTORS]
    __shared__ unsigned drawn;
    unsigned tile = blockIdx.x;
    if (mode & TICKET) {
        if (threadIdx.x == 0) drawn = atomicAdd(&tickets, 1u) % gridDim.x;
        __syncthreads();
        tile = drawn;
    }
    const size_t base = size_t(tile) * (TILE / 4);
    const int t = threadIdx.x;
    float4 held_a[PER_THREAD], held_b[PER_THREAD];
#pragma unroll
    for (int j = 0; j < PER_THREAD; ++j) {
        held_a[j] = __ldcg(a + base + t + j * THREADS);
        held_b[j] = __ldcg(b + base + t + j * THREADS);
    }
#pragma unroll
    for (int s = 1; s < STRIPES; ++s) {
        float4* slots = staged + (s - 1) * 2 * STRIPE_VECTORS;
        for (int j = 0; j < PER_THREAD; ++j) {
            const int v = t + j * THREADS;
            copy_16(reinterpret_cast<char*>(slots + v), reinterpret_cast<const char*>(a + base + s * STRIPE_VECTORS + v));
            copy_16(reinterpret_cast<char*>(slots + STRIPE_VECTORS + v),
                    reinterpret_cast<const char*>(b + base + s * STRIPE_VECTORS + v));
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    const bool striped = (mode & SYNC) && (mode & STRIPED);
    if (!striped) wait_groups<0>();
    // Each thread reads back only the slots it copied itself: its own waits order them; the block's
    // barriers stand for the scan's.
#pragma unroll
    for (int s = 0; s < STRIPES; ++s) {
        if (striped) {
            if (s == 1) wait_groups<2>();
            if (s == 2) wait_groups<1>();
            if (s == 3) wait_groups<0>();
        }
        float4 values[PER_THREAD];
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) {
            const float4* slots = staged + (s - 1) * 2 * STRIPE_VECTORS;
            const int v = t + j * THREADS;
            values[j] = s == 0 ? step_out(held_a[j], held_b[j]) : step_out(slots[v], slots[STRIPE_VECTORS + v]);
        }
        if ((mode & SYNC) && (striped || s == 0)) __syncthreads();  // the stripe (or tile) has landed, block-wide
        if ((mode & DELAY) && s == 0) {
            const unsigned long long landed = now_ns();
            while (now_ns() < landed + DELAY_NS) {
            }
        }
#pragma unroll
        for (int j = 0; j < PER_THREAD; ++j) __stwb(out + base + s * STRIPE_VECTORS + t + j * THREADS, values[j]);
    }
}

int main() {
    constexpr int BLOCKS = 256;  // 64 x 65536 on the long tile: 256 tiles, one wave of 264 slots
    const size_t vectors = size_t(BLOCKS) * TILE / 4;
    float4 *a, *b, *out;
    char *copy_source, *copy_target;
    const size_t copy_bytes = size_t(BLOCKS) * TILE * 6;  // 6 B a step each way, as the bench's copy
    CK(cudaMalloc(&a, vectors * 16)); CK(cudaMalloc(&b, vectors * 16)); CK(cudaMalloc(&out, vectors * 16));
    CK(cudaMalloc(&copy_source, copy_bytes)); CK(cudaMalloc(&copy_target, copy_bytes));
    CK(cudaMemset(a, 0x3f, vectors * 16)); CK(cudaMemset(b, 0x3e, vectors * 16));  // not zeros
    CK(cudaMemset(copy_source, 1, copy_bytes));
    CK(cudaFuncSetAttribute(move_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED_BYTES));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    constexpr int LAUNCHES = 100;
    const int modes[] = {0, SYNC, SYNC | DELAY, SYNC | TICKET, SYNC | DELAY | TICKET, SYNC | STRIPED,
                         SYNC | STRIPED | DELAY, SYNC | STRIPED | DELAY | TICKET};
    printf("%d blocks of %d threads, each moving a %d-step tile (a, b in; out); %d launches from a graph, best of 5\n",
           BLOCKS, THREADS, TILE, LAUNCHES);
    for (int round = 0; round < 2; ++round) {
        const double copy_us = graph_us_per_launch(stream, LAUNCHES, [&](int) {
            CK(cudaMemcpyAsync(copy_target, copy_source, copy_bytes, cudaMemcpyDeviceToDevice, stream));
        });
        printf("copy of the same bytes                 %6.2f us\n", copy_us);
        for (int mode : modes) {
            const double us = graph_us_per_launch(stream, LAUNCHES, [&](int) {
                move_tile<<<BLOCKS, THREADS, SHARED_BYTES, stream>>>(a, b, out, mode);
            });
            char name[64];
            snprintf(name, sizeof name, "%s%s%s", mode & SYNC ? (mode & STRIPED ? "sync striped" : "sync whole") : "per thread",
                     mode & DELAY ? " +1.5us" : "", mode & TICKET ? " +ticket" : "");
            printf("%-38s %6.2f us, %.3f of the copy\n", name, us, copy_us / us);
        }
    }
    return 0;
}
