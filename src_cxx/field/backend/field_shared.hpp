// field_shared.hpp -- what the CPU and GPU sides of the embedding field must agree on to the bit, in one
// header that both compile: the chunking, the singular and near radii, the padding, and the MIXED offset split
// (a mismatch would silently lose the exact hi - hi difference; see MixedCells in field_backend.hpp).
#pragma once
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define QMMM_HOST_DEVICE __host__ __device__
#else
#define QMMM_HOST_DEVICE
#endif

namespace qmmm {

// Cells are summed in chunks of kChunk in a fixed order on every backend (the unit of determinism).
constexpr int kFieldChunk = 1024;
// Points closer than this (bohr) to a cell centre or nucleus are "on" it (see qmmm_field_eval).
constexpr double kSingularRadius = 1e-10;
constexpr double kSingularRadius2 = kSingularRadius * kSingularRadius;
// Potential at the centre of a uniformly charged cube of unit side and unit charge:
// 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2.
constexpr double kCubeSelfPotential = 2.380077363979553;
// MIXED on the CPU: float terms per lane summed in float before they go into the lane's double. 8: runs of 16 were
// 1.08x faster a core but, with d = a + b then rounded to float, took the max
// normwise error on a uniform lattice of 32,532 cells with charges 1e-6..1e-2 (FieldCpuIsa's lattice, 606 points)
// from 8.6e-9 to 1.16e-8, past the 1e-8 claim; with d^2 as a (a + 2b) + b^2 (mixed_d2) they give 6.0-8.0e-9 there
// against 5.2-6.9e-9: too little margin (docs/design/precision.md).
constexpr int kFieldMixedRun = 8;
// MIXED: cells nearer than 0.5 bohr to the point are summed in double (a near term can be most of the sum).
constexpr float kNearRadius2 = 0.25f;
// MIXED pads chunks with zero charges here: d2 (~3e30) stays finite in float, as its Newton step needs.
constexpr float kMixedFar = 1e15f;

// Grid of the hi parts (bohr): hi - hi is exact for offsets below 2^24 * kMixedGrid = 256 bohr.
constexpr double kMixedGrid = 1.0 / 65536;

// An offset v (bohr) as hi + lo floats, hi on the kMixedGrid grid where |v| < 256 (else plain hi/lo).
QMMM_HOST_DEVICE inline void field_mixed_split(double v, float &hi, float &lo) {
    hi = static_cast<float>(v < 256.0 && v > -256.0 ? rint(v * 65536.0) * kMixedGrid : v);
    lo = static_cast<float>(v - static_cast<double>(hi));
}

// MIXED's d^2 is sum a (a + 2b) + b^2 over the axes, a = hi - hi, b = lo_point - lo_cell (mixed_d2 in
// field_cpu_simd_kernels.hpp, dist2 in field_gpu_kernels.cu); |b|^2 (< 3 2^-32 bohr^2) is replaced by its mean over
// the chunk's cells for this point, |lo_p|^2 - 2 lo_p . mean lo + mean |lo|^2 (lo_mean: MixedCells::lo_mean), which
// saves 3 of a pair's 15 operations. The remainder -2 lo_p . (lo - mean lo) + |lo|^2 - mean |lo|^2 has no mean over
// the chunk's cells; dropping |b|^2 instead would make every d^2 short by ~1.2e-10 bohr^2 on average, and 1/r long
// by up to 2.3e-10 relative at the near radius, always the same way. l: the point's low parts (field_mixed_split).
QMMM_HOST_DEVICE inline float field_mixed_b2(const double *lo_mean, const float *l) {
    double s = lo_mean[3];
    for (int k = 0; k < 3; ++k) s += static_cast<double>(l[k]) * (static_cast<double>(l[k]) - 2.0 * lo_mean[k]);
    return static_cast<float>(s);
}

}  // namespace qmmm
