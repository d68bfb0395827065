// field_cpu_simd_kernels.hpp -- the CPU field's chunk kernels, written once over 16-lane vector types.
// field_cpu_simd.cpp includes this file once per instruction set, inside that set's namespace and target
// region (QMMM_TARGET_BEGIN; so there is deliberately no include guard, and no #include here). The
// enclosing namespace provides:
//   F16, D16       16 float / 16 double lanes (lane l = cell l of each block of 16; the reference kernels'
//                  kLanes), with ::set(v) and ::load(ptr), and add sub mul min vfma(a,b,c) = a*b + c,
//                  vfnma(a,b,c) = c - a*b, rsqrt (the hardware seed), hsum (the lanes added pairwise in the
//                  reference order), hmin, select_lt(d, t, a, b) = d < t ? a : b per lane, lt_bits(d, t)
//                  (bit l: lane l has d < t), widen (F16 -> D16);
//   kSeedError     the seed's documented bound on |rsqrt(x) sqrt(x) - 1|;
//   kPointsSingle, kPointsMixed, kPointsDouble: points per call that suit its registers.
//
// 1/r from the seed y0: with e = 1 - d2 y0^2 (|e| <= 2 kSeedError + kSeedError^2),
//     1/r = y0 (1 - e)^(-1/2) = y0 (1 + e (c1 + c2 e + c3 e^2 + ...)),   c_k = binom(2k, k) / 4^k,
// a Newton step and the higher corrections in one polynomial, cut where the first omitted term, which does
// not average out (it has one sign), is below: SINGLE half a float ulp of the term; MIXED 1e-12 relative
// (its mean error over a VMC run's points must stay far below 1e-9 hartree); DOUBLE half a double ulp.
// With rsqrt14 (AVX-512, 2^-14) that is 1, 2 and 4 terms; with rsqrtps (AVX2, 1.5 2^-12) 2, 3 and 4.
// MIXED keeps y0's terms and the correction apart, as the GPU does: run += q y0 (float runs of kRun
// vectors into a double accumulator), corr += q y0 e p(e) (float, one per lane over the chunk, added at the
// end). Folded into one float term, q y0 (1 + e p(e)), the rounding of 1 + e p(e) to float leaves a bias
// (measured over 6.7e7 random terms with rsqrt14: -1.5e-10 relative, against -8e-12 apart; without the e^2
// term -7.5e-10): too much for the mean error a VMC energy sees. The correction's own rounding is random.

constexpr double kSeries[8] = {1.0, 0.5, 0.375, 0.3125, 0.2734375, 0.24609375, 0.2255859375, 0.20947265625};

// Smallest number of series terms whose first omitted term is below `target` (relative).
constexpr int series_order(double seed_error, double target) {
    const double e = seed_error * (2 + seed_error);
    int k = 1;
    double pw = e * e;  // e^(k+1)
    while (k < 6 && kSeries[k + 1] * pw >= target) ++k, pw *= e;
    return k;
}
constexpr int kOrderSingle = series_order(kSeedError, 0x1p-24);
constexpr int kOrderMixed = series_order(kSeedError, 1e-12);
constexpr int kOrderDouble = series_order(kSeedError, 0x1p-54);

constexpr int kL = 16;   // lanes
constexpr int kRun = kFieldMixedRun;  // MIXED: vectors per float run, as the reference kernel
static_assert(kFieldChunk % (kL * kRun) == 0, "a chunk is a whole number of runs");

// A pass over one chunk: kFast assumes no cell within the guard radius (the caller checked the chunk's box);
// kGuarded also keeps each lane's smallest d2, and a point that came within the radius is done again with
// kCareful. The three compute the same value for every lane outside the radius.
enum Mode { kFast, kGuarded, kCareful };

