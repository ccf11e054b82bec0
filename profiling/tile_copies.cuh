// The tile copies the profiling microbenchmarks (ingest_rate.cu, poll_under_load.cu, egress_rate.cu,
// overlap_rate.cu) time: a thread's 16-byte cp.async, and bulk copies (TMA) completing on an
// mbarrier; their host-side error check, and the timing of launches replayed from a CUDA graph.
// Not part of the package: the scan's own staging is kernels_cu/staging.cuh.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int BULK_COPY_BYTES = 16384;  // one bulk copy

__device__ __forceinline__ unsigned smem_address(const void* pointer) {
    return unsigned(__cvta_generic_to_shared(pointer));
}

// One thread's 16 bytes from global to shared memory, bypassing L1 (the scan's staging).
__device__ __forceinline__ void copy_16(char* target, const char* source) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_address(target)), "l"(source) : "memory");
}

// By one thread, before the block's first bulk copy.
__device__ __forceinline__ void init_copy_barrier(unsigned barrier) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(barrier));
    asm volatile("fence.mbarrier_init.release.cluster;");
}

// By one thread: `bytes` (a multiple of BULK_COPY_BYTES) from `source` to `target` by bulk copies,
// the barrier expecting exactly that many bytes.
__device__ __forceinline__ void bulk_copy(char* target, const char* source, int bytes, unsigned barrier) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes) : "memory");
    for (int o = 0; o < bytes; o += BULK_COPY_BYTES)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16384, [%2];"
                     ::"r"(smem_address(target + o)), "l"(source + o), "r"(barrier) : "memory");
}

// Until the barrier's phase of this `parity` (0, 1, 0, ... for successive bulk_copy calls) completes.
__device__ __forceinline__ void wait_copy_barrier(unsigned barrier, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(barrier), "r"(parity) : "memory");
}

// Microseconds a launch: `launches` calls of `enqueue` (each enqueuing one launch on `stream`)
// captured in a CUDA graph, the graph replayed six times and the best of the last five kept, so
// that the GPU and not the host sets the pace.
template <class Enqueue>
double graph_us_per_launch(cudaStream_t stream, int launches, Enqueue enqueue) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < launches; ++i) enqueue(i);
    CK(cudaStreamEndCapture(stream, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int round = 0; round < 6; ++round) {  // the first round warms up
        CK(cudaEventRecord(e0, stream));
        CK(cudaGraphLaunch(exec, stream));
        CK(cudaEventRecord(e1, stream));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (round > 0 && ms < best) best = ms;
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1));
    CK(cudaGraphExecDestroy(exec)); CK(cudaGraphDestroy(graph));
    return double(best) * 1e3 / launches;
}
