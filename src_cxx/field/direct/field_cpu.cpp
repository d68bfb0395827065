// field_cpu.cpp -- the CPU backend of the embedding field: the reference every other path is checked
// against.
//
// Determinism: cells are cut into fixed chunks of kChunk (padded with zero charges far away). A chunk's
// partial sum is computed by one function with kLanes independent accumulators, summed in a fixed order;
// a point's value is the chunk partials added in chunk order. Threads only decide who computes which
// (point, chunk) pair, so the value is bitwise the same for any thread count or batch.
//
// Two sets of chunk kernels, chosen when the field is made (cpu_isa_choose: the widest set the CPU runs, or
// QMMM_CPU_ISA=avx512|avx2|generic):
// - the hand-vectorised kernels (field_cpu_simd.cpp; AVX-512 or AVX2): 1/r from the hardware reciprocal
//   square root and a Newton polynomial, several points per cell load, near or singular cells found by the
//   chunk's bounding box and a careful pass. Same lanes and sums as below; not correctly rounded, and
//   therefore not bitwise equal to the generic kernels (nor AVX2 to AVX-512): a point's value depends on the
//   instruction set as well. Points or cells beyond kSimdRange (1e17 bohr) take the generic kernels.
// - the generic kernels below, plain C++ the compiler vectorises (target_clones): 1/sqrt correctly rounded.
//
// MIXED (max |u - u_double| / (sum_m |q_m|/|r - r_m| + sum_b Z_b/|r - R_b|) <= 1e-8, measured ~5e-9, and
// errors that average out over many points): the same scheme and the same float data as the CUDA backend
// (MixedCells, field_data.cpp: Morton order, chunk origin = centre of the chunk's bounding box, cell
// offsets and error-diffused charges in float), so both give the same answer to that bound. The point's
// offset from the origin is carried as a float pair hi + lo (a single float would shift the point by up
// to 2^-24 |r - origin| for the whole chunk: a systematic error of ~3e-8 that does not average out); 1/r
// correctly rounded in float (generic) or refined from the hardware seed with its correction summed apart
// (SIMD, as the GPU does); runs of kRun float terms per lane added into doubles.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cpu_parallel.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"
#include "backend/field_backend.hpp"
#include "backend/field_factory.hpp"
#include "direct/field_cpu_simd.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 16;
constexpr int64_t kChunk = kFieldChunk;
constexpr double kEps2 = kSingularRadius2;
// Padding cells sit here with zero charge, as in MIXED: far from any sensible point, and d2 stays finite in
// float (the SIMD kernels' Newton step would turn an infinite d2 into inf * 0).
constexpr double kFarD = kMixedFar;
constexpr float kFarF = kMixedFar;
constexpr int kRun = kFieldMixedRun;
// Cache blocking of eval (many points): points per tile, chunks per block (8 x 1024 cells: 256 KB in
// DOUBLE, less in the others; an L2 cache holds it).
constexpr int64_t kTile = 16;
constexpr int64_t kBlockChunks = 8;

template <class T>
T lane_sum(const T *acc) {
    // Pairwise, fixed order.
    T s[kLanes / 2];
    for (int l = 0; l < kLanes / 2; ++l) s[l] = acc[l] + acc[l + kLanes / 2];
    for (int w = kLanes / 4; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) s[l] += s[l + w];
    return s[0];
}

// MIXED's d^2 from a = hi - hi (exact) and b = lo - lo per axis as a (a + 2b) summed onto b2 (field_mixed_b2), as the
// SIMD kernels' mixed_d2 (why: there).
inline float mixed_d2(float ax, float ay, float az, float bx, float by, float bz, float b2) {
    return az * (az + 2 * bz) + (ay * (ay + 2 * by) + (ax * (ax + 2 * bx) + b2));
}

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// The singular-cell select (d2 < eps2 ? self : 1/sqrt(d2)) is a conditional division: with trapping math
// only AVX-512 (masked division) vectorises it, the AVX2 and SSE clones stay scalar. Not trapping changes
// no value (IEEE non-stop mode), only lets the compiler compute 1/sqrt on every lane and blend.
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