// scale p(e), p(e) = c1 + c2 e + ... + cK e^(K-1) (scale a power of two: exact constants)
template <class V, int K>
inline V series(V e, double scale = 1.0) {
    V s = V::set(scale * kSeries[K]);
    for (int k = K - 1; k >= 1; --k) s = vfma(s, e, V::set(scale * kSeries[k]));
    return s;
}

// MIXED's correction over c1 = 1/2 (added as corr / 2 at the end): e p(e) / c1 = e + (c2/c1) e^2 + ...,
// written as e + e (t e) so that no constant is overwritten (no register copies in the loop).
template <class V, int K>
inline V correction(V e) {
    if constexpr (K == 1) {
        return e;
    } else {
        V t = V::set(kSeries[K] / kSeries[1]);
        for (int k = K - 1; k >= 2; --k) t = vfma(t, e, V::set(kSeries[k] / kSeries[1]));
        return vfma(mul(t, e), e, e);
    }
}

// ---- SINGLE: float terms, float lanes.
// The charges come halved (SimdCellsF), so that the term is (q/2) y0 u with u = 2 + 2 e p(e): with one series
// term u = 3 - d2 y0^2, one fused multiply-add from d2 y0 (the Newton step's 1/2 costs nothing).
// Careful: the pass for a point that came within the singular radius of a cell: those lanes take q * self;
// every other lane computes exactly what the fast pass computes.
template <int P, Mode M>
inline void single_pass(const SimdCellsF &c, const float (*p)[3], float self, float *part, float *dmin) {
    const F16 one = F16::set(1.0), two = F16::set(2.0), three = F16::set(3.0);
    const F16 eps = F16::set(static_cast<float>(kSingularRadius2)), vself = F16::set(self);
    F16 px[P], py[P], pz[P], acc[P], dm[P];
    for (int k = 0; k < P; ++k) {
        px[k] = F16::set(p[k][0]), py[k] = F16::set(p[k][1]), pz[k] = F16::set(p[k][2]);
        acc[k] = F16::set(0.0), dm[k] = F16::set(3.0e38);
    }
    for (int i = 0; i < kFieldChunk; i += kL) {
        const F16 x = F16::load(c.x + i), y = F16::load(c.y + i), z = F16::load(c.z + i), q = F16::load(c.q + i);
#pragma GCC unroll 4
        for (int k = 0; k < P; ++k) {
            const F16 dx = sub(x, px[k]), dy = sub(y, py[k]), dz = sub(z, pz[k]);
            const F16 d2 = vfma(dz, dz, vfma(dy, dy, mul(dx, dx)));
            F16 y0 = rsqrt(d2), u;
            if constexpr (kOrderSingle == 1) {
                u = vfnma(mul(d2, y0), y0, three);
            } else {
                const F16 e = vfnma(mul(d2, y0), y0, one);
                u = vfma(e, series<F16, kOrderSingle>(e, 2.0), two);
            }
            if constexpr (M == kCareful) {
                y0 = select_lt(d2, eps, vself, y0), u = select_lt(d2, eps, two, u);
            } else if constexpr (M == kGuarded) {
                dm[k] = min(dm[k], d2);
            }
            acc[k] = vfma(mul(q, y0), u, acc[k]);
        }
    }
    for (int k = 0; k < P; ++k) {
        part[k] = hsum(acc[k]);
        if constexpr (M == kGuarded) dmin[k] = hmin(dm[k]);
    }
}

template <int P>
inline void single_points(const SimdCellsF &c, const float (*p)[3], float self, bool guard, float *part) {
    if (!guard) return single_pass<P, kFast>(c, p, self, part, nullptr);
    float dmin[P];
    single_pass<P, kGuarded>(c, p, self, part, dmin);
    for (int k = 0; k < P; ++k)
        if (!(dmin[k] >= static_cast<float>(kSingularRadius2))) single_pass<1, kCareful>(c, p + k, self, part + k, nullptr);
}

