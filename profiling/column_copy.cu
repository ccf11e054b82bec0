// Time-major tile "scans" without a look-back: what the access pattern alone allows. An (L, N) float32
// batch (N sequences side by side, step t of sequence s at t * N + s); a block takes W neighbouring
// sequences over a chunk of SPANS * T steps (warp w: span w), each lane VEC = W / 32 sequences
// (float, float2 or float4 loads), T steps of each in registers, then a per-lane serial scan of its
// span (carry 0) and the stores. Tickets by blockIdx, chunk-major (the group fastest), as
// columns_lookback draws them. Also the contiguous form for reference: (N, L), a warp's lane float4 of
// steps. Timed as graph-free back-to-back launches with events, against cudaMemcpy of the same bytes.
// What it showed: results/h200/p246-column-copy-, p247-columns-sweep-2026-12-02-38.txt (P246, NOTES 153).
// Usage on a GPU machine:  nvcc -arch=sm_90 -O3 -std=c++17 -o /tmp/column_copy profiling/column_copy.cu && /tmp/column_copy
// [LxN[/NO] ...] (default: four sizes). N need not be a multiple of 32 or 128: the tiles then take
// the first N / W * W sequences (8191: 8160 of them, 0.4 % less than the copy's bytes) and a step
// row lies off 128-byte lines, as columns_lookback's rows of 8191 sequences do (NOTES 160). With
// /NO the tiles store into rows of NO >= N floats, so that loads and stores can lie on or off the
// lines apart (the contiguous rows then do not run).
#include <utility>
#include <vector>

#include "tile_copies.cuh"  // CK