QMMM_CLONES double chunk_double(const double *__restrict x, const double *__restrict y,
                                const double *__restrict z, const double *__restrict q, double px,
                                double py, double pz, double self) {
    double acc[kLanes] = {};
    for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const double dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const double d2 = dx * dx + dy * dy + dz * dz;
            const double inv = d2 < kEps2 ? self : 1.0 / std::sqrt(d2);
            acc[l] += q[i + l] * inv;
        }
    }
    return lane_sum(acc);
}

QMMM_CLONES float chunk_single(const float *__restrict x, const float *__restrict y,
                               const float *__restrict z, const float *__restrict q, float px, float py,
                               float pz, float self) {
    float acc[kLanes] = {};
    const float eps2 = static_cast<float>(kEps2);
    for (int64_t i = 0; i < kChunk; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) {
            const float dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const float d2 = dx * dx + dy * dy + dz * dz;
            // C sqrtf: std::sqrt(float) from <cmath> would not be inlined under the optimize pragma above.
            const float inv = d2 < eps2 ? self : 1.0f / sqrtf(d2);
            acc[l] += q[i + l] * inv;
        }
    }
    return lane_sum(acc);
}

// Float pair terms from offsets to the chunk's double origin (point offset = h + l); double accumulation.
// *dmin: the smallest d2 seen (the caller redoes the chunk with chunk_mixed_near when a cell is near).
QMMM_CLONES double chunk_mixed(const float *__restrict x, const float *__restrict y,
                               const float *__restrict z, const float *__restrict q, const float *__restrict xl,
                               const float *__restrict yl, const float *__restrict zl, float hx, float hy,
                               float hz, float lx, float ly, float lz, float b2, float self, float *dmin) {
    double acc[kLanes] = {};
    float dm[kLanes];
    for (int l = 0; l < kLanes; ++l) dm[l] = std::numeric_limits<float>::max();
    const float eps2 = static_cast<float>(kEps2);
    for (int64_t i = 0; i < kChunk; i += kLanes * kRun) {
        float run[kLanes] = {};
        for (int r = 0; r < kRun; ++r) {
            const int64_t b = i + r * kLanes;
            for (int l = 0; l < kLanes; ++l) {
                const float d2 = mixed_d2(hx - x[b + l], hy - y[b + l], hz - z[b + l], lx - xl[b + l],
                                          ly - yl[b + l], lz - zl[b + l], b2);
                dm[l] = d2 < dm[l] ? d2 : dm[l];
                const float inv = d2 < eps2 ? self : 1.0f / sqrtf(d2);
                run[l] += q[b + l] * inv;
            }
        }
        for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<double>(run[l]);
    }
    float m = dm[0];
    for (int l = 1; l < kLanes; ++l) m = dm[l] < m ? dm[l] : m;
    *dmin = m;
    return lane_sum(acc);
}

#pragma GCC pop_options

// MIXED, a point within kNearRadius of a cell of the chunk: the chunk again, those cells' terms in double
// from the double copy (xd.. qd, absolute; p the point) with the singular rule; the others as chunk_mixed.
// Rare (a few chunks per point), so plain scalar code.
double chunk_mixed_near(const float *x, const float *y, const float *z, const float *q, const float *xl,
                        const float *yl, const float *zl, const double *xd, const double *yd, const double *zd,
                        const double *qd, const float *h, const float *lo, float b2, const double *p, double self) {
    double acc[kLanes] = {}, near = 0;
    for (int64_t i = 0; i < kChunk; i += kLanes * kRun) {
        float run[kLanes] = {};
        for (int r = 0; r < kRun; ++r) {
            const int64_t b = i + r * kLanes;
            for (int l = 0; l < kLanes; ++l) {
                const int64_t m = b + l;
                const float d2 = mixed_d2(h[0] - x[m], h[1] - y[m], h[2] - z[m], lo[0] - xl[m], lo[1] - yl[m],
                                          lo[2] - zl[m], b2);
                if (d2 < kNearRadius2) {
                    const double ex = p[0] - xd[m], ey = p[1] - yd[m], ez = p[2] - zd[m];
                    const double e2 = ex * ex + ey * ey + ez * ez;
                    near += qd[m] * (e2 < kEps2 ? self : 1.0 / std::sqrt(e2));
                } else {
                    run[l] += q[m] * (1.0f / std::sqrt(d2));
                }
            }
        }
        for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<double>(run[l]);
    }
    return lane_sum(acc) + near;
}


