// field_pair_gpu.cuh -- the pair terms of the embedding field per precision, shared by every CUDA path (latency,
// persistent, throughput sweep): the point as a precision sees it against a chunk, r^2 to a cell, and the term
// q / r with its reciprocal square root. Device code only, included by the field's kernel files.
//
// Precision semantics follow src_cxx/field/direct/field_cpu.cpp: SINGLE = float terms and sums; MIXED = float pair
// terms from offsets to the chunk's double origin, double accumulation (runs of kRun float terms, then the run
// into a double); DOUBLE throughout.
//
// What a pair costs in the hot loops (throughput path, per 32 pairs of a warp): SINGLE 3 FADD + FMUL + 2 FFMA
// for r^2, one MUFU.RSQ and one FFMA -- the minimum -- plus one shared load per P points. On lattice cells every
// precision takes a row layout (row_quarter_sum, mixed_row_quarter_sum), where r^2 costs less. The per-pair tests of
// earlier versions are gone: singular cells (a point within 1e-10 bohr of a cell centre) are found after a
// quarter of a chunk from its partial (QuarterInfo::bound), and MIXED's near cells per warp from a sphere
// around the quarter's cells (QuarterInfo::box).
//
// DOUBLE: 1/r from the double-precision MUFU seed (rsqrt.approx.f64, ~2^-22) and one third-order correction,
// with e = 1 - d2 y0^2: 1/r = y0 (1 + e/2 + 3e^2/8) + O(e^3 y0), full double precision in 12 FP64 operations
// per pair and no float/double conversions (which share the FP64 pipe on this GPU).
//
// MIXED accuracy (max |u - u_double| / sum|terms| <= 1e-8, and errors that average out over points: a VMC
// energy adds 10^6 values). Systematic float errors removed: (1) MUFU.RSQ (rsqrt.approx) has a relative
// error up to ~2^-22.9 that is not zero on average: one Newton step, q/r = q y0 + (q y0 e)/2 with
// e = 1 - d2 y0^2 (mixed_term). The correction q y0 e is ~1 ulp of the term, so it is summed in its own
// float (corr) over the quarter: added to the run of terms, most of it was rounded away and the MUFU bias
// stayed (-6.7e-9 hartree per point on the water dimer, test MixedErrorsAverageOutOnWaterDimer).
// (2) Offsets of the point and of the cells from the chunk origin are hi + lo float pairs with hi on a
// 2^-16 bohr grid (field_mixed_cells, shared with the CPU): hi - hi is exact, so neither is rounded the
// same way for many points. (3) Float charges are error-diffused within a chunk. (4) Cells within
// sqrt(kNearRadius2) of the point are summed in double (mixed_careful, quarter_near_mixed): a near term can be most of the sum.
// No floating-point atomics anywhere.
#pragma once
#include <cuda_runtime.h>

#include "direct/field_gpu.cuh"
#include "direct/field_tuning_gpu.cuh"
#include "qmmm_accel_field.h"

