// Does a poll wait behind its SM's loads, and does it matter how the loads are made? A
// microbenchmark beside the scan, not part of the package (NOTES item 62). One block an SM: 11
// warps load 112 KB tiles from DRAM into shared memory over and over (each SM its own addresses,
// so DRAM is as busy as in the scan's load phase), while one more warp's lane 0 times a chain of
// dependent polls of one 8-byte word that stays in L2 (the look-back's poll; four kinds of poll,
// poll_word). Load modes:
//   0 nobody loads (the poll alone)
//   1 cp.async.cg, 16 B a thread, then wait_all (the scan's staging)
//   2 cp.async.bulk (TMA), 16 KB copies issued by one thread, completing on an mbarrier
//   3 LDG.128 into registers, 21 a thread (112 KB)
//   4 LDG.128 into registers five at a time, each five stored to shared memory before the next
// Printed: the poll's round trip (percentiles over every SM's polls, in ns at the SM clock read
// from the device) and what the loaders moved (TB/s, counted from thread 0's rounds: in modes 1,
// 3 and 4 the other threads make about as many).
// Results: profiling/results/h200/poll-under-load-2026-11-30.txt.
// Usage on a GPU machine:  nvcc -arch=sm_90 -O3 -o /tmp/poll profiling/poll_under_load.cu && /tmp/poll
#include <algorithm>
#include <vector>

#include "tile_copies.cuh"

constexpr int LOAD_THREADS = 352;
constexpr int THREADS = LOAD_THREADS + 32;
constexpr int TILE = 112 * 1024;  // bytes a round of loads brings into shared memory
constexpr int WARMUP_POLLS = 256;
constexpr int POLLS = 4096;       // timed polls per SM

__device__ unsigned long long sink;

// The poll, four ways: the look-back's relaxed load, an atomic that changes nothing (executed at
// L2 like any atomic), a volatile load, and the relaxed load after a 1 us pause (fewer polls than
// the atomic makes: whether the harm is per poll or per unit of time). Kind 3's round trips
// include the pause.
__device__ __forceinline__ unsigned long long poll_word(unsigned long long* address, int kind) {
    unsigned long long value;
    if (kind == 0) {
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    } else if (kind == 1) {
        asm volatile("atom.relaxed.gpu.global.or.b64 %0, [%1], 0;" : "=l"(value) : "l"(address) : "memory");
    } else if (kind == 2) {
        asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    } else {
        __nanosleep(1000);
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    }
    return value;
}

__global__ void __launch_bounds__(THREADS) poll_while_loading(const char* __restrict__ src, size_t span,
                                                              unsigned long long* word, int mode, int kind,
                                                              unsigned* rtt_cycles, unsigned long long* loaded) {
    extern __shared__ __align__(128) char smem[];
    __shared__ __align__(8) unsigned long long bar;
    __shared__ volatile int stop;
    const unsigned bar_addr = smem_address(&bar);
    if (threadIdx.x == 0) {
        stop = 0;
        init_copy_barrier(bar_addr);
    }
    __syncthreads();
    const size_t tiles = span / TILE;
    if (threadIdx.x >= LOAD_THREADS) {  // the polling warp: lane 0 alone
        if (threadIdx.x == LOAD_THREADS) {
            unsigned long long value = 0;
            long long before = 0;
            for (int i = 0; i <= WARMUP_POLLS + POLLS; ++i) {
                // The address depends on the previous value (whose high bits are 0), so each poll
                // leaves only after the one before has returned: the clock read just after one
                // poll leaves, minus the one after the previous poll left, is the previous poll's
                // round trip (and the few instructions between).
                unsigned long long* address = word + ((value >> 48) & 1);
                value = poll_word(address, kind);
                const long long now = clock64();
                if (i > WARMUP_POLLS) rtt_cycles[size_t(blockIdx.x) * POLLS + (i - 1 - WARMUP_POLLS)] = unsigned(now - before);
                before = now;
            }
            stop = 1;
            if (value == 0x123456789ull) sink = value;
        }
        return;
    }
    unsigned long long acc = 0, rounds = 0;
    for (size_t i = 0; mode != 0 && !stop; ++i, ++rounds) {
        const char* base = src + ((i * gridDim.x + blockIdx.x) % tiles) * TILE;
        if (mode == 1) {
            for (int o = threadIdx.x * 16; o < TILE; o += LOAD_THREADS * 16) copy_16(smem + o, base + o);
            asm volatile("cp.async.wait_all;" ::: "memory");
            acc += reinterpret_cast<const unsigned*>(smem)[threadIdx.x];
        } else if (mode == 2) {
            if (threadIdx.x == 0) {
                bulk_copy(smem, base, TILE, bar_addr);
                wait_copy_barrier(bar_addr, unsigned(i & 1));
                acc += reinterpret_cast<const unsigned*>(smem)[0];
            }
        } else if (mode == 4) {
            // Through registers into shared memory, GROUP loads a thread in flight at a time.
            constexpr int GROUP = 5;
            for (int first = threadIdx.x * 16; first < TILE; first += GROUP * LOAD_THREADS * 16) {
                uint4 v[GROUP];
#pragma unroll
                for (int k = 0; k < GROUP; ++k) {
                    const int o = first + k * LOAD_THREADS * 16;
                    if (o < TILE) v[k] = __ldcg(reinterpret_cast<const uint4*>(base + o));
                }
#pragma unroll
                for (int k = 0; k < GROUP; ++k) {
                    const int o = first + k * LOAD_THREADS * 16;
                    if (o < TILE) *reinterpret_cast<uint4*>(smem + o) = v[k];
                }
            }
            acc += reinterpret_cast<const unsigned*>(smem)[threadIdx.x];
        } else {
            constexpr int PER = (TILE / 16 + LOAD_THREADS - 1) / LOAD_THREADS;
            uint4 v[PER];
#pragma unroll
            for (int k = 0; k < PER; ++k) {
                const int o = (k * LOAD_THREADS + threadIdx.x) * 16;
                v[k] = o < TILE ? __ldcg(reinterpret_cast<const uint4*>(base + o)) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int k = 0; k < PER; ++k) acc += v[k].x ^ v[k].w;
        }
    }
    if (threadIdx.x == 0) loaded[blockIdx.x] = rounds * TILE;
    if (acc == 0x123456789ull) sink = acc;
}