template <class T>
using AlignedVec = std::vector<T, AlignedAllocator<T>>;

class FieldCpu final : public FieldBackend, public FieldGradOwn {
public:
    FieldCpu(const FieldData &d, const qmmm_options &opt)
        : data_(d), precision_(opt.precision), threads_(opt.n_threads), isa_(cpu_isa_choose()), simd_(field_simd_kernels(isa_)) {
        n_chunks_ = (d.n_cells + kChunk - 1) / kChunk;
        const size_t padded = static_cast<size_t>(n_chunks_ * kChunk);
        for (double v : d.cell_xyz) extent_ = std::max(extent_, std::fabs(v));
        in_range_ = extent_ <= kSimdRange;
        if (precision_ == QMMM_PRECISION_DOUBLE) {
            xd_.assign(padded, kFarD), yd_.assign(padded, kFarD), zd_.assign(padded, kFarD);
            qd_.assign(padded, 0.0);
            for (int64_t m = 0; m < d.n_cells; ++m) {
                xd_[m] = d.cell_xyz[3 * m], yd_[m] = d.cell_xyz[3 * m + 1], zd_[m] = d.cell_xyz[3 * m + 2];
                qd_[m] = d.cell_q[m];
            }
        } else if (precision_ == QMMM_PRECISION_MIXED) {
            MixedCells c = field_mixed_cells(d, kChunk, kMixedFar);
            origin_ = std::move(c.origin), lo_mean_ = std::move(c.lo_mean);
            auto take = [](auto &to, auto &from) { to.assign(from.begin(), from.end()), from = {}; };
            take(xf_, c.x), take(yf_, c.y), take(zf_, c.z), take(qf_, c.q);
            take(xl_, c.xl), take(yl_, c.yl), take(zl_, c.zl);
            take(xd_, c.xd), take(yd_, c.yd), take(zd_, c.zd), take(qd_, c.qd);
        } else {  // SINGLE: absolute float coordinates in the caller's order
            xf_.assign(padded, kFarF), yf_.assign(padded, kFarF), zf_.assign(padded, kFarF);
            qf_.assign(padded, 0.0f);
            for (int64_t m = 0; m < d.n_cells; ++m) {
                xf_[m] = static_cast<float>(d.cell_xyz[3 * m]), yf_[m] = static_cast<float>(d.cell_xyz[3 * m + 1]);
                zf_[m] = static_cast<float>(d.cell_xyz[3 * m + 2]), qf_[m] = static_cast<float>(d.cell_q[m]);
            }
            if (simd_) {  // the SIMD kernels take q/2 (field_cpu_simd.hpp)
                qh_.resize(padded);
                for (size_t m = 0; m < padded; ++m) qh_[m] = 0.5f * qf_[m];
            }
        }
        // Each chunk's bounding box, from the cells in the layout's order (MIXED: Morton order), padding
        // included (a point on a padding cell must take the careful pass too, as the reference kernels do).
        box_.resize(6 * static_cast<size_t>(n_chunks_));
        const double far = precision_ == QMMM_PRECISION_SINGLE ? static_cast<double>(kFarF) : kFarD;
        for (int64_t c = 0; c < n_chunks_; ++c) {
            double *b = &box_[6 * c];
            for (int k = 0; k < 3; ++k) b[k] = HUGE_VAL, b[k + 3] = -HUGE_VAL;
            for (int64_t m = c * kChunk; m < (c + 1) * kChunk; ++m) {
                double x[3] = {far, far, far};
                if (precision_ == QMMM_PRECISION_MIXED) x[0] = xd_[m], x[1] = yd_[m], x[2] = zd_[m];
                else if (m < d.n_cells) std::copy(&d.cell_xyz[3 * m], &d.cell_xyz[3 * m + 3], x);
                for (int k = 0; k < 3; ++k) b[k] = std::min(b[k], x[k]), b[k + 3] = std::max(b[k + 3], x[k]);
            }
        }
        // The cells now live in the layouts above.
        data_.cell_xyz.clear(), data_.cell_xyz.shrink_to_fit();
        data_.cell_q.clear(), data_.cell_q.shrink_to_fit();
        if (simd_)
            group_ = precision_ == QMMM_PRECISION_SINGLE  ? simd_->points_single
                     : precision_ == QMMM_PRECISION_MIXED ? simd_->points_mixed
                                                          : simd_->points_double;
    }

    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return precision_; }
    int cpu_isa() const override { return static_cast<int>(simd_ && in_range_ ? isa_ : CpuIsa::Generic); }
    // A point's value depends on the point alone (chunks and kernels per point, threads over points).
    int64_t merge_from() const override { return 1; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = call_threads(threads_, static_cast<double>(n) * static_cast<double>(n_chunks_ * kChunk));
        // The tiles are cut for the threads the call will get (a busy node leaves fewer): tiles of one point for
        // threads that never come stream the cells once a point.
        const int width = parallel_width(nt);
        if (n_chunks_ > 0) {
            if (n >= width) {
                // Tiles of up to kTile points walk the cells in blocks of kBlockChunks chunks, so a block
                // is read from the L2 cache by every point of the tile: point by point, 10^5..10^6 cells
                // (8.6 MB for 268,938 in double) stream from L3 or memory for each point, which is what
                // stops many ranks or threads on one node from scaling. Each point still adds its chunk
                // partials in chunk order, so the value does not change by a bit.
                const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(kTile, n / width));
                const int64_t tiles = (n + tile - 1) / tile;
                parallel_tiles(nt, tiles, [&](int64_t t) { eval_tile(xyz, t * tile, std::min(n, (t + 1) * tile), u); });
            } else {
                // Few points: spread blocks of chunks over threads, then add partials in chunk order.
                std::vector<double> part(static_cast<size_t>(n_chunks_));
                const int64_t blocks = (n_chunks_ + kBlockChunks - 1) / kBlockChunks;
                for (int64_t p = 0; p < n; ++p) {
                    const double *pt = xyz + 3 * p;
                    const bool fast = simd_point(pt);
                    parallel_tiles(nt, blocks, [&](int64_t b) {
                        for (int64_t c = b * kBlockChunks; c < std::min(n_chunks_, (b + 1) * kBlockChunks); ++c)
                            if (fast) partials(c, &pt, 1, &part[c]);
                            else part[c] = chunk(c, pt);
                    });
                    u[p] = sum_partials(part.data());
                }
            }
        } else {
            std::fill(u, u + n, 0.0);
        }
        add_nuclear_term(data_, n, xyz, u, nt);
        simd_clear_upper();
        return QMMM_SUCCESS;
    }

    // MIXED's gradient from its own float pair terms (FieldGradOwn) at the points the SIMD kernels take (the others,
    // beyond kSimdRange, are left to the engine): U with eval's bits (the same chunk partials, added in chunk order,
    // then the heavy cells and nuclei), dU/dr beside it (the kernels' mixed_grad; add_nuclear_grad). Tiles of points
    // as eval's, one point a kernel call.
    bool own_grad(int64_t n, const double *xyz, double *u, double *g, std::vector<char> &out) override {
        if (precision_ != QMMM_PRECISION_MIXED || !simd_ || !simd_->mixed_grad || !in_range_) return false;
        out.assign(static_cast<size_t>(n), 0);
        std::vector<int64_t> take;  // the points taken, in order
        take.reserve(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            if (simd_point(xyz + 3 * i)) take.push_back(i);
            else out[static_cast<size_t>(i)] = 1;
        }
        const int64_t nk = static_cast<int64_t>(take.size());
        const int nt = call_threads(threads_, static_cast<double>(nk) * static_cast<double>(n_chunks_ * kChunk));
        const int64_t tile = std::max<int64_t>(1, std::min<int64_t>(kTile, nk / parallel_width(nt)));
        parallel_tiles(nt, (nk + tile - 1) / tile, [&](int64_t t) {
            const int64_t k0 = t * tile, k1 = std::min(nk, k0 + tile);
            double s[kTile][4] = {};
            for (int64_t c0 = 0; c0 < n_chunks_; c0 += kBlockChunks)
                for (int64_t k = k0; k < k1; ++k)
                    for (int64_t c = c0; c < std::min(n_chunks_, c0 + kBlockChunks); ++c) {
                        double part[4];
                        grad_partials(c, xyz + 3 * take[k], part);
                        for (int q = 0; q < 4; ++q) s[k - k0][q] += part[q];
                    }
            for (int64_t k = k0; k < k1; ++k) {
                const int64_t i = take[k];
                u[i] = s[k - k0][0], std::copy(s[k - k0] + 1, s[k - k0] + 4, g + 3 * i);
            }
        });
        if (nk == n) {
            add_nuclear_grad(data_, n, xyz, u, g, nt);
        } else {
            for (int64_t i : take) add_nuclear_grad(data_, 1, xyz + 3 * i, u + i, g + 3 * i, 1);
        }
        simd_clear_upper();
        return true;
    }