void single(const SimdCellsF &c, const float (*p)[3], int np, float self, bool guard, float *part) {
    switch (np) {
        case 1: single_points<1>(c, p, self, guard, part); break;
        case 2: single_points<2>(c, p, self, guard, part); break;
        case 3: single_points<3>(c, p, self, guard, part); break;
        default: single_points<4>(c, p, self, guard, part); break;
    }
}

// ---- MIXED: float pair terms from hi + lo offsets to the chunk origin, double accumulation.
// Careful: the pass for a point within kNearRadius2 of a cell: those lanes add nothing to the float sums
// (y0 = 0) and their terms are added in double from the absolute copy, in cell order, with the singular rule. With
// g (the gradient's pass), g[0..2] gains q (R - r) / d^3 of each (none within the singular radius: the cube's self
// term, whose field vanishes at the centre).
inline void near_terms(const SimdCellsM &c, int b, unsigned bits, const double *p, double self, double &near,
                       double *g = nullptr) {
    for (; bits; bits &= bits - 1) {
        const int m = b + __builtin_ctz(bits);
        const double ex = p[0] - c.xd[m], ey = p[1] - c.yd[m], ez = p[2] - c.zd[m];
        const double e2 = ex * ex + ey * ey + ez * ez;
        near += c.qd[m] * (e2 < kSingularRadius2 ? self : 1.0 / __builtin_sqrt(e2));
        if (g && !(e2 < kSingularRadius2)) {
            const double inv = 1.0 / __builtin_sqrt(e2), t = ((c.qd[m] * inv) * inv) * inv;
            g[0] -= t * ex, g[1] -= t * ey, g[2] -= t * ez;
        }
    }
}

// MIXED's d^2 from a = hi - hi (exact: both on the 2^-16 bohr grid) and b = lo - lo per axis, as
// a (a + 2b) summed over the axes onto b2, the mean of |b|^2 over the chunk (field_mixed_b2). Two cheaper forms fail
// a claim (docs/design/precision.md): d = a + b rounded to float gives every cell of a lattice plane
// (one x, or y, or z) the same error, which adds up over the plane instead of averaging out (1.03e-8 normwise with
// rsqrtps on FieldCpuIsa's uniform lattice, past the 1e-8 claim); a^2 + 2ab + b^2 with the squares added last is
// biased: a lies on the grid, so the bits of a^2 below the sum's last place are few and patterned, and their
// rounding has a mean (+1e-9 relative in d^2 at 4 bohr; the water dimer's mean error -3.7e-10 hartree). a (a + 2b)
// rounds a product with a random factor instead: no mean.
inline F16 mixed_d2(F16 ax, F16 ay, F16 az, F16 bx, F16 by, F16 bz, F16 two, F16 b2) {
    return vfma(az, vfma(bz, two, az), vfma(ay, vfma(by, two, ay), vfma(ax, vfma(bx, two, ax), b2)));
}