int main() {
    const size_t span = size_t(4) << 30;
    char* src;
    unsigned long long* word;
    CK(cudaMalloc(&src, span));
    CK(cudaMemset(src, 1, span));
    CK(cudaMalloc(&word, 16));
    CK(cudaMemset(word, 0, 16));
    int sms, clock_khz;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    CK(cudaFuncSetAttribute(poll_while_loading, cudaFuncAttributeMaxDynamicSharedMemorySize, TILE));
    unsigned* rtt;
    unsigned long long* loaded;
    CK(cudaMalloc(&rtt, size_t(sms) * POLLS * sizeof(unsigned)));
    CK(cudaMalloc(&loaded, sms * sizeof(unsigned long long)));
    std::vector<unsigned> host(size_t(sms) * POLLS);
    std::vector<unsigned long long> host_loaded(sms);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const char* names[] = {"no loads", "cp.async 16B", "TMA bulk 16KB", "LDG.128 regs", "LDG.128 x5+STS"};
    const double ns_per_cycle = 1e6 / clock_khz;
    printf("SMs %d, SM clock attribute %d MHz; one block an SM, 11 warps loading %d KB tiles, one lane polling\n",
           sms, clock_khz / 1000, TILE / 1024);
    printf("%-14s %8s %8s %8s %8s %8s   %s\n", "loads", "p10 ns", "p50 ns", "p90 ns", "p99 ns", "max ns", "loaded TB/s");
    const char* kinds[] = {"ld.relaxed.gpu", "atom.or 0", "ld.volatile", "ld.relaxed.gpu, 1 us apart"};
    for (int kind = 0; kind < 4; ++kind) {
        printf("poll: %s\n", kinds[kind]);
        for (int mode = 0; mode < 5; ++mode) {
            CK(cudaEventRecord(e0));
            poll_while_loading<<<sms, THREADS, TILE>>>(src, span, word, mode, kind, rtt, loaded);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            CK(cudaMemcpy(host.data(), rtt, host.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(host_loaded.data(), loaded, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
            std::sort(host.begin(), host.end());
            auto at = [&](double q) { return host[size_t(q * (host.size() - 1))] * ns_per_cycle; };
            double bytes = 0;
            for (auto b : host_loaded) bytes += double(b);
            printf("%-14s %8.0f %8.0f %8.0f %8.0f %8.0f   %.2f (%.1f us)\n", names[mode], at(0.1), at(0.5), at(0.9),
                   at(0.99), at(1.0), bytes / (ms * 1e-3) / 1e12, ms * 1e3);
        }
    }
    return 0;
}
