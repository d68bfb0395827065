// field_split_shared.hpp -- the range-split field (QMMM_METHOD_SPLIT) as both of its backends evaluate it: plain
// views of the tables built at create (field_split.hpp) and the inline functions that read them, compiled by the
// host compiler and by nvcc (src_cuda/field/split/field_split_gpu_kernels.cu), so the CPU and the GPU walk the same
// cell ranges in the same order and interpolate with the same weights.
//
//   U_ES(r) = L(r) + S(r) - sum_b Z_b / |r - R_b|
//   L(r) = sum_m q_m erf(a d_m) / d_m    (smooth: order-8 Lagrange interpolation on a grid over the QM region)
//   S(r) = sum_{d_m < R_c} q_m erfc(a d_m) / d_m = sum_{d_m < R_c} q_m (1/d_m - f(d_m^2))
//   f(s) = erf(a sqrt s) / sqrt s        (an entire function of s: one polynomial on [0, R_c^2] from its Chebyshev
//                                          series, no special functions and no table look-ups in the pair loop;
//                                          f(0) = 2a/sqrt(pi))
// A point within kSingularRadius of a cell centre takes q (self - f(0)) from that cell in S, so that L + S
// gives it q * self, the direct sum's singular-cell rule.
#pragma once
#include <cmath>
#include <cstdint>

#include "backend/field_shared.hpp"

