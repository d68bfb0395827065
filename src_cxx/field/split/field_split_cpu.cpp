// field_split_cpu.cpp -- the CPU backend of the range-split field (field_split.hpp): interpolation of the
// long-range part, the short-range sum over the cell list in SIMD lanes, the direct CPU backend for points outside
// the region and for building the grid.
//
// Determinism: a point's value is a fixed sequence of operations on the point and the tables (its cell ranges in
// a fixed order, each summed in kLanes lanes by position in the range): independent of the other points, of the
// batch and of the thread count.
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu_parallel.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"
#include "direct/field_cpu_simd.hpp"
#include "backend/field_factory.hpp"
#include "split/field_split.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

// The arguments of a range kernel: the point, R_c^2, the centre's term and f's Chebyshev series.
struct PairArgs {
    double px, py, pz, rc2, self_f0;  // self_f0 = self - f(0)
    const double *c;
    int32_t n;
    double scale;
};

bool use_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
#else
    return false;
#endif
}

// The trimming of n columns in x (split_column_trim): one at a time, or with AVX-512 compares of 8 cells of a bin at a
// time (the counts are the same: the cells of a bin are sorted by x). The arrays end with padding cells, so a vector
// read past a bin's end stays inside them; a masked load never touches the lanes it leaves out.
void trim_scalar(const SplitCellsView &c, const SplitColumn *col, int n, int64_t *b, int64_t *e) {
    for (int k = 0; k < n; ++k) split_column_trim(c, col[k], &b[k], &e[k]);
}
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) void trim_avx512(const SplitCellsView &c, const SplitColumn *col, int n, int64_t *b,
                                                    int64_t *e) {
    for (int k = 0; k < n; ++k) {
        const SplitColumn &q = col[k];
        const __m512d lo = _mm512_set1_pd(q.lo), hi = _mm512_set1_pd(q.hi);
        int64_t below = 0, above = 0;
        for (int64_t m = q.f0; m < q.f1; m += 8) {  // first bin: cells with x < lo, from its start
            const int lanes = q.f1 - m >= 8 ? 8 : static_cast<int>(q.f1 - m);
            const __mmask8 in = static_cast<__mmask8>((1u << lanes) - 1u);
            const int cnt = __builtin_popcount(_mm512_mask_cmp_pd_mask(in, _mm512_loadu_pd(c.x + m), lo, _CMP_LT_OQ));
            below += cnt;
            if (cnt < 8) break;
        }
        for (int64_t m = q.l1; m > q.l0; m -= 8) {  // last bin: cells with x > hi, from its end
            const int lanes = m - q.l0 >= 8 ? 8 : static_cast<int>(m - q.l0);
            const __mmask8 in = static_cast<__mmask8>((1u << lanes) - 1u);
            const __m512d x = _mm512_maskz_loadu_pd(in, c.x + (m - lanes));
            const int cnt = __builtin_popcount(_mm512_mask_cmp_pd_mask(in, x, hi, _CMP_GT_OQ));
            above += cnt;
            if (cnt < 8) break;
        }
        const int64_t bg = q.f0 + below, en = q.l1 - above;
        b[k] = bg, e[k] = en > bg ? en : bg;
    }
}
#endif

// Calls range(begin, end) for the point's non-empty column ranges, the same ranges in the same order as
// split_for_ranges, in two passes over up to 64 columns: every column's bins and cell-list entries first, then the
// trimming in x, so that the loads of different columns overlap (a column at a time waited on its start[] entries, then
// on its cells' x: ~200 cycles a column, a third of a point, on a Zen 4 core).
template <class F>
void for_ranges_two_pass(const SplitCellsView &c, const double *p, double r2, F &&range) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const auto trim = use_avx512() ? trim_avx512 : trim_scalar;
#else
    static const auto trim = trim_scalar;