// G (the gradient call's pass, FieldCpu::own_grad): grad[k] also gets point k's dU/dr = sum q (R - r) / d^3 beside
// the value, whose operations and order stay the value call's (its bits): per pair the offset a + b (hi + lo, rounded
// once), 1/d from the seed and the value's own series (2 + ce = 2 (1 + e p(e)); a shorter series left a mean error of
// ~5e-10 over the water test's gradients with rsqrt14), q/d^3, summed as the value in float runs into double lanes.
template <int P, Mode M, bool G = false>
inline void mixed_pass(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2,
                       const double (*p)[3], double self, double *part, float *dmin, double (*grad)[3] = nullptr) {
    const F16 one = F16::set(1.0), zero = F16::set(0.0), near2 = F16::set(kNearRadius2), two = F16::set(2.0);
    F16 hx[P], hy[P], hz[P], lx[P], ly[P], lz[P], bb[P], corr[P], dm[P];
    D16 acc[P], gacc[G ? P : 1][3];
    double near[P], gnear[P][3];
    for (int k = 0; k < P; ++k) {
        hx[k] = F16::set(h[k][0]), hy[k] = F16::set(h[k][1]), hz[k] = F16::set(h[k][2]);
        lx[k] = F16::set(l[k][0]), ly[k] = F16::set(l[k][1]), lz[k] = F16::set(l[k][2]), bb[k] = F16::set(b2[k]);
        corr[k] = zero, dm[k] = F16::set(3.0e38), acc[k] = D16::set(0.0), near[k] = 0.0;
        for (int a = 0; a < 3; ++a) gnear[k][a] = 0.0;
        if constexpr (G)
            for (int a = 0; a < 3; ++a) gacc[k][a] = D16::set(0.0);
    }
    for (int i = 0; i < kFieldChunk; i += kL * kRun) {
        F16 run[P], grun[G ? P : 1][3];
        for (int k = 0; k < P; ++k) {
            run[k] = zero;
            if constexpr (G) grun[k][0] = grun[k][1] = grun[k][2] = zero;
        }
        for (int r = 0; r < kRun; ++r) {
            const int b = i + r * kL;
            const F16 x = F16::load(c.x + b), y = F16::load(c.y + b), z = F16::load(c.z + b), q = F16::load(c.q + b);
            const F16 xl = F16::load(c.xl + b), yl = F16::load(c.yl + b), zl = F16::load(c.zl + b);
#pragma GCC unroll 4
            for (int k = 0; k < P; ++k) {
                const F16 ax = sub(x, hx[k]), ay = sub(y, hy[k]), az = sub(z, hz[k]);
                const F16 bx = sub(xl, lx[k]), by = sub(yl, ly[k]), bz = sub(zl, lz[k]);
                const F16 d2 = mixed_d2(ax, ay, az, bx, by, bz, two, bb[k]);
                F16 y0 = rsqrt(d2);
                if constexpr (M == kCareful) {
                    if (const unsigned bits = lt_bits(d2, near2)) {
                        y0 = select_lt(d2, near2, zero, y0);  // no float term, value or gradient
                        near_terms(c, b, bits, p[k], self, near[k], G ? gnear[k] : nullptr);
                    }
                } else if constexpr (M == kGuarded) {
                    dm[k] = min(dm[k], d2);
                }
                const F16 e = vfnma(mul(d2, y0), y0, one);
                const F16 qy = mul(q, y0), ce = correction<F16, kOrderMixed>(e);
                run[k] = add(run[k], qy);
                corr[k] = vfma(qy, ce, corr[k]);
                if constexpr (G) {  // rr = 2/d, qy u2 rr^2 = 8 q/d^3
                    const F16 u2 = add(ce, two), rr = mul(y0, u2), g = mul(mul(qy, u2), mul(rr, rr));
                    grun[k][0] = vfma(g, add(ax, bx), grun[k][0]), grun[k][1] = vfma(g, add(ay, by), grun[k][1]);
                    grun[k][2] = vfma(g, add(az, bz), grun[k][2]);
                }
            }
        }
        for (int k = 0; k < P; ++k) {
            acc[k] = add(acc[k], widen(run[k]));
            if constexpr (G)
                for (int a = 0; a < 3; ++a) gacc[k][a] = add(gacc[k][a], widen(grun[k][a]));
        }
    }
    for (int k = 0; k < P; ++k) {
        part[k] = hsum(add(acc[k], mul(widen(corr[k]), D16::set(0.5)))) + near[k];
        if constexpr (G)
            for (int a = 0; a < 3; ++a) grad[k][a] = hsum(gacc[k][a]) * 0.125 + gnear[k][a];
        if constexpr (M == kGuarded) dmin[k] = hmin(dm[k]);
    }
}