namespace qmmm {

// Lagrange points per axis (degree 7): 512 grid values per point, error ~ h^8.
constexpr int kSplitOrder = 8;
// Stencil of a point in interval j: nodes j - kSplitLow .. j + kSplitOrder - 1 - kSplitLow.
constexpr int kSplitLow = kSplitOrder / 2 - 1;
// Level-0 bricks are kSplitBrick intervals per side; a block of level l is kSplitBrick intervals of spacing h / 2^l
// per side (fewer at the region's far edges) and is refined into 2 x 2 x 2 blocks of level l + 1 (an octree under
// each brick) where the error estimate asks for it, down to level kSplitMaxLevel.
constexpr int kSplitBrick = 8;
constexpr int kSplitMaxLevel = 4;
// The finest spacing is the unit of the integer coordinates of grid nodes and blocks.
constexpr int32_t kSplitUnits = 1 << kSplitMaxLevel;  // units per level-0 spacing
// f(s): at most this many terms (degree 31 reaches 1e-16 for a^2 R_c^2 up to 26, tolerance 1e-11).
constexpr int kSplitMaxTerms = 40;

// The cells sorted into bins of side `bin` (x fastest), and by x within a bin: the cells of bins (ix0..ix1, iy, iz)
// are the contiguous range start[b(ix0, iy, iz)] .. start[b(ix1, iy, iz) + 1], in increasing x.
// The cell arrays end with this many padding cells (far away, zero charge, in no bin): vector loops may read past a
// range's end.
constexpr int kSplitCellPadding = 8;
struct SplitCellsView {
    double lo[3] = {0, 0, 0};  // corner of bin (0, 0, 0)
    double bin = 1, inv_bin = 1;
    int32_t nb[3] = {0, 0, 0};
    const int64_t *start = nullptr;  // nb[0] nb[1] nb[2] + 1 entries
    const double *x = nullptr, *y = nullptr, *z = nullptr, *q = nullptr;
};

// f(s) = sum_j c_j x^j, x = s * scale - 1, for 0 <= s <= R_c^2: the Chebyshev series of f on that interval
// rewritten in powers of x (in long double, at create), so that a pair costs one fused multiply-add per term (Horner)
// instead of Clenshaw's two operations. f is entire in s and its Chebyshev coefficients fall fast, so the power
// coefficients stay of the size of f (their absolute sum is f(0) for today's tables): no cancellation.
struct SplitTableView {
    const double *c = nullptr;
    int32_t n = 0;      // terms
    double scale = 0;   // 2 / R_c^2
};

// A block of the octree: either a leaf with its own grid (or level 0's, offset -1) or the parent of 8 blocks.
struct SplitBlock {
    double lo[3];      // corner of the block's grid (its first interval starts here)
    double h;          // spacing
    double inv_h;      // 1 / h (the GPU's double division cost ~20 instructions a point)
    int64_t offset;    // first value in the pool; -1: the level-0 grid
    int32_t o[3];      // corner in units (h0 / kSplitUnits) from the region's corner
    int32_t n_int[3];  // intervals per axis
    int32_t level;
    int32_t child;     // first of 8 children (x-major: child + 4 cx + 2 cy + cz); -1 for a leaf
};

// The interpolation grid over the region [lo, hi]: level 0 is one grid (node i at lo + (i - kSplitLow) h,
// nint intervals plus kSplitOrder - 1 margin nodes per axis, z fastest); brick[b] is the root block of level-0 brick
// b; leaves of level >= 1 hold their own grids in the pool.
struct SplitGridView {
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    double h = 1, inv_h = 1, inv_u = 1;  // level-0 spacing; 1 / unit
    int32_t nint[3] = {0, 0, 0};
    int32_t nbrick[3] = {0, 0, 0};
    const double *g0 = nullptr;
    const int32_t *brick = nullptr;
    const SplitBlock *blocks = nullptr;
    const double *pool = nullptr;
};

// Everything a point needs.
struct SplitView {
    SplitCellsView cells;
    SplitTableView table;
    SplitGridView grid;
    double alpha = 0, rc2 = 0;
    double f0 = 0;  // f(0) = 2 alpha / sqrt(pi)
};

QMMM_HOST_DEVICE inline bool split_inside(const SplitGridView &g, const double *p) {
    return p[0] >= g.lo[0] && p[0] <= g.hi[0] && p[1] >= g.lo[1] && p[1] <= g.hi[1] && p[2] >= g.lo[2] &&
           p[2] <= g.hi[2];
}

// f(s) for 0 <= s <= R_c^2 (Horner's rule with fused multiply-adds, the order every CPU and GPU kernel uses).
QMMM_HOST_DEVICE inline double split_f(const SplitTableView &t, double s) {
    const double x = fma(s, t.scale, -1.0);
    double r = t.c[t.n - 1];
    for (int j = t.n - 2; j >= 0; --j) r = fma(r, x, t.c[j]);
    return r;
}

// MIXED's h(d) = exp(a^2 d^2) erfc(a d) in single precision, in powers of u = d scale - 1 (scale = 2 / R_c): at most
// this many float terms (about 16-20 reach float's accuracy for today's a R_c, 4 to 5), evaluated as the CUDA kernel does
// (fused multiply-adds: the host's build check gets its bits).
constexpr int kSplitMaxTermsSingle = 24;
QMMM_HOST_DEVICE inline float split_h_single(const float *c, int n, float scale, float d) {
    const float u = fmaf(d, scale, -1.0f);
    float r = c[n - 1];
    for (int j = n - 2; j >= 0; --j) r = fmaf(r, u, c[j]);
    return r;
}

// One cell's short-range term for a squared distance d2: 0 beyond R_c, q (self - f0) on the centre.
QMMM_HOST_DEVICE inline double split_pair(const SplitView &v, double q, double d2, double self) {
    if (!(d2 < v.rc2)) return 0.0;
    if (d2 < kSingularRadius2) return q * (self - v.f0);
    return q * (1.0 / sqrt(d2) - split_f(v.table, d2));
}

// The bins a sphere of radius sqrt(r2) about p can touch: i0[k] .. i1[k] per axis; false where it misses them all.
QMMM_HOST_DEVICE inline bool split_bin_bounds(const SplitCellsView &c, const double *p, double r2, int32_t *i0, int32_t *i1) {
    if (c.nb[0] == 0) return false;
    const double r = sqrt(r2);
    for (int k = 0; k < 3; ++k) {
        const double a = floor((p[k] - r - c.lo[k]) * c.inv_bin), b = floor((p[k] + r - c.lo[k]) * c.inv_bin);
        if (b < 0 || a >= c.nb[k]) return false;  // the sphere misses the bins (also NaN-free: p is finite)
        i0[k] = a < 0 ? 0 : static_cast<int32_t>(a);
        i1[k] = b >= c.nb[k] ? c.nb[k] - 1 : static_cast<int32_t>(b);
    }
    return true;
}

// Cells of [b, e) with x < t (split_count_below) or x > t (split_count_above), for x sorted increasingly: counted 8 at
// a time over independent loads, without a data-dependent branch per cell (a scan that stops at the first cell past t
// was a chain of dependent loads on the GPU and a mispredicted branch per column on the CPU).
QMMM_HOST_DEVICE inline int64_t split_count_below(const double *x, int64_t b, int64_t e, double t) {
    int64_t n = 0;
    for (int64_t m = b; m < e; m += 8) {
        int k = 0;
        for (int u = 0; u < 8; ++u) {
            const int64_t i = m + u < e ? m + u : e - 1;
            k += (m + u < e) & (x[i] < t);
        }
        n += k;
        if (k < 8) break;  // sorted: the rest are >= t
    }
    return n;
}
QMMM_HOST_DEVICE inline int64_t split_count_above(const double *x, int64_t b, int64_t e, double t) {
    int64_t n = 0;
    for (int64_t m = e; m > b; m -= 8) {
        int k = 0;
        for (int u = 1; u <= 8; ++u) {
            const int64_t i = m - u >= b ? m - u : b;
            k += (m - u >= b) & (x[i] > t);
        }
        n += k;
        if (k < 8) break;
    }
    return n;
}

// Column (iy, iz)'s part of the sphere's chord through the column's point nearest to p, before the trimming in x:
// the cell-list entries of its first and last bins and the chord's x bounds (false where the chord misses the column).
// A column's cells are sorted by x within each bin, and a bin's cells lie within its x bounds, so the cells before the
// chord are the first bin's with x < lo and those after it the last bin's with x > hi (split_column_trim).
struct SplitColumn {
    int64_t f0, f1, l0, l1;  // first bin's cells [f0, f1), last bin's [l0, l1)
    double lo, hi;
};
QMMM_HOST_DEVICE inline bool split_column_bins(const SplitCellsView &c, const double *p, double r2, int32_t iy, int32_t iz,
                                               SplitColumn *col) {
    const double z0 = c.lo[2] + iz * c.bin;
    const double dz = p[2] < z0 ? z0 - p[2] : (p[2] > z0 + c.bin ? p[2] - z0 - c.bin : 0.0);
    const double y0 = c.lo[1] + iy * c.bin;
    const double dy = p[1] < y0 ? y0 - p[1] : (p[1] > y0 + c.bin ? p[1] - y0 - c.bin : 0.0);
    const double rest = r2 - dy * dy - dz * dz;
    if (rest < 0) return false;
    const double rx = sqrt(rest);
    const double a = floor((p[0] - rx - c.lo[0]) * c.inv_bin), b = floor((p[0] + rx - c.lo[0]) * c.inv_bin);
    if (b < 0 || a >= c.nb[0]) return false;
    const int32_t x0 = a < 0 ? 0 : static_cast<int32_t>(a), x1 = b >= c.nb[0] ? c.nb[0] - 1 : static_cast<int32_t>(b);
    const int64_t row = (static_cast<int64_t>(iz) * c.nb[1] + iy) * c.nb[0];
    col->f0 = c.start[row + x0], col->f1 = c.start[row + x0 + 1], col->l0 = c.start[row + x1], col->l1 = c.start[row + x1 + 1];
    col->lo = p[0] - rx, col->hi = p[0] + rx;
    return true;
}

// The column's cells within the chord: [*begin, *end), possibly empty.
QMMM_HOST_DEVICE inline void split_column_trim(const SplitCellsView &c, const SplitColumn &col, int64_t *begin, int64_t *end) {
    const int64_t bg = col.f0 + split_count_below(c.x, col.f0, col.f1, col.lo);
    const int64_t en = col.l1 - split_count_above(c.x, col.l0, col.l1, col.hi);
    *begin = bg, *end = en > bg ? en : bg;
}

// The cells of column (iy, iz) within the sphere's chord through the column's point nearest to p: [*begin, *end)
// (empty where the chord misses the column).
QMMM_HOST_DEVICE inline void split_column_range(const SplitCellsView &c, const double *p, double r2, int32_t iy, int32_t iz,
                                                int64_t *begin, int64_t *end) {
    *begin = *end = 0;
    SplitColumn col;
    if (split_column_bins(c, p, r2, iy, iz, &col)) split_column_trim(c, col, begin, end);
}

// Calls range(begin, end) for every non-empty column range (split_column_range) of the sphere of radius sqrt(r2)
// about p, columns in iz-major, iy-minor order: a fixed order per point.
template <class F>
QMMM_HOST_DEVICE inline void split_for_ranges(const SplitCellsView &c, const double *p, double r2, F &&range) {
    int32_t i0[3], i1[3];
    if (!split_bin_bounds(c, p, r2, i0, i1)) return;
    for (int32_t iz = i0[2]; iz <= i1[2]; ++iz)
        for (int32_t iy = i0[1]; iy <= i1[1]; ++iy) {
            int64_t begin, end;
            split_column_range(c, p, r2, iy, iz, &begin, &end);
            if (begin < end) range(begin, end);
        }
}

// Scalar short-range sum (the GPU and the CPU's reference path; the CPU's vector kernel sums the same ranges).
QMMM_HOST_DEVICE inline double split_short_scalar(const SplitView &v, const double *p, double self) {
    double s = 0.0;
    split_for_ranges(v.cells, p, v.rc2, [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
            const double dx = p[0] - v.cells.x[m], dy = p[1] - v.cells.y[m], dz = p[2] - v.cells.z[m];
            s += split_pair(v, v.cells.q[m], dx * dx + dy * dy + dz * dz, self);
        }
    });
    return s;
}

