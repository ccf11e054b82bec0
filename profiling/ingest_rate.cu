// How fast can one block (one SM) pull bytes from DRAM? A microbenchmark beside the scan, not part
// of the package: k blocks of 352 threads (one an SM up to the SM count: each asks for 112 KB of
// shared memory, so at most two fit an SM), each loading tiles from its own addresses until about
// 2 GB have been read, timed with events. Modes:
//   0 cp.async.cg, 16 B a thread, 112 KB into shared memory, then wait_all (the scan's staging)
//   1 LDG.128 into registers, 21 a thread (112 KB)
//   2 cp.async.bulk (TMA), 16 KB copies completing on an mbarrier (112 KB)
//   3 the scan's tile: 8 LDG.128 a thread into registers (45 KB), then mode 0's 112 KB
//   4 as 3, the copies issued before the register loads
//   5 only the 8 LDG.128 a thread
//   6 cp.async.ca, 4 B a thread, 112 KB (as columns_lookback stages its steps: a warp's copy of one
//     step is 32 words)
//   7 as 6 in columns_lookback's order for tiles of 16 sequences (rows of 64 B): lane l of warp w
//     copies word l % 16 of rows (2w + l / 16) * ITEMS + i, i = 0 .. ITEMS - 1, so that one warp
//     instruction takes two half lines, ITEMS rows apart
// Per-block GB/s and total TB/s are printed (NOTES item 55; results/h200/ingest-rate-2026-11-30.txt).
// Usage on a GPU machine:  nvcc -arch=sm_90 -O3 -o /tmp/ingest profiling/ingest_rate.cu && /tmp/ingest [FIRST_MODE]
#include "tile_copies.cuh"
constexpr int THREADS = 352;
constexpr int TILE = 112 * 1024;  // bytes per tile (staged part of the scan's tile)
__device__ unsigned long long sink;

__global__ void __launch_bounds__(THREADS) load(const char* __restrict__ src, size_t span, int iters, int mode) {
    extern __shared__ __align__(128) char smem[];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned bar_addr = smem_address(&bar);
    if (mode == 2 && threadIdx.x == 0) init_copy_barrier(bar_addr);
    __syncthreads();
    unsigned long long acc = 0;
    for (int i = 0; i < iters; ++i) {
        const size_t tile = (size_t(i) * gridDim.x + blockIdx.x) % (span / TILE);
        const char* base = src + tile * TILE;
        if (mode == 0 || mode == 6 || mode == 7) {
            if (mode == 0) {
                for (int o = threadIdx.x * 16; o < TILE; o += THREADS * 16) copy_16(smem + o, base + o);
            } else if (mode == 7) {
                constexpr int ROWS = TILE / 64, SPANS = THREADS / 16, ITEMS = ROWS / SPANS;  // 1792 rows, 22, 81
                const int lane = threadIdx.x & 31, span = (threadIdx.x >> 5) * 2 + lane / 16;
                for (int i = 0; i < ITEMS; ++i) {
                    const int o = ((span * ITEMS + i) * 16 + lane % 16) * 4;
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_address(smem + o)), "l"(base + o));
                }
            } else {
                for (int o = threadIdx.x * 4; o < TILE; o += THREADS * 4)
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_address(smem + o)), "l"(base + o));
            }
            asm volatile("cp.async.wait_all;" ::: "memory");
            __syncthreads();
            acc += reinterpret_cast<unsigned*>(smem)[threadIdx.x];
            __syncthreads();
        } else if (mode == 1) {
            constexpr int PER = (TILE / 16 + THREADS - 1) / THREADS;  // 21 loads of 16 B per thread
            uint4 v[PER];
#pragma unroll
            for (int k = 0; k < PER; ++k) {
                const int o = (k * THREADS + threadIdx.x) * 16;
                v[k] = o < TILE ? __ldcg(reinterpret_cast<const uint4*>(base + o)) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int k = 0; k < PER; ++k) acc += v[k].x ^ v[k].w;
        } else if (mode >= 3) {
            // the scan's tile: 8 LDG.128 a thread into registers (a and b of 4 chunks), 20 cp.async of 16 B
            // 352 * 8 * 16 B = 45 KB from the first half of the buffer, the staged 112 KB from the second
            const size_t half_tiles = span / 2 / TILE;
            const size_t t = (size_t(i) * gridDim.x + blockIdx.x) % half_tiles;
            const char* regs = src + t * TILE;
            const char* staged = src + span / 2 + t * TILE;
            uint4 v[8];
            if (mode == 4) {
                for (int o = threadIdx.x * 16; o < TILE; o += THREADS * 16) copy_16(smem + o, staged + o);
            }
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = __ldcg(reinterpret_cast<const uint4*>(regs + (k * THREADS + threadIdx.x) * 16));
            if (mode == 3) {
                for (int o = threadIdx.x * 16; o < TILE; o += THREADS * 16) copy_16(smem + o, staged + o);
            }
#pragma unroll
            for (int k = 0; k < 8; ++k) acc += v[k].x ^ v[k].w;
            if (mode != 5) asm volatile("cp.async.wait_all;" ::: "memory");
            __syncthreads();
            acc += reinterpret_cast<unsigned*>(smem)[threadIdx.x];
            __syncthreads();
        } else {
            if (threadIdx.x == 0) bulk_copy(smem, base, TILE, bar_addr);
            wait_copy_barrier(bar_addr, unsigned(i & 1));
            acc += reinterpret_cast<unsigned*>(smem)[threadIdx.x];
            __syncthreads();
        }
    }
    if (acc == 0x123456789ull) sink = acc;
}

int main(int argc, char** argv) {
    const size_t span = size_t(4) << 30;
    char* src;
    CK(cudaMalloc(&src, span));
    CK(cudaMemset(src, 1, span));
    CK(cudaFuncSetAttribute(load, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const char* names[] = {"cp.async 16B", "LDG.128 regs", "TMA bulk", "LDG then cpasync", "cpasync then LDG", "8 LDG only",
                           "cp.async 4B", "4B two rows"};
    printf("SMs %d; tile %d KB; per-block GB/s and total TB/s\n", sms, TILE / 1024);
    const int first_mode = argc > 1 ? atoi(argv[1]) : 0;  // e.g. 6: only the modes from 6 on
    for (int mode = first_mode; mode < 8; ++mode) {
        for (int k : {8, 16, 33, 66, 99, 132, 264}) {
            // Every mode asks for TILE bytes of shared memory, so that at most two blocks share an SM.
            const int iters = int((size_t(2) << 30) / TILE / k) + 1;
            load<<<k, THREADS, TILE>>>(src, span, 2, mode);
            CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
            CK(cudaEventRecord(e0));
            load<<<k, THREADS, TILE>>>(src, span, iters, mode);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            const double bytes = double(iters) * k * (mode == 5 ? 8 * THREADS * 16
                                                      : mode == 3 || mode == 4 ? TILE + 8 * THREADS * 16 : TILE);
            printf("%-14s k=%3d: %6.1f GB/s per block, %5.2f TB/s total\n", names[mode], k, bytes / k / (ms * 1e-3) / 1e9, bytes / (ms * 1e-3) / 1e12);
        }
    }
    return 0;
}