template <int P>
inline void mixed_points(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2,
                         const double (*p)[3], double self, bool guard, double *part) {
    if (!guard) return mixed_pass<P, kFast>(c, h, l, b2, p, self, part, nullptr);
    float dmin[P];
    mixed_pass<P, kGuarded>(c, h, l, b2, p, self, part, dmin);
    for (int k = 0; k < P; ++k)
        if (!(dmin[k] >= kNearRadius2))
            mixed_pass<1, kCareful>(c, h + k, l + k, b2 + k, p + k, self, part + k, nullptr);
}

void mixed(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2, const double (*p)[3],
           int np, double self, bool guard, double *part) {
    switch (np) {
        case 1: mixed_points<1>(c, h, l, b2, p, self, guard, part); break;
        case 2: mixed_points<2>(c, h, l, b2, p, self, guard, part); break;
        case 3: mixed_points<3>(c, h, l, b2, p, self, guard, part); break;
        default: mixed_points<4>(c, h, l, b2, p, self, guard, part); break;
    }
}

// ---- MIXED, the gradient beside the value (FieldCpu::own_grad): mixed_pass with G, one point a call (the
// gradient's sums take the registers that more points' would; two a call, sharing the cell loads, measured the same on
// the development VM's AMD EPYC: forces_bench, 10^5 cells, 4,096 points). *part the value (mixed's bits), *grad
// dU/dr.
void mixed_grad(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2, const double (*p)[3],
                double self, bool guard, double *part, double (*grad)[3]) {
    if (!guard) return mixed_pass<1, kFast, true>(c, h, l, b2, p, self, part, nullptr, grad);
    float dmin;
    mixed_pass<1, kGuarded, true>(c, h, l, b2, p, self, part, &dmin, grad);
    if (!(dmin >= kNearRadius2)) mixed_pass<1, kCareful, true>(c, h, l, b2, p, self, part, nullptr, grad);
}

// ---- DOUBLE: the same from the seed, the polynomial carried far enough for double.
template <int P, Mode M>
inline void double_pass(const SimdCellsD &c, const double (*p)[3], double self, double *part, double *dmin) {
    const D16 one = D16::set(1.0), eps = D16::set(kSingularRadius2), vself = D16::set(self);
    D16 px[P], py[P], pz[P], acc[P], dm[P];
    for (int k = 0; k < P; ++k) {
        px[k] = D16::set(p[k][0]), py[k] = D16::set(p[k][1]), pz[k] = D16::set(p[k][2]);
        acc[k] = D16::set(0.0), dm[k] = D16::set(3.0e38);
    }
    for (int i = 0; i < kFieldChunk; i += kL) {
        const D16 x = D16::load(c.x + i), y = D16::load(c.y + i), z = D16::load(c.z + i), q = D16::load(c.q + i);
#pragma GCC unroll 4
        for (int k = 0; k < P; ++k) {
            const D16 dx = sub(x, px[k]), dy = sub(y, py[k]), dz = sub(z, pz[k]);
            const D16 d2 = vfma(dz, dz, vfma(dy, dy, mul(dx, dx)));
            const D16 y0 = rsqrt(d2);
            const D16 e = vfnma(mul(d2, y0), y0, one);
            D16 y = vfma(mul(y0, e), series<D16, kOrderDouble>(e), y0);
            if constexpr (M == kCareful) y = select_lt(d2, eps, vself, y);
            if constexpr (M == kGuarded) dm[k] = min(dm[k], d2);
            acc[k] = vfma(q, y, acc[k]);
        }
    }
    for (int k = 0; k < P; ++k) {
        part[k] = hsum(acc[k]);
        if constexpr (M == kGuarded) dmin[k] = hmin(dm[k]);
    }
}

template <int P>
inline void double_points(const SimdCellsD &c, const double (*p)[3], double self, bool guard, double *part) {
    if (!guard) return double_pass<P, kFast>(c, p, self, part, nullptr);
    double dmin[P];
    double_pass<P, kGuarded>(c, p, self, part, dmin);
    for (int k = 0; k < P; ++k)
        if (!(dmin[k] >= kSingularRadius2)) double_pass<1, kCareful>(c, p + k, self, part + k, nullptr);
}