// Lagrange weights of the kSplitOrder nodes -kSplitLow .. kSplitOrder-1-kSplitLow at t (in [0, 1]).
QMMM_HOST_DEVICE inline void split_weights(double t, double *w) {
    // w_k = prod_{m != k} (t - o_m) / prod_{m != k} (o_k - o_m), o_m = m - kSplitLow; denominators are
    // (-1)^(7-k) k! (7-k)!.
    constexpr double inv_den[kSplitOrder] = {-1.0 / 5040, 1.0 / 720, -1.0 / 240, 1.0 / 144,
                                             -1.0 / 144, 1.0 / 240, -1.0 / 720, 1.0 / 5040};
    double left[kSplitOrder], right[kSplitOrder];
    left[0] = 1.0;
    for (int k = 1; k < kSplitOrder; ++k) left[k] = left[k - 1] * (t - (k - 1 - kSplitLow));
    right[kSplitOrder - 1] = 1.0;
    for (int k = kSplitOrder - 2; k >= 0; --k) right[k] = right[k + 1] * (t - (k + 1 - kSplitLow));
    for (int k = 0; k < kSplitOrder; ++k) w[k] = left[k] * right[k] * inv_den[k];
}

// Interval index and offset of coordinate x along one axis of a grid with corner lo, spacing h, n intervals.
QMMM_HOST_DEVICE inline int32_t split_locate(double x, double lo, double inv_h, int32_t n, double *t) {
    const double u = (x - lo) * inv_h;
    double j = floor(u);
    j = j < 0 ? 0 : (j > n - 1 ? n - 1 : j);
    *t = u - j;
    return static_cast<int32_t>(j);
}

