// field_careful_gpu.cuh -- the careful sums of the embedding field, one policy per precision beside its pair term
// (field_pair_gpu.cuh): where a fast sum cannot be trusted and what replaces it. The throughput sweep's two layouts
// (field_layout_gpu.cuh: tiles, rows) and the latency kernel (field_latency_gpu.cuh) take them from here.
//
// - SINGLE, DOUBLE: the singular rule (a point within the singular radius of a cell takes the cell's self term). The
//   fast sums skip it; a quarter whose fast partial reaches QuarterInfo::bound, or whose charges have both signs
//   (bound 0: a large term could be cancelled; no fast sum then), is summed again with the rule on every pair
//   (full-precision 1/r in DOUBLE).
// - MIXED: cells within the near radius in double (mixed_careful). A warp with a point near the quarter's sphere
//   (QuarterInfo::box) keeps the smallest d2 of each point in its fast sum; a point with a cell inside the near radius
//   (or a NaN partial) has its quarter summed again with the near cells in double.
// The latency kernel takes the careful term of every pair (Careful<PREC>::term). No summation order is changed by
// the policy: each re-sum is the fast sum's runs with the careful terms.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "direct/field_gpu.cuh"
#include "direct/field_pair_gpu.cuh"

namespace qmmm::cuda::field {
namespace {

// ---------------------------------------------------------------- the re-sums of a quarter of tile cells
// A quarter's partial again with the singular rule on every pair (SINGLE, DOUBLE; full-precision 1/r in DOUBLE).
template <int PREC>
__device__ __noinline__ typename Traits<PREC>::Acc quarter_exact(const typename Traits<PREC>::Cell *s,
                                                                  const PointWords<PREC> pw,
                                                                  typename Traits<PREC>::F self) {
    const auto *q = pw.v;
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    Acc part = 0;
    for (int j = 0; j < kQuarter; j += kRun) {
        F run = 0;
        for (int r = 0; r < kRun; ++r) {
            const auto cell = s[j + r];
            const F d2 = dist2<PREC>(q, cell);
            run += Pair<PREC>::exact(cell.w, d2, self);
        }
        part += static_cast<Acc>(run);
    }
    return part;
}

// MIXED: a quarter's partial again, with the cells near the point in double (g: the quarter in cells64;
// p: the point, absolute). Same runs as quarter_sum; near terms go into their own double sum.
__device__ __noinline__ double quarter_near_mixed(const MixedCell *s, const PointWords<QMMM_PRECISION_MIXED> pw,
                                                  const Cell64 *g, const double px, const double py, const double pz,
                                                  double self) {
    const float *q = pw.v;
    const double p[3] = {px, py, pz};
    double part = 0, near = 0;
    float corr = 0;
    for (int j = 0; j < kQuarter; j += kRun) {
        float run = 0;
        for (int r = 0; r < kRun; ++r)
            mixed_careful(s[j + r], dist2<QMMM_PRECISION_MIXED>(q, s[j + r]), g + j + r, p, self, run, corr, near);
        part += static_cast<double>(run);
    }
    return Pair<QMMM_PRECISION_MIXED>::finish(part, corr) + near;
}

// MIXED: whether a point of the warp lies within the near radius of the quarter's sphere (QuarterInfo::box), plus room
// for the float rounding of the test itself.
template <int P>
__device__ __forceinline__ bool warp_near(const float (*q)[kPointWords<QMMM_PRECISION_MIXED>], const float4 &box) {
    bool near = false;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const float dx = fmaf(0.5f, q[k][3], q[k][0]) - box.x, dy = fmaf(0.5f, q[k][4], q[k][1]) - box.y,
                    dz = fmaf(0.5f, q[k][5], q[k][2]) - box.z;
        near |= sqrtf(dx * dx + dy * dy + dz * dz) < box.w + kNearTest;
    }
    return __any_sync(0xffffffffu, near);
}

// A point's words by value, for the re-sums (field_pair_gpu.cuh, PointWords).
template <int PREC, class F>
__device__ __forceinline__ PointWords<PREC> point_words(const F *q) {
    PointWords<PREC> pw;
#pragma unroll
    for (int w = 0; w < kPointWords<PREC>; ++w) pw.v[w] = q[w];
    return pw;
}

// ---------------------------------------------------------------- the policies
// A careful-sum policy gives:
// - kTracksNear: whether a fast sum may have to keep each point's smallest d2 (MIXED);
// - track<P>(q, info): whether this warp's fast sum keeps it;
// - fast_first(info): whether the quarter takes the fast sum at all (otherwise every point sums carefully);
// - suspect(partial, dmin, info): whether a point's fast partial must be summed again;
// - quarter(s, pw, c, at, x): that re-sum over a quarter of tile cells s (at: the quarter's first cell in the
//   chunked arrays; x: the point, absolute);
// - term(cell, d2, c, at, x, corr): one cell's careful term (the latency kernel, which takes it for every pair).
template <int PREC>
struct Careful {  // SINGLE, DOUBLE: the singular rule
    using F = typename Traits<PREC>::F;
    using Acc = typename Traits<PREC>::Acc;
    using Cell = typename Traits<PREC>::Cell;
    static constexpr bool kTracksNear = false;
    template <int P>
    __device__ static __forceinline__ bool track(const F (*)[kPointWords<PREC>], const QuarterInfo &) {
        return false;
    }
    __device__ static __forceinline__ bool fast_first(const QuarterInfo &info) { return info.bound > 0.0f; }
    __device__ static __forceinline__ bool suspect(Acc partial, float, const QuarterInfo &info) {
        return !(fabs(partial) < static_cast<Acc>(info.bound));
    }
    __device__ static __forceinline__ Acc quarter(const Cell *s, const PointWords<PREC> &pw, const DeviceCells &c,
                                                  int64_t, const double *) {
        return quarter_exact<PREC>(s, pw, static_cast<F>(c.self));
    }
    __device__ static __forceinline__ Acc term(const Cell &cell, F d2, const DeviceCells &, int64_t, const double *,
                                               F self, float &) {
        return static_cast<Acc>(Pair<PREC>::exact(cell.w, d2, self));
    }
};
template <>
struct Careful<QMMM_PRECISION_MIXED> {  // near cells in double
    using F = float;
    static constexpr bool kTracksNear = true;
    template <int P>
    __device__ static __forceinline__ bool track(const float (*q)[kPointWords<QMMM_PRECISION_MIXED>],
                                                 const QuarterInfo &info) {
        return warp_near<P>(q, info.box);
    }
    __device__ static __forceinline__ bool fast_first(const QuarterInfo &) { return true; }
    __device__ static __forceinline__ bool suspect(double partial, float dmin, const QuarterInfo &) {
        return dmin < kNearRadius2 || isnan(partial);
    }
    __device__ static __forceinline__ double quarter(const MixedCell *s, const PointWords<QMMM_PRECISION_MIXED> &pw,
                                                     const DeviceCells &c, int64_t at, const double *x) {
        return quarter_near_mixed(s, pw, c.cells64 + at, x[0], x[1], x[2], c.self);
    }
    __device__ static __forceinline__ double term(const MixedCell &cell, float d2, const DeviceCells &c, int64_t at,
                                                  const double *x, float, float &corr) {
        double near = 0;
        float t = 0;
        mixed_careful(cell, d2, &c.cells64[at], x, c.self, t, corr, near);
        return static_cast<double>(t) + near;
    }
};

// One quarter's partials of P points under PREC's policy, the same for every layout: fast(track, dmin) writes the
// layout's fast partials (track: std::true_type when the warp keeps each point's smallest d2 in dmin), resum(k) is the
// layout's careful sum of point k (Careful::quarter on tile cells, or the row layout's own); done(k, partial[k]) is
// called as each point's partial is final.
template <int PREC, int P, class Q, class Fast, class Resum, class Done>
__device__ __forceinline__ void careful_quarter(const QuarterInfo &info, const Q (*q)[kPointWords<PREC>],
                                                typename Traits<PREC>::Acc *partial, Fast &&fast, Resum &&resum,
                                                Done &&done) {
    using C = Careful<PREC>;
    float dmin[P];
    bool suspect[P];
    if (C::fast_first(info)) {
        if constexpr (C::kTracksNear) {
            if (C::template track<P>(q, info)) fast(std::true_type{}, dmin);
            else fast(std::false_type{}, dmin);
        } else {
            fast(std::false_type{}, dmin);
        }
#pragma unroll
        for (int k = 0; k < P; ++k) suspect[k] = C::suspect(partial[k], dmin[k], info);
    } else {
#pragma unroll
        for (int k = 0; k < P; ++k) suspect[k] = true;
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
        if (suspect[k]) partial[k] = resum(k);
        done(k, partial[k]);
    }
}

}  // namespace
}  // namespace qmmm::cuda::field