#endif
    int32_t i0[3], i1[3];
    if (!split_bin_bounds(c, p, r2, i0, i1)) return;
    constexpr int kColumns = 64;
    SplitColumn col[kColumns];
    int n = 0;
    auto flush = [&] {
        int64_t b[kColumns], e[kColumns];
        trim(c, col, n, b, e);
        for (int k = 0; k < n; ++k)
            if (b[k] < e[k]) range(b[k], e[k]);
        n = 0;
    };
    for (int32_t iz = i0[2]; iz <= i1[2]; ++iz)
        for (int32_t iy = i0[1]; iy <= i1[1]; ++iy) {
            n += split_column_bins(c, p, r2, iy, iz, &col[n]);
            if (n == kColumns) flush();
        }
    flush();
}

// Adds the lanes in a fixed tree.
double lane_sum(const double *acc) {
    double s4[4];
    for (int l = 0; l < 4; ++l) s4[l] = acc[l] + acc[l + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

// Adds cells [b, e)'s terms q (1/d - f(d^2)) within R_c (q * self_f0 on a centre) to acc: cell b + i to lane i mod 8,
// f by Horner's rule (split_f). AVX2 + FMA (2 x 4 lanes) and plain C++ (std::fma) are one sequence of operations (the
// same fused multiply-adds, IEEE sqrt and division, lanes added only where the cell is within R_c): the same bits.
// AVX-512 (pack_avx512 and dense_avx512 below) differs. Each is deterministic on its machine. The vector ones read
// whole vectors, up to 7 cells past e (the arrays carry kSplitCellPadding padding cells) and mask them off.
void range_scalar(const SplitCellsView &cv, int64_t b, int64_t e, const PairArgs &a, double *acc) {
    for (int64_t m = b; m < e; ++m) {
        const double dx = a.px - cv.x[m], dy = a.py - cv.y[m], dz = a.pz - cv.z[m];
        const double d2 = std::fma(dz, dz, std::fma(dy, dy, dx * dx));
        if (!(d2 < a.rc2)) continue;
        const double x = std::fma(d2, a.scale, -1.0);
        double f = a.c[a.n - 1];
        for (int j = a.n - 2; j >= 0; --j) f = std::fma(f, x, a.c[j]);
        const double v = d2 < kSingularRadius2 ? a.self_f0 : 1.0 / std::sqrt(d2) - f;
        double &l = acc[(m - b) % kLanes];
        l = std::fma(cv.q[m], v, l);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// AVX-512, in two passes. Pass 1 (pack_avx512) computes d^2 for a range's cells 8 at a time and packs the d^2 and q of
// those within R_c into dense arrays (vcompresspd): 36 % of the lanes of a point's ranges fall outside R_c (the chord
// is taken at a column's nearest point) or past a range's end, and the f polynomial (~22 terms) was computed on them.
// Pass 2 (dense_avx512) evaluates the packed cells four vectors at a time, each into its own accumulator, so that four
// independent Horner chains overlap. Packed cell k sits in lane k mod 8 of vector k / 8, which goes to accumulator
// (k / 8) mod 4: a point's sum is one fixed sequence (its cells within R_c, in range order), whatever the buffer's
// fill. 1/d from the hardware's 2^-14 reciprocal square root and a series (within an ulp or two): the IEEE square root
// and division cost ~30 cycles of the one divider per 8 cells, more than the rest of a pair. Against tasks of 8 cells
// (every lane through the polynomial) the short-range sum took 0-18 % less time on one core of the H100 host, run
// to run; a whole point 1-3 % less, and 16 cores at 8,192 points 0.30 against 0.37 us (docs/design/split.md).
constexpr int kDenseUnroll = 4;
constexpr int kDenseGroup = kLanes * kDenseUnroll;  // cells per pass-2 step
constexpr int kPackCap = 8 * kDenseGroup;           // packed cells that trigger pass 2

struct PackBuffer {
    alignas(64) double d2[kPackCap + kDenseGroup + kLanes];
    alignas(64) double q[kPackCap + kDenseGroup + kLanes];
    int n = 0;
};

__attribute__((target("avx512f"))) void dense_avx512(const double *d2v, const double *qv, int n, const PairArgs &a,
                                                     __m512d *s) {
    constexpr int U = kDenseUnroll;
    const __m512d eps2 = _mm512_set1_pd(kSingularRadius2), scale = _mm512_set1_pd(a.scale), one = _mm512_set1_pd(1.0);
    const __m512d self = _mm512_set1_pd(a.self_f0), top = _mm512_set1_pd(a.c[a.n - 1]);
    const __m512d s1 = _mm512_set1_pd(0.5), s2 = _mm512_set1_pd(0.375), s3 = _mm512_set1_pd(0.3125);
    const __m512d s4 = _mm512_set1_pd(0.2734375);
    for (int k = 0; k < n; k += kDenseGroup) {
        __m512d d2[U], x[U], f[U];
#pragma GCC unroll 4
        for (int u = 0; u < U; ++u) {
            d2[u] = _mm512_load_pd(d2v + k + kLanes * u);
            x[u] = _mm512_fmsub_pd(d2[u], scale, one);
            f[u] = top;
        }
        for (int j = a.n - 2; j >= 0; --j) {
            const __m512d c = _mm512_set1_pd(a.c[j]);
#pragma GCC unroll 4
            for (int u = 0; u < U; ++u) f[u] = _mm512_fmadd_pd(f[u], x[u], c);
        }
#pragma GCC unroll 4
        for (int u = 0; u < U; ++u) {
            // 1/d from the 2^-14 seed and the series of (1 - e)^(-1/2) to e^4 (~2^-54 relative); a centre's d2
            // (< 1e-20, maybe 0) gives a seed of inf or a huge value, and its lane takes self_f0 instead
            const __m512d y0 = _mm512_maskz_rsqrt14_pd(0xff, d2[u]);  // (unmasked: GCC 12's -Wmaybe-uninitialized)
            const __m512d ee = _mm512_fnmadd_pd(_mm512_mul_pd(d2[u], y0), y0, one);
            const __m512d ps = _mm512_fmadd_pd(_mm512_fmadd_pd(_mm512_fmadd_pd(s4, ee, s3), ee, s2), ee, s1);
            __m512d v = _mm512_sub_pd(_mm512_fmadd_pd(_mm512_mul_pd(y0, ee), ps, y0), f[u]);
            v = _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(d2[u], eps2, _CMP_LT_OQ), self);
            s[u] = _mm512_fmadd_pd(_mm512_load_pd(qv + k + kLanes * u), v, s[u]);
        }
    }
}

// Pass 2 on the buffer's whole groups (all of it, padded to a whole group, when `last`); the rest moves to the front.
__attribute__((target("avx512f"))) void dense_flush(PackBuffer &b, const PairArgs &a, __m512d *s, bool last) {
    int m = b.n / kDenseGroup * kDenseGroup;
    if (last && m < b.n) {
        // padding: zero charge at a distance inside f's interval (its term is exactly 0)
        for (int k = b.n; k < m + kDenseGroup; ++k) b.d2[k] = 0.5 * a.rc2, b.q[k] = 0.0;
        m += kDenseGroup;
    }
    dense_avx512(b.d2, b.q, m, a, s);
    const int rest = b.n > m ? b.n - m : 0;
    for (int k = 0; k < rest; ++k) b.d2[k] = b.d2[m + k], b.q[k] = b.q[m + k];
    b.n = rest;
}

// Pass 1 over cells [i, e): d2 as the scalar path computes it, the cells within R_c packed in order.
__attribute__((target("avx512f"))) void pack_avx512(const SplitCellsView &cv, int64_t i, int64_t e, const PairArgs &a,
                                                    PackBuffer &b, __m512d *s) {
    const __m512d px = _mm512_set1_pd(a.px), py = _mm512_set1_pd(a.py), pz = _mm512_set1_pd(a.pz);
    const __m512d rc2 = _mm512_set1_pd(a.rc2);
    for (; i < e; i += kLanes) {
        const __mmask8 lanes = static_cast<__mmask8>(e - i >= kLanes ? 0xffu : (1u << (e - i)) - 1u);
        const __m512d dx = _mm512_sub_pd(px, _mm512_loadu_pd(cv.x + i));
        const __m512d dy = _mm512_sub_pd(py, _mm512_loadu_pd(cv.y + i));
        const __m512d dz = _mm512_sub_pd(pz, _mm512_loadu_pd(cv.z + i));
        const __m512d d2 = _mm512_fmadd_pd(dz, dz, _mm512_fmadd_pd(dy, dy, _mm512_mul_pd(dx, dx)));
        const __mmask8 in = _mm512_mask_cmp_pd_mask(lanes, d2, rc2, _CMP_LT_OQ);
        _mm512_storeu_pd(b.d2 + b.n, _mm512_maskz_compress_pd(in, d2));
        _mm512_storeu_pd(b.q + b.n, _mm512_maskz_compress_pd(in, _mm512_loadu_pd(cv.q + i)));
        b.n += __builtin_popcount(in);
        if (b.n >= kPackCap) dense_flush(b, a, s, false);
    }
}

// L(p) from the stencil with whole z-rows of 8 values as vectors (the scalar split_stencil took ~5,700 cycles a point
// on a Zen 4 core, a sixth of the point). Deterministic on its machine; within rounding of split_stencil.
__attribute__((target("avx512f"))) double stencil_avx512(const SplitStencil &st) {
    __m512d acc = _mm512_setzero_pd();
    for (int i = 0; i < kSplitOrder; ++i) {
        const double *row = st.g + ((st.c[0] + i) * st.n[1] + st.c[1]) * st.n[2] + st.c[2];
        __m512d si = _mm512_setzero_pd();
        for (int j = 0; j < kSplitOrder; ++j, row += st.n[2])
            si = _mm512_fmadd_pd(_mm512_set1_pd(st.w[1][j]), _mm512_loadu_pd(row), si);
        acc = _mm512_fmadd_pd(_mm512_set1_pd(st.w[0][i]), si, acc);
    }
    alignas(64) double l[kLanes];  // (GCC 12's _mm512_reduce_add_pd warns on its own undefined vector)
    _mm512_store_pd(l, _mm512_mul_pd(acc, _mm512_loadu_pd(st.w[2])));
    return lane_sum(l);
}

__attribute__((target("avx2,fma"))) void range_avx2(const SplitCellsView &cv, int64_t b, int64_t e, const PairArgs &a,
                                                   double *acc) {
    const __m256d px = _mm256_set1_pd(a.px), py = _mm256_set1_pd(a.py), pz = _mm256_set1_pd(a.pz);
    const __m256d rc2 = _mm256_set1_pd(a.rc2), eps2 = _mm256_set1_pd(kSingularRadius2), scale = _mm256_set1_pd(a.scale);
    const __m256d one = _mm256_set1_pd(1.0), top = _mm256_set1_pd(a.c[a.n - 1]);
    const __m256d self = _mm256_set1_pd(a.self_f0), lane = _mm256_set_pd(3, 2, 1, 0);
    __m256d s[2] = {_mm256_loadu_pd(acc), _mm256_loadu_pd(acc + 4)};
    for (int64_t i = b; i < e; i += 4) {
        const int h = static_cast<int>(((i - b) / 4) % 2);  // lanes 0-3 or 4-7 of the 8
        const __m256d valid = _mm256_cmp_pd(lane, _mm256_set1_pd(static_cast<double>(e - i)), _CMP_LT_OQ);
        const __m256d dx = _mm256_sub_pd(px, _mm256_loadu_pd(cv.x + i)), dy = _mm256_sub_pd(py, _mm256_loadu_pd(cv.y + i)),
                      dz = _mm256_sub_pd(pz, _mm256_loadu_pd(cv.z + i));
        const __m256d d2 = _mm256_fmadd_pd(dz, dz, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dx, dx)));
        const __m256d in = _mm256_and_pd(valid, _mm256_cmp_pd(d2, rc2, _CMP_LT_OQ));
        if (_mm256_movemask_pd(in) == 0) continue;
        const __m256d x = _mm256_fmsub_pd(_mm256_and_pd(in, d2), scale, one);
        __m256d f = top;
        for (int j = a.n - 2; j >= 0; --j) f = _mm256_fmadd_pd(f, x, _mm256_set1_pd(a.c[j]));
        __m256d v = _mm256_sub_pd(_mm256_div_pd(one, _mm256_sqrt_pd(_mm256_blendv_pd(one, d2, in))), f);
        v = _mm256_blendv_pd(v, self, _mm256_cmp_pd(d2, eps2, _CMP_LT_OQ));
        s[h] = _mm256_blendv_pd(s[h], _mm256_fmadd_pd(_mm256_loadu_pd(cv.q + i), v, s[h]), in);
    }
    _mm256_storeu_pd(acc, s[0]), _mm256_storeu_pd(acc + 4, s[1]);
}
#endif

using RangeFn = void (*)(const SplitCellsView &, int64_t, int64_t, const PairArgs &, double *);

RangeFn pick_range() {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return range_avx2;
#endif
    return range_scalar;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) double short_sum_avx512(const SplitView &v, const double *p, const PairArgs &a) {
    PackBuffer b;
    __m512d s[kDenseUnroll];
    for (int u = 0; u < kDenseUnroll; ++u) s[u] = _mm512_setzero_pd();
    for_ranges_two_pass(v.cells, p, v.rc2, [&](int64_t i, int64_t e) { pack_avx512(v.cells, i, e, a, b, s); });
    dense_flush(b, a, s, true);
    static_assert(kDenseUnroll == 4, "the accumulators are added as (0 + 1) + (2 + 3)");
    alignas(64) double l[kLanes];
    _mm512_store_pd(l, _mm512_add_pd(_mm512_add_pd(s[0], s[1]), _mm512_add_pd(s[2], s[3])));
    return lane_sum(l);
}
#endif

double short_sum(const SplitView &v, const double *p, double self) {
    const PairArgs a{p[0], p[1], p[2], v.rc2, self - v.f0, v.table.c, v.table.n, v.table.scale};
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_avx512()) return short_sum_avx512(v, p, a);
#endif
    static const RangeFn range = pick_range();
    alignas(64) double acc[kLanes] = {};
    for_ranges_two_pass(v.cells, p, v.rc2, [&](int64_t b, int64_t e) { range(v.cells, b, e, a, acc); });
    return lane_sum(acc);
}