// Tensor-product interpolation on a grid of nodes n[0] x n[1] x n[2] (z fastest), stencil corner c.
QMMM_HOST_DEVICE inline double split_stencil(const double *g, const int64_t *n, const int32_t *c, const double (*w)[kSplitOrder]) {
    double s = 0.0;
    for (int i = 0; i < kSplitOrder; ++i) {
        double si = 0.0;
        for (int j = 0; j < kSplitOrder; ++j) {
            const double *row = g + ((c[0] + i) * n[1] + (c[1] + j)) * n[2] + c[2];
            double sj = 0.0;
            for (int k = 0; k < kSplitOrder; ++k) sj += w[2][k] * row[k];
            si += w[1][j] * sj;
        }
        s += w[0][i] * si;
    }
    return s;
}

// The leaf block that holds p (inside the region): the point's unit index J decides every step down, so that
// setup and evaluation agree on the block of any point.
QMMM_HOST_DEVICE inline int32_t split_leaf(const SplitGridView &g, const double *p) {
    int32_t J[3];
    for (int k = 0; k < 3; ++k) {
        const double v = floor((p[k] - g.lo[k]) * g.inv_u);
        const double top = static_cast<double>(g.nint[k]) * kSplitUnits - 1;
        J[k] = static_cast<int32_t>(v < 0 ? 0 : (v > top ? top : v));
    }
    int32_t id = g.brick[((J[0] / (kSplitBrick * kSplitUnits)) * g.nbrick[1] + J[1] / (kSplitBrick * kSplitUnits)) * g.nbrick[2] +
                         J[2] / (kSplitBrick * kSplitUnits)];
    while (g.blocks[id].child >= 0) {
        const SplitBlock &b = g.blocks[id];
        const int32_t half = (kSplitBrick * kSplitUnits) >> (b.level + 1);
        id = b.child + 4 * (J[0] - b.o[0] >= half) + 2 * (J[1] - b.o[1] >= half) + (J[2] - b.o[2] >= half);
    }
    return id;
}

