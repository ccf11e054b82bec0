// The affine map x -> a*x + b, the element of the scan, and its ONE combine function.
//
// h[t] = a[t]*h[t-1] + b[t] is the prefix composition of the maps (a[t], b[t]). Composition is
// associative but NOT commutative: every call site names which map acts first, and a swapped
// operand is a silently wrong answer, never a crash. Nothing else in kernels_cu/ combines pairs.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RTSCAN_HOST_DEVICE __host__ __device__ __forceinline__
#else
#include <cmath>
#define RTSCAN_HOST_DEVICE inline
#endif

namespace rtscan {

// One rounding per multiply-add, on the GPU and in the host build of this header alike, so that
// a CPU mirror compiled from this file reproduces the kernel's arithmetic bit for bit.
RTSCAN_HOST_DEVICE float multiply_add(float x, float y, float z) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(x, y, z);
#else
    return std::fma(x, y, z);
#endif
}

template <typename T>
struct Affine {
    T a;  // multiplier
    T b;  // offset
};

template <typename T>
RTSCAN_HOST_DEVICE Affine<T> affine_identity() {
    return {T(1), T(0)};
}

// The map that applies `earlier` first and then `later`:
//   later(earlier(x)) = later.a * (earlier.a * x + earlier.b) + later.b
//                     = (later.a * earlier.a) * x + (later.a * earlier.b + later.b)
template <typename T>
RTSCAN_HOST_DEVICE Affine<T> compose(Affine<T> later, Affine<T> earlier) {
    return {later.a * earlier.a, multiply_add(later.a, earlier.b, later.b)};
}

// The state after `map` acts on the state `h`: one step of the recurrence.
template <typename T>
RTSCAN_HOST_DEVICE T apply(Affine<T> map, T h) {
    return multiply_add(map.a, h, map.b);
}

}  // namespace rtscan