namespace qmmm::cuda::field {
namespace {

constexpr int kRun = 8;
constexpr double kEps2 = kSingularRadius2;
// A warp takes MIXED's careful loop when one of its points is this close to a quarter's sphere: the near
// radius plus room for the float rounding of the test itself.
constexpr float kNearTest = 0.5f + 1e-3f;

// The types of each precision; kMinBlocks: the occupancy bound of the throughput kernels, from the tuning table's row
// of the architecture being compiled (field_tuning.hpp, field_tuning_gpu.cuh).
template <int PREC>
struct Traits;
template <>
struct Traits<QMMM_PRECISION_SINGLE> {
    using Cell = float4;
    using F = float;
    using Acc = float;
    static constexpr int kMinBlocks = field_tuning(QMMM_PRECISION_SINGLE, kCompiledArch).min_blocks;
};
template <>
struct Traits<QMMM_PRECISION_MIXED> {
    using Cell = MixedCell;
    using F = float;
    using Acc = double;
    static constexpr int kMinBlocks = field_tuning(QMMM_PRECISION_MIXED, kCompiledArch).min_blocks;
};
template <>
struct Traits<QMMM_PRECISION_DOUBLE> {
    using Cell = Cell64;
    using F = double;
    using Acc = double;
    static constexpr int kMinBlocks = field_tuning(QMMM_PRECISION_DOUBLE, kCompiledArch).min_blocks;
};

// MUFU.RSQ alone: the non-ftz form adds a denormal fix-up to every pair. Flushed d2 are < kEps2 anyway.
__device__ __forceinline__ float rs(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
// The double-precision seed (MUFU.RSQ64H on the high word): ~22 bits, no conversion.
__device__ __forceinline__ double rs_seed(double x) {
    double r;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
    return r;
}
// 1/sqrt(x) to full double precision (the careful paths).
__device__ __forceinline__ double rs(double x) { return rsqrt(x); }

// The point as the precision sees it against chunk ch: q[0..2] (and in MIXED q[3..5], twice the low parts of
// the offset from the chunk origin: offset = q[k] + q[k + 3] / 2, and q[6] the mean |b|^2 over the chunk's cells,
// field_mixed_b2; see dist2).
template <int PREC>
__device__ __forceinline__ void local_point(const DeviceCells &c, int64_t ch, const double *p,
                                            typename Traits<PREC>::F *q) {
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        // hi on the grid of the cells' hi parts (field_mixed_split), so hi - cell hi is exact.
        for (int k = 0; k < 3; ++k) qmmm::field_mixed_split(p[k] - c.origin[3 * ch + k], q[k], q[k + 3]);
        q[6] = qmmm::field_mixed_b2(c.lo_mean + 4 * ch, q + 3);
        for (int k = 3; k < 6; ++k) q[k] *= 2.0f;  // exact
    } else {
        for (int k = 0; k < 3; ++k) q[k] = static_cast<typename Traits<PREC>::F>(p[k]);
    }
}

// Number of point components local_point writes.
template <int PREC>
constexpr int kPointWords = PREC == QMMM_PRECISION_MIXED ? 7 : 3;

// A point's words by value: the careful paths are __noinline__, and a pointer argument would put the
// caller's point array in local memory.
template <int PREC>
struct PointWords {
    typename Traits<PREC>::F v[kPointWords<PREC>];
};

// Squared distance from the point q to a cell.
template <int PREC, class Cell, class F>
__device__ __forceinline__ F dist2(const F *q, const Cell &cell) {
    if constexpr (PREC == QMMM_PRECISION_MIXED) {
        // d = a + b with a = hi - hi (exact, both on the grid) and b = lo - lo (the words hold 2b): d^2 summed as
        // a (a + 2b) onto the chunk's mean |b|^2 (q[6], field_mixed_b2), as the CPU's mixed_d2 (field_cpu_simd_kernels.hpp:
        // why the two cheaper forms fail a claim: d rounded to float repeats its error along a lattice's planes;
        // squares of a added last have a mean error). 12 instructions: 9 FADD, 3 FFMA.
        const F ax = q[0] - cell.h.x, ay = q[1] - cell.h.y, az = q[2] - cell.h.z;
        const F bx = q[3] - cell.l.x, by = q[4] - cell.l.y, bz = q[5] - cell.l.z;
        return fmaf(az, az + bz, fmaf(ay, ay + by, fmaf(ax, ax + bx, q[6])));
    } else {
        const F dx = q[0] - cell.x, dy = q[1] - cell.y, dz = q[2] - cell.z;
        return dx * dx + dy * dy + dz * dz;
    }
}

// MIXED pair term: y0 = MUFU 1/sqrt(d2), e = 1 - d2 y0^2; q / r = q y0 (1 + e/2): q y0 goes into the run,
// q y0 e into corr (the caller adds corr / 2 once per quarter).
__device__ __forceinline__ void mixed_term(float q, float d2, float &run, float &corr) {
    const float y0 = rs(d2);
    const float e = fmaf(-(d2 * y0), y0, 1.0f);
    run = fmaf(q, y0, run);
    corr = fmaf(q * y0, e, corr);
}

// DOUBLE pair term (see the top of the file).
__device__ __forceinline__ double double_term(double q, double d2) {
    const double y0 = rs_seed(d2);
    const double e = fma(-d2, y0 * y0, 1.0);
    return q * y0 * fma(e, fma(e, 0.375, 0.5), 1.0);
}

// MIXED: the term of a cell near the point, in double (singular rule as the CPU double path).
__device__ __forceinline__ double near_term(const Cell64 &c, const double *p, double self) {
    const double dx = p[0] - c.x, dy = p[1] - c.y, dz = p[2] - c.z;
    const double d2 = dx * dx + dy * dy + dz * dz;
    return c.w * (d2 < kEps2 ? self : 1.0 / sqrt(d2));
}

// MIXED: one cell's term: near cells in double (into near), others in float (run, corr). d2 beyond float
// range (where the Newton step would give inf * 0) adds nothing: the term is 0 to float precision.
__device__ __forceinline__ void mixed_careful(const MixedCell &cell, float d2, const Cell64 *c64, const double *p,
                                              double self, float &run, float &corr, double &near) {
    if (d2 < kNearRadius2) near += near_term(*c64, p, self);  // the double copy is read only here
    else if (d2 <= 3.0e38f) mixed_term(cell.h.w, d2, run, corr);
}

// The pair term of each precision as the hot loops add it (one evaluator per precision; the loops in
// field_layout_gpu.cuh differ only in where r^2 comes from):
// - tile(cell, d2, run, corr): a cell of the tile layout, no singular test (QuarterInfo finds singular cells);
// - row(q, d2, run, corr): a cell of the row layout (charge q); DOUBLE fuses the product and sum of the correction;
// - exact(q, d2, self): with the singular rule (a point within the singular radius takes self), SINGLE and DOUBLE;
// - finish(part, corr): a sum of terms with its correction added, once per quarter.
// corr is MIXED's Newton correction (mixed_term); the other precisions leave it alone. Where a fast sum cannot be
// trusted, the careful sums take over: field_careful_gpu.cuh, one policy per precision.
template <int PREC>
struct Pair;
template <>
struct Pair<QMMM_PRECISION_SINGLE> {
    __device__ static __forceinline__ void tile(const float4 &cell, float d2, float &run, float &) {
        run = fmaf(cell.w, rs(d2), run);
    }
    __device__ static __forceinline__ void row(float q, float d2, float &run, float &) { run = fmaf(q, rs(d2), run); }
    __device__ static __forceinline__ float exact(float q, float d2, float self) {
        return q * (d2 < static_cast<float>(kEps2) ? self : rs(d2));
    }
    __device__ static __forceinline__ float finish(float part, float) { return part; }
};
template <>
struct Pair<QMMM_PRECISION_DOUBLE> {
    __device__ static __forceinline__ void tile(const Cell64 &cell, double d2, double &run, float &) {
        run += double_term(cell.w, d2);
    }
    __device__ static __forceinline__ void row(double q, double d2, double &run, float &) {
        const double y0 = rs_seed(d2), e = fma(-d2, y0 * y0, 1.0);
        run = fma(q * y0, fma(e, fma(e, 0.375, 0.5), 1.0), run);
    }
    __device__ static __forceinline__ double exact(double q, double d2, double self) {
        return q * (d2 < kEps2 ? self : rs(d2));
    }
    __device__ static __forceinline__ double finish(double part, float) { return part; }
};
template <>
struct Pair<QMMM_PRECISION_MIXED> {
    __device__ static __forceinline__ void tile(const MixedCell &cell, float d2, float &run, float &corr) {
        mixed_term(cell.h.w, d2, run, corr);
    }
    __device__ static __forceinline__ void row(float q, float d2, float &run, float &corr) {
        mixed_term(q, d2, run, corr);
    }
    // MIXED's careful sums keep near cells in double instead (mixed_careful).
    __device__ static __forceinline__ double finish(double part, float corr) {
        return part + 0.5 * static_cast<double>(corr);
    }
};

// Sum over a warp, the same bits in every lane (xor butterfly: each step adds the same two values everywhere).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

}  // namespace
}  // namespace qmmm::cuda::field