// The interpolation stencil of p (inside the region): the grid of p's leaf block, its node counts, the stencil's
// corner and the weights per axis.
struct SplitStencil {
    const double *g;
    int64_t n[3];
    int32_t c[3];
    double w[3][kSplitOrder];
};
QMMM_HOST_DEVICE inline void split_stencil_of(const SplitGridView &g, const double *p, SplitStencil *s) {
    const SplitBlock &b = g.blocks[split_leaf(g, p)];
    const bool base = b.offset < 0;
    const double inv = base ? g.inv_h : b.inv_h;
    double t[3];
    for (int k = 0; k < 3; ++k) {
        const int32_t ni = base ? g.nint[k] : b.n_int[k];
        s->n[k] = ni + kSplitOrder - 1;
        s->c[k] = split_locate(p[k], base ? g.lo[k] : b.lo[k], inv, ni, &t[k]);
        split_weights(t[k], s->w[k]);
    }
    s->g = base ? g.g0 : g.pool + b.offset;
}

// L(p) for p inside the region.
QMMM_HOST_DEVICE inline double split_interp(const SplitGridView &g, const double *p) {
    SplitStencil s;
    split_stencil_of(g, p, &s);
    return split_stencil(s.g, s.n, s.c, s.w);
}

// ---- the gradient (qmmm_field_eval_grad on a SPLIT field; field_split.hpp's SplitGradModel) ----
//
//   grad U_ES(r) = grad I L(r) + grad S(r) + sum_b Z_b (r - R_b) / |r - R_b|^3
//   grad S(r) = sum_{d_m < R_g} q_m (r - r_m) k(d_m^2),  k(s) = -1/d^3 - 2 f'(s)   (the exact derivative of
//               q erfc(a d)/d; f'(s) = d/ds [erf(a sqrt s)/sqrt s] from its own table on [0, R_g^2])
// grad I L is the analytic derivative of the order-8 Lagrange interpolant (the value's grid, or a finer one built for
// the gradient). R_g is that grid's R_c (L = C - S holds each cell beyond it whole: field_split.hpp); a cell on the
// point adds q (self - f(0)) to U and nothing to the gradient (the direct sum's singular-cell rule: the cube's field
// vanishes at its centre).
struct SplitGradView {
    SplitView v;        // the value's tables: f within R_c (U), the cell list, the grid
    SplitTableView fp;  // f'(s) on [0, R_g^2]
    double rg2 = 0;     // R_g^2
};

// Lagrange weights w (as split_weights) and their derivatives dw/dt at t.
QMMM_HOST_DEVICE inline void split_weights_grad(double t, double *w, double *dw) {
    constexpr double inv_den[kSplitOrder] = {-1.0 / 5040, 1.0 / 720, -1.0 / 240, 1.0 / 144,
                                             -1.0 / 144, 1.0 / 240, -1.0 / 720, 1.0 / 5040};
    double left[kSplitOrder], dleft[kSplitOrder], right[kSplitOrder], dright[kSplitOrder];
    left[0] = 1.0, dleft[0] = 0.0;
    for (int k = 1; k < kSplitOrder; ++k) {
        const double a = t - (k - 1 - kSplitLow);
        dleft[k] = dleft[k - 1] * a + left[k - 1], left[k] = left[k - 1] * a;
    }
    right[kSplitOrder - 1] = 1.0, dright[kSplitOrder - 1] = 0.0;
    for (int k = kSplitOrder - 2; k >= 0; --k) {
        const double a = t - (k + 1 - kSplitLow);
        dright[k] = dright[k + 1] * a + right[k + 1], right[k] = right[k + 1] * a;
    }
    for (int k = 0; k < kSplitOrder; ++k)
        w[k] = left[k] * right[k] * inv_den[k], dw[k] = (dleft[k] * right[k] + left[k] * dright[k]) * inv_den[k];
}