double interp(const SplitGridView &g, const double *p) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (use_avx512()) {
        SplitStencil st;
        split_stencil_of(g, p, &st);
        return stencil_avx512(st);
    }
#endif
    return split_interp(g, p);
}

class FieldSplitCpu final : public FieldBackend, public SplitStats, public SplitGradStats, private SplitEngine {
public:
    FieldSplitCpu(const FieldData &d, const qmmm_options &opt) : threads_(opt.n_threads) {
        nuclei_.n_nuclei = d.n_nuclei, nuclei_.nuc_xyz = d.nuc_xyz, nuclei_.nuc_z = d.nuc_z;
        qmmm_options od = opt;
        od.method = QMMM_METHOD_DIRECT, od.backend = QMMM_BACKEND_CPU, od.precision = QMMM_PRECISION_DOUBLE;
        od.region = nullptr;
        // A field of few cells takes the unpadded sum: the chunked one pads every point's sum to kFieldChunk cells, and
        // where the cells lie beyond the row kernel's range the grid's nodes are summed here (3 cells: ~340x the pairs).
        const FieldData dd = split_direct_data(d);
        direct_ = dd.n_cells <= kSmallCells ? make_field_cpu_small(dd, od) : make_field_cpu(dd, od);
        split_build(model_, d, opt, *this);
        view_ = model_.view();
        // What the gradient's first call may need to build a grid of its own (split_grad_prepare).
        cell_volume_ = d.cell_volume, point_charges_ = d.point_charges, opt_ = opt;
        std::copy(opt.region, opt.region + 6, region_);
        opt_.region = region_;
        simd_clear_upper();
    }

