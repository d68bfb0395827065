// field_mixed_split.hpp -- the MIXED offset split, one definition for the CPU backend, the layout builder
// and the CUDA kernels (a mismatch would silently lose the exact hi - hi difference; see MixedCells).
#pragma once
#include <cmath>

#if defined(__CUDACC__)
#define QMMM_HOST_DEVICE __host__ __device__
#else
#define QMMM_HOST_DEVICE
#endif

namespace qmmm {

// Grid of the hi parts (bohr): hi - hi is exact for offsets below 2^24 * kMixedGrid = 256 bohr.
constexpr double kMixedGrid = 1.0 / 65536;

// An offset v (bohr) as hi + lo floats, hi on the kMixedGrid grid where |v| < 256 (else plain hi/lo).
QMMM_HOST_DEVICE inline void field_mixed_split(double v, float &hi, float &lo) {
    hi = static_cast<float>(v < 256.0 && v > -256.0 ? rint(v * 65536.0) * kMixedGrid : v);
    lo = static_cast<float>(v - static_cast<double>(hi));
}

}  // namespace qmmm