void dbl(const SimdCellsD &c, const double (*p)[3], int np, double self, bool guard, double *part) {
    switch (np) {
        case 1: double_points<1>(c, p, self, guard, part); break;
        case 2: double_points<2>(c, p, self, guard, part); break;
        case 3: double_points<3>(c, p, self, guard, part); break;
        default: double_points<4>(c, p, self, guard, part); break;
    }
}

// ---- DOUBLE at lattice rows (the split's grid): nodes (x, y, z[k]), the cell's x-y distance shared. kGuarded keeps the
// smallest x-y distance (no node can be nearer a cell than its row's line); kCareful applies the singular rule.
// The series is cut at 1e-12 relative, as the GPU's grid kernel (one Newton step: ~1e-13): the grid's values need
// only stay far below the smallest tolerance (1e-11 normwise). With rsqrt14 that is 2 terms instead of the 3 a 1e-16
// cut took (the first omitted term, 0.3125 e^3, is below 5.7e-13 and follows e's sign); with rsqrtps 3 instead of 4.
constexpr int kOrderGrid = series_order(kSeedError, 1e-12);

template <int P, Mode M>
inline void rows_pass(const SimdCellsD &c, int64_t n, double x, double y, const double *z, double self, double *part,
                      double *dmin) {
    const D16 one = D16::set(1.0), eps = D16::set(kSingularRadius2), vself = D16::set(self);
    const D16 px = D16::set(x), py = D16::set(y);
    D16 pz[P], acc[P], dm = D16::set(3.0e38);
    for (int k = 0; k < P; ++k) pz[k] = D16::set(z[k]), acc[k] = D16::set(0.0);
    for (int64_t i = 0; i < n; i += kL) {
        const D16 dx = sub(D16::load(c.x + i), px), dy = sub(D16::load(c.y + i), py);
        const D16 cz = D16::load(c.z + i), q = D16::load(c.q + i);
        const D16 dxy2 = vfma(dy, dy, mul(dx, dx));
        if constexpr (M == kGuarded) dm = min(dm, dxy2);
#pragma GCC unroll 4
        for (int k = 0; k < P; ++k) {
            const D16 dz = sub(cz, pz[k]);
            const D16 d2 = vfma(dz, dz, dxy2);
            const D16 y0 = rsqrt(d2);
            const D16 e = vfnma(mul(d2, y0), y0, one);
            D16 v = vfma(mul(y0, e), series<D16, kOrderGrid>(e), y0);
            if constexpr (M == kCareful) v = select_lt(d2, eps, vself, v);
            acc[k] = vfma(q, v, acc[k]);
        }
    }
    for (int k = 0; k < P; ++k) part[k] = hsum(acc[k]);
    if constexpr (M == kGuarded) *dmin = hmin(dm);
}

template <int P>
inline void rows_points(const SimdCellsD &c, int64_t n, double x, double y, const double *z, double self, double *part) {
    double dmin;
    rows_pass<P, kGuarded>(c, n, x, y, z, self, part, &dmin);
    if (!(dmin >= kSingularRadius2)) rows_pass<P, kCareful>(c, n, x, y, z, self, part, nullptr);
}

void dbl_rows(const SimdCellsD &c, int64_t n, double x, double y, const double *z, int np, double self, double *part) {
    switch (np) {
        case 1: rows_points<1>(c, n, x, y, z, self, part); break;
        case 2: rows_points<2>(c, n, x, y, z, self, part); break;
        case 3: rows_points<3>(c, n, x, y, z, self, part); break;
        default: rows_points<4>(c, n, x, y, z, self, part); break;
    }
}

const FieldSimdKernels kKernels = {kIsa, kPointsSingle, kPointsMixed, kPointsDouble, &single, &mixed, &dbl, &dbl_rows,
                                   &mixed_grad};