template <int N> struct Vec;
template <> struct Vec<1> { using T = float; };
template <> struct Vec<2> { using T = float2; };
template <> struct Vec<4> { using T = float4; };
__device__ __forceinline__ float get(const float& v, int) { return v; }
__device__ __forceinline__ float get(const float2& v, int i) { return i ? v.y : v.x; }
__device__ __forceinline__ float get(const float4& v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
__device__ __forceinline__ void put(float& v, int, float x) { v = x; }
__device__ __forceinline__ void put(float2& v, int i, float x) { if (i) v.y = x; else v.x = x; }
__device__ __forceinline__ void put(float4& v, int i, float x) { if (i == 0) v.x = x; else if (i == 1) v.y = x; else if (i == 2) v.z = x; else v.w = x; }

// STREAMING: st.global.cs stores (evict first), else plain ones, as columns_lookback's.
template <int W, int T, int THREADS, int MINB, bool STREAMING = true>
__global__ void __launch_bounds__(THREADS, MINB) columns(const float* __restrict__ a, const float* __restrict__ b,
                                                          float* __restrict__ out, long long L, long long N, long long NO) {
    constexpr int VEC = W / 32, SPANS = THREADS / 32;
    using V = typename Vec<VEC>::T;
    const long long groups = N / W;
    const long long chunk = blockIdx.x / groups, group = blockIdx.x - chunk * groups;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long first = (chunk * SPANS + warp) * T;
    const long long col = group * W + lane * VEC;
    V va[T], vb[T];
#pragma unroll
    for (int i = 0; i < T; ++i) {
        const long long o = (first + i) * N + col;
        if (first + i < L) { va[i] = __ldcg(reinterpret_cast<const V*>(a + o)); vb[i] = __ldcg(reinterpret_cast<const V*>(b + o)); }
    }
#pragma unroll
    for (int v = 0; v < VEC; ++v) {
        float h = 0.f;
#pragma unroll
        for (int i = 0; i < T; ++i) { h = fmaf(get(va[i], v), h, get(vb[i], v)); put(va[i], v, h); }
    }
#pragma unroll
    for (int i = 0; i < T; ++i)
        if (first + i < L) {
            V* target = reinterpret_cast<V*>(out + (first + i) * NO + col);
            if (STREAMING) __stcs(target, va[i]); else *target = va[i];
        }
}

// Contiguous rows (N, L): a block takes THREADS * 4 * T steps of one row; lane float4s, chunk-major over rows.
template <int T, int THREADS, int MINB>
__global__ void __launch_bounds__(THREADS, MINB) rows(const float* __restrict__ a, const float* __restrict__ b,
                                                       float* __restrict__ out, long long L, long long N) {
    constexpr int TILE = THREADS * 4 * T;
    const long long chunk = blockIdx.x / N, row = blockIdx.x - chunk * N;
    const long long base = row * L + chunk * TILE;
    float4 va[T], vb[T];
#pragma unroll
    for (int i = 0; i < T; ++i) {
        const long long o = base + (i * THREADS + threadIdx.x) * 4;
        va[i] = __ldcg(reinterpret_cast<const float4*>(a + o)); vb[i] = __ldcg(reinterpret_cast<const float4*>(b + o));
    }
#pragma unroll
    for (int i = 0; i < T; ++i) {
        float h = 0.f;
        h = fmaf(va[i].x, h, vb[i].x); va[i].x = h; h = fmaf(va[i].y, h, vb[i].y); va[i].y = h;
        h = fmaf(va[i].z, h, vb[i].z); va[i].z = h; h = fmaf(va[i].w, h, vb[i].w); va[i].w = h;
    }
#pragma unroll
    for (int i = 0; i < T; ++i) __stcs(reinterpret_cast<float4*>(out + base + (i * THREADS + threadIdx.x) * 4), va[i]);
}

template <typename K>
float time_ms(K launch, int reps) {
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    launch(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(e0));
    for (int r = 0; r < reps; ++r) launch();
    CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / reps;
}

int main(int argc, char** argv) {
    struct Size { long long L, N, NO; };
    std::vector<Size> sizes = {{2048, 12288, 12288}, {4096, 4096, 4096}, {16384, 1024, 1024}, {2048, 8192, 8192}};
    if (argc > 1) sizes.clear();
    for (int i = 1; i < argc; ++i) {
        long long L = 0, N = 0, NO = 0;
        const int read = sscanf(argv[i], "%lldx%lld/%lld", &L, &N, &NO);
        if (read < 2 || L <= 0 || N <= 0 || (read == 3 && NO < N)) { printf("bad size %s (LxN or LxN/NO)\n", argv[i]); return 2; }
        sizes.push_back({L, N, read == 3 ? NO : N});
    }
    for (auto& s : sizes) {
        const long long L = s.L, N = s.N, NO = s.NO, n = L * N;
        float *a, *b, *o, *c1, *c2;
        CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&b, n * 4)); CK(cudaMalloc(&o, L * NO * 4));
        CK(cudaMalloc(&c1, n * 6)); CK(cudaMalloc(&c2, n * 6));
        CK(cudaMemset(a, 0, n * 4)); CK(cudaMemset(b, 0, n * 4)); CK(cudaMemset(c1, 0, n * 6));
        const int reps = 50;
        const float copy = time_ms([&] { CK(cudaMemcpyAsync(c2, c1, n * 6, cudaMemcpyDeviceToDevice)); }, reps);
        printf("L %lld N %lld (out rows %lld): copy %.1f us\n", L, N, NO, copy * 1e3);
        auto report = [&](const char* name, float ms) { printf("  %-34s %7.1f us  %.3f of copy\n", name, ms * 1e3, copy / ms); };
        // float2 and float4 lanes (W 64, 128) need rows on 8- and 16-byte boundaries: N and NO even, multiples of 4.
#define COL(W, T, TH, MB) if (N % (W / 32) == 0 && NO % (W / 32) == 0) { const long long grid = (N / W) * (L / ((TH / 32) * T)); \
        report("columns W=" #W " T=" #T " threads=" #TH " minb=" #MB, time_ms([&] { columns<W, T, TH, MB><<<grid, TH>>>(a, b, o, L, N, NO); }, reps)); }
        COL(32, 32, 128, 4) COL(32, 16, 128, 8) COL(32, 24, 128, 6) COL(32, 32, 256, 2)
#define COL_PLAIN(W, T, TH, MB) if (N % (W / 32) == 0 && NO % (W / 32) == 0) { const long long grid = (N / W) * (L / ((TH / 32) * T)); \
        report("plain stores W=" #W " T=" #T " threads=" #TH " minb=" #MB, time_ms([&] { columns<W, T, TH, MB, false><<<grid, TH>>>(a, b, o, L, N, NO); }, reps)); }
        COL_PLAIN(32, 16, 128, 8) COL_PLAIN(32, 32, 256, 2)
        COL(64, 16, 128, 4) COL(64, 8, 128, 8)
        COL(128, 8, 128, 4) COL(128, 4, 128, 8) COL(128, 8, 256, 2) COL(128, 12, 128, 3) COL(128, 16, 128, 2)
#define ROW(T, TH, MB) if (L % 4 == 0 && NO == N) { const long long grid = N * (L / (TH * 4 * T)); \
        report("rows T=" #T " threads=" #TH " minb=" #MB, time_ms([&] { rows<T, TH, MB><<<grid, TH>>>(a, b, o, L, N); }, reps)); }
        ROW(2, 256, 4) ROW(4, 128, 4) ROW(1, 256, 8)
        CK(cudaFree(a)); CK(cudaFree(b)); CK(cudaFree(o)); CK(cudaFree(c1)); CK(cudaFree(c2));
    }
    return 0;
}