private:
    // MIXED: chunk c's value and gradient partials at p (partials' value for this point).
    void grad_partials(int64_t c, const double *p, double *part) const {
        const size_t b = static_cast<size_t>(c * kChunk);
        const double *o = &origin_[3 * static_cast<size_t>(c)];
        float h[1][3], l[1][3];
        const double pt[1][3] = {{p[0], p[1], p[2]}};
        for (int j = 0; j < 3; ++j) field_mixed_split(p[j] - o[j], h[0][j], l[0][j]);
        const float b2 = field_mixed_b2(&lo_mean_[4 * static_cast<size_t>(c)], l[0]);
        double grad[1][3];
        simd_->mixed_grad({&xf_[b], &yf_[b], &zf_[b], &qf_[b], &xl_[b], &yl_[b], &zl_[b], &xd_[b], &yd_[b], &zd_[b], &qd_[b]},
                          h, l, &b2, pt, data_.cell_self_inv_r, near_box(c, p), part, grad);
        std::copy(grad[0], grad[0] + 3, part + 1);
    }

    // Points [p0, p1) (at most kTile): the SIMD points in groups of group_ (the cell loads are shared), the
    // others alone through the reference kernels. A point's partials are the same in any group.
    void eval_tile(const double *xyz, int64_t p0, int64_t p1, double *u) const {
        double s[kTile] = {};
        float sf[kTile] = {};
        int64_t fast[kTile], slow[kTile];
        int nf = 0, ns = 0;
        for (int64_t i = p0; i < p1; ++i) (simd_point(xyz + 3 * i) ? fast[nf++] : slow[ns++]) = i;
        auto add = [&](int64_t i, double part) {
            if (precision_ == QMMM_PRECISION_SINGLE) sf[i - p0] += static_cast<float>(part);
            else s[i - p0] += part;
        };
        for (int64_t c0 = 0; c0 < n_chunks_; c0 += kBlockChunks) {
            const int64_t c1 = std::min(n_chunks_, c0 + kBlockChunks);
            for (int g = 0; g < nf; g += group_) {
                const int np = std::min(group_, nf - g);
                const double *pts[kSimdMaxPoints];
                for (int k = 0; k < np; ++k) pts[k] = xyz + 3 * fast[g + k];
                for (int64_t c = c0; c < c1; ++c) {
                    double part[kSimdMaxPoints];
                    partials(c, pts, np, part);
                    for (int k = 0; k < np; ++k) add(fast[g + k], part[k]);
                }
            }
            for (int k = 0; k < ns; ++k)
                for (int64_t c = c0; c < c1; ++c) add(slow[k], chunk(c, xyz + 3 * slow[k]));
        }
        for (int64_t i = p0; i < p1; ++i)
            u[i] = precision_ == QMMM_PRECISION_SINGLE ? static_cast<double>(sf[i - p0]) : s[i - p0];
    }

    // The SIMD kernels' preconditions (field_cpu_simd.hpp): every d2 stays in the float range.
    bool simd_point(const double *p) const {
        return simd_ && in_range_ && std::fabs(p[0]) <= kSimdRange && std::fabs(p[1]) <= kSimdRange &&
               std::fabs(p[2]) <= kSimdRange;
    }

    // Whether point p may come within the kernels' guard radius (the singular radius; in MIXED the near
    // radius) of a cell of chunk c: its distance to the chunk's box, with a margin for the float rounding of
    // coordinates (SINGLE: 2^-24 |x| per coordinate) and of d2 (MIXED).
    bool near_box(int64_t c, const double *p) const {
        const double *b = &box_[6 * static_cast<size_t>(c)];
        const double r = (precision_ == QMMM_PRECISION_MIXED ? 0.5 : kSingularRadius) +
                         1e-6 * (1 + extent_ + std::max({std::fabs(p[0]), std::fabs(p[1]), std::fabs(p[2])}));
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            const double out = std::max({b[k] - p[k], 0.0, p[k] - b[k + 3]});
            d2 += out * out;
        }
        return d2 < r * r;
    }

    // Partials of chunk c for np <= kSimdMaxPoints points, SIMD kernels; in SINGLE float values carried in
    // doubles exactly. The kernels check for near cells only where the chunk's box says one may be.
    void partials(int64_t c, const double *const *pts, int np, double *part) const {
        const size_t b = static_cast<size_t>(c * kChunk);
        const double self = data_.cell_self_inv_r;
        bool guard = false;
        for (int k = 0; k < np; ++k) guard = guard || near_box(c, pts[k]);
        if (precision_ == QMMM_PRECISION_DOUBLE) {
            double p[kSimdMaxPoints][3];
            for (int k = 0; k < np; ++k) std::copy(pts[k], pts[k] + 3, p[k]);
            simd_->dbl({&xd_[b], &yd_[b], &zd_[b], &qd_[b]}, p, np, self, guard, part);
        } else if (precision_ == QMMM_PRECISION_SINGLE) {
            float p[kSimdMaxPoints][3], out[kSimdMaxPoints];
            for (int k = 0; k < np; ++k)
                for (int j = 0; j < 3; ++j) p[k][j] = static_cast<float>(pts[k][j]);
            simd_->single({&xf_[b], &yf_[b], &zf_[b], &qh_[b]}, p, np, static_cast<float>(self), guard, out);
            for (int k = 0; k < np; ++k) part[k] = out[k];
        } else {
            const double *o = &origin_[3 * static_cast<size_t>(c)];
            float h[kSimdMaxPoints][3], l[kSimdMaxPoints][3], b2[kSimdMaxPoints];
            double p[kSimdMaxPoints][3];
            for (int k = 0; k < np; ++k) {
                for (int j = 0; j < 3; ++j) p[k][j] = pts[k][j], field_mixed_split(pts[k][j] - o[j], h[k][j], l[k][j]);
                b2[k] = field_mixed_b2(&lo_mean_[4 * static_cast<size_t>(c)], l[k]);
            }
            simd_->mixed({&xf_[b], &yf_[b], &zf_[b], &qf_[b], &xl_[b], &yl_[b], &zl_[b], &xd_[b], &yd_[b], &zd_[b],
                          &qd_[b]},
                         h, l, b2, p, np, self, guard, part);
        }
    }

    // Partial of chunk c, reference kernels; in SINGLE the float value is carried in a double exactly.
    double chunk(int64_t c, const double *p) const {
        const size_t b = static_cast<size_t>(c * kChunk);
        const double self = data_.cell_self_inv_r;
        switch (precision_) {
            case QMMM_PRECISION_DOUBLE:
                return chunk_double(&xd_[b], &yd_[b], &zd_[b], &qd_[b], p[0], p[1], p[2], self);
            case QMMM_PRECISION_SINGLE:
                return chunk_single(&xf_[b], &yf_[b], &zf_[b], &qf_[b], static_cast<float>(p[0]),
                                    static_cast<float>(p[1]), static_cast<float>(p[2]),
                                    static_cast<float>(self));
            default: {
                const double *o = &origin_[3 * static_cast<size_t>(c)];
                float h[3], l[3];
                for (int k = 0; k < 3; ++k) field_mixed_split(p[k] - o[k], h[k], l[k]);
                const float b2 = field_mixed_b2(&lo_mean_[4 * static_cast<size_t>(c)], l);
                float dmin = 0;
                const double part = chunk_mixed(&xf_[b], &yf_[b], &zf_[b], &qf_[b], &xl_[b], &yl_[b], &zl_[b], h[0], h[1], h[2], l[0], l[1],
                                                l[2], b2, static_cast<float>(self), &dmin);
                if (!(dmin >= kNearRadius2))  // near a cell (or NaN: a point beyond float range)
                    return chunk_mixed_near(&xf_[b], &yf_[b], &zf_[b], &qf_[b], &xl_[b], &yl_[b], &zl_[b], &xd_[b], &yd_[b], &zd_[b], &qd_[b], h, l,
                                            b2, p, self);
                return part;
            }
        }
    }
    double sum_partials(const double *part) const {
        if (precision_ == QMMM_PRECISION_SINGLE) {
            float s = 0.0f;
            for (int64_t c = 0; c < n_chunks_; ++c) s += static_cast<float>(part[c]);
            return s;
        }
        double s = 0.0;
        for (int64_t c = 0; c < n_chunks_; ++c) s += part[c];
        return s;
    }

    FieldData data_;
    int precision_, threads_;
    CpuIsa isa_;
    const FieldSimdKernels *simd_;  // nullptr: the reference kernels only (QMMM_CPU_ISA=generic, or no AVX2)
    int group_ = 1;                 // points per SIMD call
    bool in_range_ = true;          // every cell within kSimdRange of the origin
    double extent_ = 0;             // largest |coordinate| of a cell (bohr)
    std::vector<double> box_;       // per chunk: lowest x y z, highest x y z of its cells
    int64_t n_chunks_ = 0;
    AlignedVec<double> xd_, yd_, zd_, qd_;
    AlignedVec<float> xf_, yf_, zf_, qf_, xl_, yl_, zl_;  // xl_..: MIXED offsets' low parts
    AlignedVec<float> qh_;                                 // SINGLE, SIMD kernels: q / 2
    std::vector<double> origin_, lo_mean_;  // MIXED: per chunk (MixedCells)
};

}  // namespace

std::unique_ptr<FieldBackend> make_field_cpu(const FieldData &d, const qmmm_options &opt) {
    return std::make_unique<FieldCpu>(d, opt);
}

}  // namespace qmmm