// I L(p) and its gradient for p inside the region: the leaf block's stencil, weights and their derivatives (scaled by
// the block's 1 / h) in one pass over the 512 values.
QMMM_HOST_DEVICE inline void split_interp_grad(const SplitGridView &g, const double *p, double *value, double *grad) {
    const SplitBlock &b = g.blocks[split_leaf(g, p)];
    const bool base = b.offset < 0;
    const double inv = base ? g.inv_h : b.inv_h;
    int64_t n[3];
    int32_t c[3];
    double w[3][kSplitOrder], dw[3][kSplitOrder];
    for (int k = 0; k < 3; ++k) {
        const int32_t ni = base ? g.nint[k] : b.n_int[k];
        double t;
        n[k] = ni + kSplitOrder - 1;
        c[k] = split_locate(p[k], base ? g.lo[k] : b.lo[k], inv, ni, &t);
        split_weights_grad(t, w[k], dw[k]);
    }
    const double *gp = base ? g.g0 : g.pool + b.offset;
    double s = 0.0, sx = 0.0, sy = 0.0, sz = 0.0;
    for (int i = 0; i < kSplitOrder; ++i) {
        double si = 0.0, syi = 0.0, szi = 0.0;
        for (int j = 0; j < kSplitOrder; ++j) {
            const double *row = gp + ((c[0] + i) * n[1] + (c[1] + j)) * n[2] + c[2];
            double sj = 0.0, dj = 0.0;
            for (int k = 0; k < kSplitOrder; ++k) sj += w[2][k] * row[k], dj += dw[2][k] * row[k];
            si += w[1][j] * sj, syi += dw[1][j] * sj, szi += w[1][j] * dj;
        }
        s += w[0][i] * si, sx += dw[0][i] * si, sy += w[0][i] * syi, sz += w[0][i] * szi;
    }
    *value = s;
    grad[0] = sx * inv, grad[1] = sy * inv, grad[2] = sz * inv;
}

// S(p) (the terms within R_c, as split_pair takes them) and grad S(p) (the terms within R_g): one walk over the cells
// within R_g, in split_for_ranges' order.
QMMM_HOST_DEVICE inline void split_short_grad(const SplitGradView &gv, const double *p, double self, double *value,
                                              double *grad) {
    const SplitView &v = gv.v;
    double s = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
    split_for_ranges(v.cells, p, gv.rg2, [&](int64_t b, int64_t e) {
        for (int64_t m = b; m < e; ++m) {
            const double dx = p[0] - v.cells.x[m], dy = p[1] - v.cells.y[m], dz = p[2] - v.cells.z[m];
            const double d2 = dx * dx + dy * dy + dz * dz;
            if (!(d2 < gv.rg2)) continue;
            const double q = v.cells.q[m];
            if (d2 < kSingularRadius2) {
                s += q * (self - v.f0);
                continue;
            }
            const double inv = 1.0 / sqrt(d2);
            if (d2 < v.rc2) s += q * (inv - split_f(v.table, d2));
            const double qk = q * (-(inv * inv * inv) - 2.0 * split_f(gv.fp, d2));
            gx += qk * dx, gy += qk * dy, gz += qk * dz;
        }
    });
    *value = s;
    grad[0] = gx, grad[1] = gy, grad[2] = gz;
}

// The cells' part of U and its gradient at p inside the region (the nuclei are the caller's).
QMMM_HOST_DEVICE inline void split_grad_point(const SplitGradView &gv, const double *p, double self, double *u, double *grad) {
    double l, gl[3], s, gs[3];
    split_interp_grad(gv.v.grid, p, &l, gl);
    split_short_grad(gv, p, self, &s, gs);
    *u = l + s;
    for (int k = 0; k < 3; ++k) grad[k] = gl[k] + gs[k];
}

}  // namespace qmmm
