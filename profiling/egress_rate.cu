// How fast can blocks push their tiles out? The store half of ingest_rate.cu, for the end of a
// one-wave launch (NOTES 65: 64 x 65536 and 2^22 spend their last 3-4 us storing, every block at
// once, about 45 GB/s an SM). A microbenchmark beside the scan, not part of the package.
//
// k blocks of 352 threads (two an SM at most: each asks for one output tile of shared memory), each
// writing one output tile of the long shape (16896 steps, 67584 B) to its own place, once: the
// scan's store phase. Launches are replayed from a CUDA graph, so the GPU, not the host, sets the
// pace; each row gives the time a launch (an empty launch's row is the floor) and the write rate.
// Modes:
//   0 no stores (the floor: the launch and its blocks)
//   1 STG.128 from registers, as the scan stores (__stwb)
//   2 bulk copies (TMA) from shared memory, one 16 KB copy a warp's lane 0 in turn, waited for
//   3 as 2, the tile written to shared memory first (st.shared.v4, then the async-proxy fence):
//     what the scan would pay to store this way
// Usage on a GPU machine:  nvcc -arch=sm_90 -O3 -o /tmp/egress profiling/egress_rate.cu && /tmp/egress
#include "tile_copies.cuh"

constexpr int THREADS = 352;
constexpr int TILE_BYTES = 16896 * 4;            // one long tile's output
constexpr int VECTORS = TILE_BYTES / 16;         // 4224 16-byte vectors, 12 a thread
constexpr int BULK_PIECES = (TILE_BYTES + BULK_COPY_BYTES - 1) / BULK_COPY_BYTES;  // 4 full + 1 part

__device__ __forceinline__ void bulk_store(char* target, const char* source, int bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(target), "r"(smem_address(source)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

__global__ void __launch_bounds__(THREADS) store(char* __restrict__ out, int mode, float seed) {
    extern __shared__ __align__(128) char smem[];
    char* tile = out + size_t(blockIdx.x) * TILE_BYTES;
    if (mode == 1) {
        for (int v = threadIdx.x; v < VECTORS; v += THREADS) {
            const float x = seed * float(v);
            __stwb(reinterpret_cast<float4*>(tile) + v, make_float4(x, x + 1, x + 2, x + 3));
        }
    } else if (mode >= 2) {
        if (mode == 3) {
            for (int v = threadIdx.x; v < VECTORS; v += THREADS) {
                const float x = seed * float(v);
                reinterpret_cast<float4*>(smem)[v] = make_float4(x, x + 1, x + 2, x + 3);
            }
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncthreads();
        }
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        if (lane == 0 && warp < BULK_PIECES) {
            const int offset = warp * BULK_COPY_BYTES;
            const int bytes = min(BULK_COPY_BYTES, TILE_BYTES - offset);
            bulk_store(tile + offset, smem + offset, bytes);
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        }
    }
}

int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    char* out;
    CK(cudaMalloc(&out, size_t(2 * sms) * TILE_BYTES));
    CK(cudaFuncSetAttribute(store, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE_BYTES));
    cudaStream_t stream;
    CK(cudaStreamCreate(&stream));
    const char* names[] = {"no stores", "STG.128", "TMA bulk", "smem then TMA"};
    constexpr int LAUNCHES = 200;
    printf("SMs %d; one tile of %d B a block, once a launch; %d launches from a graph, best of 5\n", sms, TILE_BYTES,
           LAUNCHES);
    for (int k : {66, 132, 264}) {
        for (int mode = 0; mode < 4; ++mode) {
            const double us = graph_us_per_launch(stream, LAUNCHES, [&](int i) {
                store<<<k, THREADS, TILE_BYTES, stream>>>(out, mode, 1.0f + i);
            });
            const double bytes = double(k) * TILE_BYTES * (mode > 0);
            printf("%-14s k=%3d: %6.2f us a launch, %5.2f TB/s over the launch\n", names[mode], k, us, bytes / us / 1e6);
        }
    }
    return 0;
}
