// field_charges_gpu.cuh -- what the kernels that sum point charges share (field_charges_gpu.cu: the screened
// charges' value; src_cuda/field/forces: the gradient and the field at the sites): a charge as one shared-memory
// load, a tile of screened charges, 1/d from the hardware seed and a screened charge's 1/d.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "charges/field_charges_shared.hpp"

namespace qmmm::cuda {

// Four values read as one shared-memory load (LDS.128 for float; two for double): a site or charge (x y z q), a
// point (x y z w), a screened charge's kernel (a b cut2 -).
template <class T>
struct alignas(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T)) Quad {
    T x, y, z, w;
};

// 1/sqrt(x): float from the MUFU seed (~2^-22.9 relative); double from its seed and a third-order correction
// (full double precision, as field_pair_gpu.cuh's DOUBLE).
__device__ __forceinline__ float inv_sqrt(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ double inv_sqrt(double x) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    const double e = 1.0 - x * y * y;
    return y + y * e * (0.5 + 0.375 * e);
}

// A screened charge's 1/d at offsets dx dy dz from the point (d2 their squares' sum): beyond its cut-off (cut2) 1/d
// from the hardware seed, where the screening leaves the term to the last bit; within it the screened form (kind, a, b:
// field_charges_shared.hpp).
template <class T>
__device__ __forceinline__ T screened_inv_d(int kind, T dx, T dy, T dz, T d2, T a, T b, T cut2) {
    return d2 >= cut2 ? inv_sqrt(d2) : screened_inv_r_xyz<T>(kind, dx, dy, dz, a, b);
}

// The screened charges [t0, e) of the planes x y z q a b cut2 into sh as two Quads a charge (x y z q, a b cut2 -), the
// block's threads a charge each, once every thread is done with the previous tile (e - t0 <= blockDim.x).
template <class T>
__device__ __forceinline__ void load_screened_tile(const T *x, const T *y, const T *z, const T *q, const T *a,
                                                   const T *b, const T *cut2, int64_t t0, int64_t e, Quad<T> *sh) {
    __syncthreads();
    const int64_t k = t0 + threadIdx.x;
    if (k < e) {
        sh[2 * threadIdx.x] = Quad<T>{x[k], y[k], z[k], q[k]};
        sh[2 * threadIdx.x + 1] = Quad<T>{a[k], b[k], cut2[k], T(0)};
    }
    __syncthreads();
}

}  // namespace qmmm::cuda