    // SplitGradStats: the gradient's tables on first use.
    const SplitGradInfo &split_grad_info() override {
        if (!grad_.info.ready) {
            const SplitGradEval eval = [this](const SplitGradView &v, double self, int64_t n, const double *xyz,
                                              double *u, double *g) { grad_cells(v, self, n, xyz, nullptr, u, g); };
            split_grad_prepare(grad_, model_, split_model_data(model_, nuclei_, cell_volume_, point_charges_), opt_, *this,
                               eval, threads_ > 0 ? threads_ : default_threads());
        }
        return grad_.info;
    }
    bool split_grad(int64_t n, const double *xyz, double *u, double *grad, std::vector<char> &out) override {
        if (!split_grad_info().split) return false;
        out.assign(static_cast<size_t>(n), 0);
        grad_cells(grad_.view, grad_.self, n, xyz, &out, u, grad);
        const double work = static_cast<double>(n) * static_cast<double>(nuclei_.n_nuclei);
        const int nt = n >= 64 ? call_threads(threads_, work) : 1;
        parallel_tiles(nt, (n + 63) / 64, [&](int64_t t) {
            for (int64_t i = t * 64; i < std::min(n, t * 64 + 64); ++i) {
                if (out[i]) continue;
                const double *p = xyz + 3 * i;
                double *g = grad + 3 * i, v = 0;
                for (int64_t b = 0; b < nuclei_.n_nuclei; ++b) {  // - Z / d and its gradient Z (r - R) / d^3
                    const double *r = &nuclei_.nuc_xyz[3 * b];
                    const double dx = p[0] - r[0], dy = p[1] - r[1], dz = p[2] - r[2];
                    const double d2 = dx * dx + dy * dy + dz * dz, z = nuclei_.nuc_z[b];
                    if (d2 < kSingularRadius2) {  // no finite value: the engine names the nucleus
                        v = std::numeric_limits<double>::quiet_NaN();
                        continue;
                    }
                    const double inv = 1 / std::sqrt(d2), c = ((z * inv) * inv) * inv;
                    v -= z * inv, g[0] += c * dx, g[1] += c * dy, g[2] += c * dz;
                }
                u[i] += v;
            }
        });
        return true;
    }

    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return QMMM_PRECISION_DOUBLE; }
    // The short-range sums per point (short_sum): AVX-512 where the CPU has it, else AVX2 + FMA, else scalar.
    int cpu_isa() const override {
        if (use_avx512()) return QMMM_CPU_ISA_AVX512;
        return pick_range() == range_scalar ? QMMM_CPU_ISA_GENERIC : QMMM_CPU_ISA_AVX2;
    }
    // A point's value does not depend on the batch (see Determinism above), nor does the direct sum's outside the region.
    int64_t merge_from() const override { return 1; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = call_threads(threads_, 1e3 * static_cast<double>(n));  // a point costs ~10^3 pair terms
        std::vector<char> out(static_cast<size_t>(n));
        if (n >= kSortPoints) split_point_order(view_.grid, 0.5 * std::sqrt(view_.rc2), n, xyz, nt, order_);
        else order_.clear();
        parallel_tiles(n >= 4 * kLanes ? nt : 1, (n + kPointTile - 1) / kPointTile, [&](int64_t t) {
            for (int64_t k = t * kPointTile; k < std::min(n, (t + 1) * kPointTile); ++k) {
                const int64_t i = order_.empty() ? k : order_[static_cast<size_t>(k)];
                const double *p = xyz + 3 * i;
                out[i] = !split_inside(view_.grid, p);
                u[i] = out[i] ? 0.0 : interp(view_.grid, p) + short_sum(view_, p, model_.self);
            }
        });
        outside(n, xyz, out, u);
        add_nuclear_term(nuclei_, n, xyz, u, nt);
        simd_clear_upper();
        return QMMM_SUCCESS;
    }

    const SplitInfo &split_info() const override { return model_.info; }
    int64_t points() const override { return points_; }
    int64_t points_outside() const override { return outside_; }
    // The tables and the direct backend's cells (4 doubles per cell, chunks of kFieldChunk).
    int64_t bytes() const override {
        const int64_t cells = static_cast<int64_t>(model_.x.size());
        return model_.bytes() + 32 * ((cells + kFieldChunk - 1) / kFieldChunk * kFieldChunk) +
               (grad_.own ? grad_.own->bytes() : 0) + static_cast<int64_t>(sizeof(double) * grad_.fp.size());
    }

