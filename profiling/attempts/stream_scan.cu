// A standalone experiment (eighth session, P63 and P64 in profiling/PREDICTIONS.md; results in
// profiling/results/h200/p63-stream-2026-11-30.txt and p64-stream-bulk-2026-11-30.txt): a streaming
// scan for batched shapes. G blocks per sequence take its chunks round-robin (block r: chunks r,
// r + G, ...); each chunk is staged STAGES chunks ahead, by per-thread cp.async copies or (BULK)
// by two cp.async.bulk copies completing on an mbarrier per stage, block-scanned, and its carry
// comes from the previous chunk: in registers when G == 1, else through a global slot (value and
// epoch in one 64-bit release/acquire word). The question was whether a schedule that overlaps
// later chunks' loads with earlier chunks' stores inside one launch beats the look-back's one-wave
// launches (64 x 65536); it reached 0.30-0.56 of copy, one SM moving ~20 GB/s. Not rtscan code:
// build and run with  nvcc -O3 -arch=sm_90 -std=c++17 stream_scan.cu -o stream_scan && ./stream_scan
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <cmath>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

struct Map { float A, B; };
__device__ __forceinline__ Map compose(Map first, Map second) { return {second.A * first.A, fmaf(second.A, first.B, second.B)}; }
__device__ __forceinline__ float apply(Map m, float x) { return fmaf(m.A, x, m.B); }
__device__ __forceinline__ Map shfl_up(Map m, int d) { return {__shfl_up_sync(~0u, m.A, d), __shfl_up_sync(~0u, m.B, d)}; }
__device__ __forceinline__ Map shfl(Map m, int l) { return {__shfl_sync(~0u, m.A, l), __shfl_sync(~0u, m.B, l)}; }
__device__ __forceinline__ Map warp_inclusive(Map m, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) { Map o = shfl_up(m, d); if (lane >= d) m = compose(o, m); }
    return m;
}
__device__ __forceinline__ void cp16(void* smem, const void* g) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;"); }
template <int N> __device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;" :: "n"(N)); }
__device__ __forceinline__ void publish(unsigned long long* slot, float v, unsigned epoch) {
    unsigned long long w = ((unsigned long long)epoch << 32) | __float_as_uint(v);
    asm volatile("st.release.gpu.global.u64 [%0], %1;" :: "l"(slot), "l"(w) : "memory");
}
__device__ __forceinline__ float await_carry(unsigned long long* slot, unsigned epoch) {
    unsigned long long w;
    for (;;) {
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(slot) : "memory");
        if ((unsigned)(w >> 32) == epoch) break;
    }
    return __uint_as_float((unsigned)w);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void bar_init(unsigned long long* bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void bar_expect(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity) {
    asm volatile("{\n .reg .pred p;\n WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra WAIT_%=;\n}"
                 :: "r"(smem_addr(bar)), "r"(parity) : "memory");
}

template <int THREADS, int ITEMS, int STAGES, bool BULK>
__global__ void __launch_bounds__(THREADS, 1)
stream_scan(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ h, long long length,
            int G, unsigned long long* slots, unsigned epoch) {
    constexpr int CHUNK = THREADS * ITEMS, WARPS = THREADS / 32, V = ITEMS / 4;
    extern __shared__ float4 smem[];  // [STAGES][2][THREADS * V]
    __shared__ Map warp_total[WARPS];
    __shared__ Map warp_prefix[WARPS];
    __shared__ Map chunk_total;
    __shared__ float shared_carry;
    __shared__ unsigned long long bars[STAGES];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long seq = blockIdx.x / G;
    const int r = blockIdx.x % G;
    const float* as = a + seq * length; const float* bs = b + seq * length; float* hs = h + seq * length;
    const long long nchunks = (length + CHUNK - 1) / CHUNK;
    unsigned long long* seq_slots = slots + seq * nchunks;
    auto stage_a = [&](int s) { return smem + (size_t)s * 2 * THREADS * V; };
    auto stage_b = [&](int s) { return smem + (size_t)s * 2 * THREADS * V + THREADS * V; };
    auto issue = [&](long long c, int s) {
        if (BULK) {  // thread 0: the whole chunk of a and of b, one bulk copy each (length % CHUNK == 0)
            if (threadIdx.x == 0) {
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                bar_expect(&bars[s], 2u * CHUNK * 4u);
                bulk_copy(stage_a(s), as + c * CHUNK, CHUNK * 4u, &bars[s]);
                bulk_copy(stage_b(s), bs + c * CHUNK, CHUNK * 4u, &bars[s]);
            }
            return;
        }
        const long long base = c * CHUNK + (long long)threadIdx.x * ITEMS;
#pragma unroll
        for (int v = 0; v < V; ++v) if (base + 4 * v < length) {  // length % 4 == 0 here
            cp16(stage_a(s) + threadIdx.x * V + v, as + base + 4 * v);
            cp16(stage_b(s) + threadIdx.x * V + v, bs + base + 4 * v);
        }
    };
    // this block's k-th chunk is c = r + k*G
    long long my_chunks = nchunks > r ? (nchunks - r + G - 1) / G : 0;
    if (BULK) {
        if (threadIdx.x == 0) {
            for (int i = 0; i < STAGES; ++i) bar_init(&bars[i]);
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        }
        __syncthreads();
    }
#pragma unroll
    for (int k = 0; k < STAGES - 1; ++k) { if (k < my_chunks) issue(r + (long long)k * G, k); if (!BULK) commit(); }
    float carry = 0.f;
    for (long long k = 0; k < my_chunks; ++k) {
        const long long c = r + k * G;
        if (k + STAGES - 1 < my_chunks) issue(r + (k + STAGES - 1) * G, int((k + STAGES - 1) % STAGES));
        if (!BULK) { commit(); wait_groups<STAGES - 1>(); }
        const int s = int(k % STAGES);
        if (BULK) bar_wait(&bars[s], unsigned((k / STAGES) & 1));
        const long long base = c * CHUNK + (long long)threadIdx.x * ITEMS;
        Map maps[ITEMS];
#pragma unroll
        for (int v = 0; v < V; ++v) {
            float4 fa = make_float4(1.f, 1.f, 1.f, 1.f), fb = make_float4(0.f, 0.f, 0.f, 0.f);
            if (base + 4 * v < length) { fa = stage_a(s)[threadIdx.x * V + v]; fb = stage_b(s)[threadIdx.x * V + v]; }
            maps[4 * v] = {fa.x, fb.x}; maps[4 * v + 1] = {fa.y, fb.y}; maps[4 * v + 2] = {fa.z, fb.z}; maps[4 * v + 3] = {fa.w, fb.w};
        }
        Map mine = maps[0];
#pragma unroll
        for (int i = 1; i < ITEMS; ++i) mine = compose(mine, maps[i]);
        Map incl = warp_inclusive(mine, lane);
        if (lane == 31) warp_total[warp] = incl;
        __syncthreads();
        if (warp == 0) {
            Map t = lane < WARPS ? warp_total[lane] : Map{1.f, 0.f};
            Map ti = warp_inclusive(t, lane);
            Map te = shfl_up(ti, 1);
            if (lane == 0) te = {1.f, 0.f};
            if (lane < WARPS) warp_prefix[lane] = te;
            if (lane == WARPS - 1) chunk_total = ti;
        }
        __syncthreads();
        const Map total = chunk_total;
        if (G > 1 && c > 0) {
            if (threadIdx.x == 0) {
                const float in = await_carry(seq_slots + c - 1, epoch);
                publish(seq_slots + c, apply(total, in), epoch);
                shared_carry = in;
            }
            __syncthreads();
            carry = shared_carry;
        } else if (G > 1 && threadIdx.x == 0) {
            publish(seq_slots + c, apply(total, carry), epoch);
        }
        Map lane_excl = shfl_up(incl, 1);
        if (lane == 0) lane_excl = {1.f, 0.f};
        float state = apply(lane_excl, apply(warp_prefix[warp], carry));
        float out[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) out[i] = state = apply(maps[i], state);
#pragma unroll
        for (int v = 0; v < V; ++v) if (base + 4 * v < length)
            *reinterpret_cast<float4*>(hs + base + 4 * v) = make_float4(out[4 * v], out[4 * v + 1], out[4 * v + 2], out[4 * v + 3]);
        if (G == 1) carry = apply(total, carry);
    }
}

template <int THREADS, int ITEMS, int STAGES, bool BULK>
void run(int seqs, long long length, int G, int reps, double copy_us) {
    constexpr int CHUNK = THREADS * ITEMS;
    if (BULK && length % CHUNK) return;  // bulk copies take whole chunks
    size_t n = (size_t)seqs * length;
    size_t smem = (size_t)STAGES * 2 * THREADS * ITEMS * 4;
    auto kern = stream_scan<THREADS, ITEMS, STAGES, BULK>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    std::vector<float> ha(n), hb(n), hh(n);
    srand(seqs * 7 + G);
    for (size_t i = 0; i < n; ++i) { ha[i] = 0.5f + 0.5f * rand() / RAND_MAX; hb[i] = (float)rand() / RAND_MAX - 0.5f; }
    float *da, *db, *dh; unsigned long long* slots;
    long long nchunks = (length + CHUNK - 1) / CHUNK;
    CK(cudaMalloc(&da, n * 4)); CK(cudaMalloc(&db, n * 4)); CK(cudaMalloc(&dh, n * 4));
    CK(cudaMalloc(&slots, (size_t)seqs * nchunks * 8)); CK(cudaMemset(slots, 0, (size_t)seqs * nchunks * 8));
    CK(cudaMemcpy(da, ha.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(db, hb.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dh, 0xff, n * 4));
    unsigned epoch = 1;
    kern<<<seqs * G, THREADS, smem>>>(da, db, dh, length, G, slots, epoch++);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hh.data(), dh, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int s = 0; s < seqs; s += (seqs > 64 ? seqs / 61 : 1)) {
        double x = 0;
        for (long long t = 0; t < length; ++t) {
            size_t i = (size_t)s * length + t;
            x = (double)ha[i] * x + hb[i];
            double err = fabs(hh[i] - x) / (1.0 + fabs(x));
            if (!(err <= worst)) worst = err;
        }
    }
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    for (int i = 0; i < reps; ++i) kern<<<seqs * G, THREADS, smem>>>(da, db, dh, length, G, slots, epoch++);
    CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
    double us = ms * 1e3 / reps;
    printf("%5d x %-7lld G=%d %s %4dx%-2d st%d chunk %6d: %8.1f us  copy %7.1f us  ratio %.3f  max rel err %.2e\n",
           seqs, length, G, BULK ? "bulk" : "cpa ", THREADS, ITEMS, STAGES, CHUNK, us, copy_us, copy_us / us, worst);
    CK(cudaFree(da)); CK(cudaFree(db)); CK(cudaFree(dh)); CK(cudaFree(slots));
}

double copy_time(size_t n, int reps) {
    void *s, *d; CK(cudaMalloc(&s, n * 6)); CK(cudaMalloc(&d, n * 6));
    CK(cudaMemset(s, 1, n * 6));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    CK(cudaMemcpyAsync(d, s, n * 6, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e0));
    for (int i = 0; i < reps; ++i) CK(cudaMemcpyAsync(d, s, n * 6, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
    CK(cudaFree(s)); CK(cudaFree(d));
    return ms * 1e3 / reps;
}

int main() {
    struct Shape { int seqs; long long length; };
    Shape shapes[] = {{64, 65536}, {128, 32768}, {256, 16384}, {1024, 16384}, {8192, 4096}};
    for (auto sh : shapes) {
        size_t n = (size_t)sh.seqs * sh.length;
        int reps = (int)std::max<size_t>(20, std::min<size_t>(200, (1ull << 27) / n));
        double c = copy_time(n, reps);
        for (int G : {1, 2, 4}) {
            if ((long long)sh.seqs * G > 132 && G > 1) continue;  // G > 1 needs every block resident
            run<1024, 4, 6, false>(sh.seqs, sh.length, G, reps, c);
            run<1024, 4, 6, true>(sh.seqs, sh.length, G, reps, c);
            run<1024, 8, 3, true>(sh.seqs, sh.length, G, reps, c);
            run<512, 8, 3, true>(sh.seqs, sh.length, G, reps, c);
            run<256, 16, 4, true>(sh.seqs, sh.length, G, reps, c);
        }
    }
    return 0;
}
