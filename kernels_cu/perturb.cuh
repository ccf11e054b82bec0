// Test-only timing perturbation. Built with -DRTSCAN_PERTURB_SEED=<n>, a tile's warp 0 sleeps a
// pseudo-random time (a hash of the seed, the tile and the point in the kernel) before it
// publishes and before it looks back, so that each seed shows the look-back a different pattern
// of finished predecessors. The output must not change: tests/test_scan_gpu_variants.py compares
// perturbed runs with unperturbed ones bit for bit. Without the define this is empty and the
// kernels' machine code is unchanged.
#pragma once

namespace rtscan {

#ifdef RTSCAN_PERTURB_SEED
__device__ __forceinline__ void perturb(long long tile, unsigned point) {
    unsigned long long x = (unsigned long long)tile * 0x9E3779B97F4A7C15ull;
    x += (unsigned long long)(RTSCAN_PERTURB_SEED) * 0xBF58476D1CE4E5B9ull + point;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    const unsigned sleep_ns = unsigned(x % 8192u);  // 0 to ~8 us, about a tile's lifetime
    __nanosleep(sleep_ns);
}
#else
__device__ __forceinline__ void perturb(long long, unsigned) {}
#endif

}  // namespace rtscan