private:
    // Points outside the region: the direct sum (all of them in one call), plus the singular-cell rule.
    void outside(int64_t n, const double *xyz, const std::vector<char> &out, double *u) {
        std::vector<double> pts;
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < n; ++i)
            if (out[i]) idx.push_back(i), pts.insert(pts.end(), xyz + 3 * i, xyz + 3 * i + 3);
        points_ += n, outside_ += static_cast<int64_t>(idx.size());
        if (idx.empty()) return;
        std::vector<double> v(idx.size());
        direct_->eval(static_cast<int64_t>(idx.size()), pts.data(), v.data());
        for (size_t k = 0; k < idx.size(); ++k) u[idx[k]] = v[k] + split_singular_fix(model_, &pts[3 * k]);
    }

    // SplitEngine: what split_build needs.
    void coulomb(int64_t n, const double *xyz, double *out) override { direct_->eval(n, xyz, out); }
    // The grid's rows with the SIMD row kernel (field_cpu_simd.hpp), ~1.5x the direct kernel's pairs per second on
    // AVX-512 (the x-y distance shared by 4 nodes, two series terms less: the second made the 1.1M-cell setup ~9 %
    // faster on the H100's host). Tasks of up to points_double nodes of one
    // row; a group of tasks walks the cells in blocks that stay in L2, adding each block's partial in block order, and
    // the cells past the last multiple of 16 in scalar code at the end: a node's value does not depend on the threads.
    void coulomb_rows(int64_t n, const double *xyz, const std::vector<int64_t> &row, double *out) override {
        const FieldSimdKernels *k = field_simd_kernels(cpu_isa_choose());
        const SplitCellsView &c = model_.cv;
        const int64_t nc = static_cast<int64_t>(model_.x.size()) - kSplitCellPadding;
        bool in_range = k != nullptr && cells_in_range_;
        for (int64_t i = 0; in_range && i < 3 * n; ++i) in_range = std::fabs(xyz[i]) <= kSimdRange;
        if (!in_range || nc <= 0) return coulomb(n, xyz, out);
        const int np = k->points_double;
        std::vector<int64_t> task;  // first node of each task; its nodes run to the next task's first or its row's end
        std::vector<int32_t> count;
        for (size_t r = 0; r + 1 < row.size(); ++r)
            for (int64_t b = row[r]; b < row[r + 1]; b += np)
                task.push_back(b), count.push_back(static_cast<int32_t>(std::min<int64_t>(np, row[r + 1] - b)));
        constexpr int64_t kBlockCells = 4096;  // 128 KB of cells
        constexpr int64_t kGroup = 32;         // tasks that share a block's loads from L2
        const int64_t nt_tasks = static_cast<int64_t>(task.size()), n16 = nc / 16 * 16;
        const double self = model_.build_self;
        const int nt = threads_ > 0 ? threads_ : default_threads();  // setup: always large
#pragma omp parallel num_threads(nt)
        {
#pragma omp for schedule(dynamic, 1)
            for (int64_t g0 = 0; g0 < nt_tasks; g0 += kGroup) {
                const int64_t g1 = std::min(nt_tasks, g0 + kGroup);
                double acc[kGroup][kSimdMaxPoints] = {};
                for (int64_t b = 0; b < n16; b += kBlockCells) {
                    const SimdCellsD cells{c.x + b, c.y + b, c.z + b, c.q + b};
                    const int64_t len = std::min(kBlockCells, n16 - b);
                    for (int64_t t = g0; t < g1; ++t) {
                        const double *p = xyz + 3 * task[t];
                        double z[kSimdMaxPoints], part[kSimdMaxPoints];
                        for (int j = 0; j < np; ++j) z[j] = xyz[3 * (task[t] + std::min(j, count[t] - 1)) + 2];
                        k->dbl_rows(cells, len, p[0], p[1], z, np, self, part);
                        for (int j = 0; j < count[t]; ++j) acc[t - g0][j] += part[j];
                    }
                }
                for (int64_t t = g0; t < g1; ++t)
                    for (int j = 0; j < count[t]; ++j) {
                        const double *p = xyz + 3 * (task[t] + j);
                        double tail = 0;
                        for (int64_t m = n16; m < nc; ++m) {
                            const double dx = p[0] - c.x[m], dy = p[1] - c.y[m], dz = p[2] - c.z[m];
                            const double d2 = dx * dx + dy * dy + dz * dz;
                            tail += c.q[m] * (d2 < kSingularRadius2 ? self : 1.0 / std::sqrt(d2));
                        }
                        out[task[t] + j] = acc[t - g0][j] + tail;
                    }
            }
            simd_clear_upper();
        }
    }
    void cells_ready(const SplitModel &m) override {
        cells_in_range_ = true;
        for (size_t i = 0; i + kSplitCellPadding < m.x.size(); ++i)
            cells_in_range_ = cells_in_range_ && std::fabs(m.x[i]) <= kSimdRange && std::fabs(m.y[i]) <= kSimdRange &&
                              std::fabs(m.z[i]) <= kSimdRange;
    }
    void short_range(const SplitModel &m, int64_t n, const double *xyz, double self, double *out) override {
        const SplitView v = m.view();
        const int nt = threads_ > 0 ? threads_ : default_threads();  // setup: always large
#pragma omp parallel num_threads(nt)
        {
#pragma omp for schedule(dynamic, 64)
            for (int64_t i = 0; i < n; ++i) out[i] = short_sum(v, xyz + 3 * i, self);
            simd_clear_upper();
        }
    }

    // The cells' part of U and grad U (split_grad_point) at the points inside the grid's region, in spatial order as
    // eval; out (when given) flags the others, whose outputs are left as they are. A point's result does not depend
    // on the batch or the threads.
    void grad_cells(const SplitGradView &v, double self, int64_t n, const double *xyz, std::vector<char> *out, double *u,
                    double *g) {
        const int nt = call_threads(threads_, 1.5e3 * static_cast<double>(n));
        std::vector<int64_t> order;
        if (n >= kSortPoints) split_point_order(v.v.grid, 0.5 * std::sqrt(v.rg2), n, xyz, nt, order);
        parallel_tiles(n >= 4 * kLanes ? nt : 1, (n + kPointTile - 1) / kPointTile, [&](int64_t t) {
            for (int64_t k = t * kPointTile; k < std::min(n, (t + 1) * kPointTile); ++k) {
                const int64_t i = order.empty() ? k : order[static_cast<size_t>(k)];
                const double *p = xyz + 3 * i;
                if (out && !split_inside(v.v.grid, p)) {
                    (*out)[static_cast<size_t>(i)] = 1;
                    continue;
                }
                split_grad_point(v, p, self, u + i, g + 3 * i);
            }
        });
    }

    // Batches of at least this many points are evaluated in spatial order (split_point_order), so that the next point's
    // ~1,000 cells and 512 grid values are mostly in L1 and L2 already: 5-11 % faster on one core of the H100 host
    // (AVX-512), 9-20 % on an AVX2 core, 0-2 % at 16 threads, same bits.
    static constexpr int64_t kSortPoints = 64;
    // Points a tile of a call's parallel loop (cpu_parallel.hpp, the library's pool, as every other per-call loop:
    // an OpenMP team here left its threads spinning after the loop while the pool's helpers took the nuclear term,
    // 31 threads on 16 cores, and a helper taken off its core held the call: rounds of 10.7 us a point against 1.5 at
    // 1.1M cells, 1,024 points, 16 threads on an idle 16-core Xeon).
    static constexpr int64_t kPointTile = 8;
    std::vector<int64_t> order_;
    int threads_;
    bool cells_in_range_ = false;  // every cell within kSimdRange of the origin (the SIMD kernels' precondition)
    FieldData nuclei_;
    std::unique_ptr<FieldBackend> direct_;
    SplitModel model_;
    SplitView view_;
    // What the gradient's own grid is built from (with the model's cells and the nuclei).
    double cell_volume_ = 0;
    bool point_charges_ = false;
    qmmm_options opt_;
    double region_[6];
    SplitGradModel grad_;
    int64_t points_ = 0, outside_ = 0;
};

}  // namespace

std::unique_ptr<FieldBackend> make_field_split_cpu(const FieldData &d, const qmmm_options &opt) {
    return std::make_unique<FieldSplitCpu>(d, opt);
}

}  // namespace qmmm
