// field_charges_gpu.cuh -- what the kernels that sum point charges share (field_charges_gpu.cu: the screened
// charges' value; src_cuda/field/forces: the gradient and the field at the sites): a charge as one shared-memory
// load, and 1/d from the hardware seed.
#pragma once
#include <cuda_runtime.h>

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

}  // namespace qmmm::cuda
