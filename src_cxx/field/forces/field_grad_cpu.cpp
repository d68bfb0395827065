// field_grad_cpu.cpp -- the gradient dU/dr at points on the CPU, and the CPU kernels object of the forces.
//
// Per point a fixed order: the plain sites in chunks of kFieldChunk, each chunk in kLanes lanes by position (lane
// sums in T, folded in lane order into the point's double sums), then the screened charges in chunks of kFieldChunk
// (the far ones in lanes so, then the near ones in index order), each chunk's terms added as one. Threads take tiles
// of points, or in a call of few points (tile, chunk) pairs whose terms are added in chunk order afterwards, so a
// point's bits depend on neither the thread count nor the other points.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu_parallel.hpp"
#include "cpu_threads.hpp"
#include "forces/field_forces.hpp"
#include "forces/field_forces_avx512.hpp"
#include "forces/field_forces_cpu.hpp"
#include "forces/field_forces_shared.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;
constexpr int64_t kPointTile = 16;
// A call of fewer tiles of points than kFewTiles a thread shares its work by (tile, chunk), keeping each chunk's
// terms, at most kFewPointsBytes of them (beyond either, the tiles of points alone share the work). 22 points on the
// development VM's two threads (two tiles, of 16 and 6 points; 10^5 cells, DOUBLE): 1,352 us by tiles, 752 by chunks
// (forces_bench, the runs before and after this form).
constexpr int64_t kFewTiles = 4;
constexpr size_t kFewPointsBytes = size_t(16) << 20;
static_assert(kPointTile == avx512_forces::kRowPoints, "the row layout takes a tile of points in its lanes");
// The row layout is taken where rows average at least this many sites: a row costs four operations and the singular
// test per point beside its pairs.
constexpr int64_t kMinRow = 8;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
// As in field_charges.cpp: non-trapping math lets the compiler compute 1/sqrt on every lane and select.
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

// sqrt as the builtin: std::sqrt(float) is a <cmath> wrapper that GCC does not inline into functions compiled under
// other optimize options (a call per pair, and no vectorisation).
__attribute__((always_inline)) inline double root(double x) { return __builtin_sqrt(x); }
__attribute__((always_inline)) inline float root(float x) { return __builtin_sqrtf(x); }

// out[0..3] += the U and dU/dr of sites [b, e) at p. Within the singular radius a site gives on_value for 1/d and no
// gradient: self_inv_r for a density cell (the cube's field vanishes at its centre), NaN for another site (reported).
// The caller splits its ranges where the density cells end, so that no lane needs a site's index (float lanes beside
// 64-bit indices kept the float loop from vectorising).
template <class T, int P>
__attribute__((always_inline)) inline void plain_body(int64_t b, int64_t e, const T *__restrict x, const T *__restrict y,
                                                      const T *__restrict z, const T *__restrict c, T on_value,
                                                      const T *__restrict pt, double *__restrict out) {
    T au[P][kLanes] = {}, ax[P][kLanes] = {}, ay[P][kLanes] = {}, az[P][kLanes] = {};
    // P points share each site's loads; every point keeps its own lanes, so its bits are those of P = 1.
    auto pair = [&](int64_t k, int l) __attribute__((always_inline)) {
        const T xk = x[k], yk = y[k], zk = z[k], ck = c[k];
        for (int j = 0; j < P; ++j) {
            const T dx = pt[3 * j] - xk, dy = pt[3 * j + 1] - yk, dz = pt[3 * j + 2] - zk;
            const T d2 = dx * dx + dy * dy + dz * dz;
            const bool on = d2 < T(kSingularRadius2);
            const T inv = T(1) / root(on ? T(1) : d2);
            au[j][l] += ck * (on ? on_value : inv);
            const T g = on ? T(0) : ck * inv * inv * inv;
            ax[j][l] -= g * dx, ay[j][l] -= g * dy, az[j][l] -= g * dz;
        }
    };
    const int64_t full = b + (e - b) / kLanes * kLanes;
    for (int64_t i = b; i < full; i += kLanes)
        for (int l = 0; l < kLanes; ++l) pair(i + l, l);
    for (int64_t i = full; i < e; ++i) pair(i, static_cast<int>(i - full));
    const double un = 1.0 / double(ForceSourcesCpu<T>::kPre);  // the charges came times kPre (exact)
    for (int j = 0; j < P; ++j) {
        double s4[4] = {0, 0, 0, 0};
        for (int l = 0; l < kLanes; ++l) s4[0] += au[j][l], s4[1] += ax[j][l], s4[2] += ay[j][l], s4[3] += az[j][l];
        for (int q = 0; q < 4; ++q) out[4 * j + q] += s4[q] * un;
    }
}

#define QMMM_PLAIN(NAME, T, P)                                                                                      \
    QMMM_CLONES void NAME(int64_t b, int64_t e, const T *x, const T *y, const T *z, const T *c, T on_value,         \
                          const T *pt, double *out) {                                                              \
        plain_body<T, P>(b, e, x, y, z, c, on_value, pt, out);                                                     \
    }
QMMM_PLAIN(plain_double1, double, 1)
QMMM_PLAIN(plain_double2, double, 2)
QMMM_PLAIN(plain_float1, float, 1)
QMMM_PLAIN(plain_float4, float, 4)
#undef QMMM_PLAIN

// The far screened charges among [b, e) at p (beyond their cut-off, where the screened forms are 1/d to the last bit)
// into lanes[0..3][l] (U, dU/dr; lane l takes charges b + l, b + l + kLanes, ...), and near[k - b] = 1 for each near
// one (0 else), which adds nothing here.
template <class T>
__attribute__((always_inline)) inline void screened_far_body(int64_t b, int64_t e, const T *__restrict x,
                                                             const T *__restrict y, const T *__restrict z,
                                                             const T *__restrict c, const T *__restrict cut2, T px,
                                                             T py, T pz, T *__restrict lanes, T *__restrict near) {
    T au[kLanes] = {}, ax[kLanes] = {}, ay[kLanes] = {}, az[kLanes] = {};
    auto pair = [&](int64_t k, int l) __attribute__((always_inline)) {
        const T dx = px - x[k], dy = py - y[k], dz = pz - z[k];
        const T d2 = dx * dx + dy * dy + dz * dz;
        const bool nr = d2 < cut2[k];
        near[k - b] = nr ? T(1) : T(0);
        const T inv = T(1) / root(nr ? T(1) : d2);
        const T t = nr ? T(0) : c[k] * inv, g = t * inv * inv;
        au[l] += t, ax[l] -= g * dx, ay[l] -= g * dy, az[l] -= g * dz;
    };
    const int64_t full = b + (e - b) / kLanes * kLanes;
    for (int64_t i = b; i < full; i += kLanes)
        for (int l = 0; l < kLanes; ++l) pair(i + l, l);
    for (int64_t i = full; i < e; ++i) pair(i, static_cast<int>(i - full));
    for (int l = 0; l < kLanes; ++l)
        lanes[l] = au[l], lanes[kLanes + l] = ax[l], lanes[2 * kLanes + l] = ay[l], lanes[3 * kLanes + l] = az[l];
}

#define QMMM_SCREENED_FAR(NAME, T)                                                                                  \
    QMMM_CLONES void NAME(int64_t b, int64_t e, const T *x, const T *y, const T *z, const T *c, const T *cut2, T px, \
                          T py, T pz, T *lanes, T *near) {                                                          \
        screened_far_body<T>(b, e, x, y, z, c, cut2, px, py, pz, lanes, near);                                     \
    }
QMMM_SCREENED_FAR(screened_far_double, double)
QMMM_SCREENED_FAR(screened_far_float, float)
#undef QMMM_SCREENED_FAR
inline void screened_far(int64_t b, int64_t e, const double *x, const double *y, const double *z, const double *c,
                         const double *cut2, double px, double py, double pz, double *lanes, double *near) {
    screened_far_double(b, e, x, y, z, c, cut2, px, py, pz, lanes, near);
}
inline void screened_far(int64_t b, int64_t e, const float *x, const float *y, const float *z, const float *c,
                         const float *cut2, float px, float py, float pz, float *lanes, float *near) {
    screened_far_float(b, e, x, y, z, c, cut2, px, py, pz, lanes, near);
}

static_assert(ForceSourcesCpu<float>::kPre == avx512_forces::V<float>::kPre &&
                  ForceSourcesCpu<double>::kPre == avx512_forces::V<double>::kPre,
              "the charges come as the AVX-512 pair term takes them");

// Points per pass: float's lanes fit four points' accumulators in the vector registers, double's two.
template <class T>
constexpr int kPass = sizeof(T) == 4 ? 4 : 2;

// sign_lim: the AVX-512 loop's singular test for the range (ForceSourcesCpu::sign_lim).
inline void plain_run(int np, int64_t b, int64_t e, const double *x, const double *y, const double *z, const double *c,
                      double on_value, const double *pt, double *out, double sign_lim) {
    if (forces_use_avx512())
        (np == 1 ? avx512_forces::grad_plain<double, 1> : avx512_forces::grad_plain<double, 2>)(b, e, x, y, z, c,
                                                                                              on_value, pt, out,
                                                                                              sign_lim);
    else
        (np == 1 ? plain_double1 : plain_double2)(b, e, x, y, z, c, on_value, pt, out);
}
inline void plain_run(int np, int64_t b, int64_t e, const float *x, const float *y, const float *z, const float *c,
                      float on_value, const float *pt, double *out, float sign_lim) {
    if (forces_use_avx512())
        (np == 1 ? avx512_forces::grad_plain<float, 1> : avx512_forces::grad_plain<float, 4>)(b, e, x, y, z, c,
                                                                                            on_value, pt, out,
                                                                                            sign_lim);
    else
        (np == 1 ? plain_float1 : plain_float4)(b, e, x, y, z, c, on_value, pt, out);
}

// Sites [b, e) of one chunk (b a multiple of kFieldChunk) for np points (1 or kPass<T>): the density cells among them
// (below n_self), then the others.
template <class T>
void plain(const ForceSourcesCpu<T> &s, int np, int64_t b, int64_t e, const T *pt, double *out) {
    const int64_t cut = std::min(std::max(s.n_self, b), e);
    const size_t ci = 2 * static_cast<size_t>(b / kFieldChunk);
    const T lim_cells = ci < s.sign_lim.size() ? s.sign_lim[ci] : T(0);
    const T lim_other = ci < s.sign_lim.size() ? s.sign_lim[ci + 1] : T(0);
    if (cut > b) plain_run(np, b, cut, s.x.data(), s.y.data(), s.z.data(), s.c.data(), s.self_inv_r, pt, out, lim_cells);
    if (e > cut)
        plain_run(np, cut, e, s.x.data(), s.y.data(), s.z.data(), s.c.data(), std::numeric_limits<T>::quiet_NaN(), pt,
                  out, lim_other);
}

#pragma GCC pop_options

// The screened charges [b, e) (one chunk) at p added to out: the far ones in lanes (screened_far; the lane sums in T,
// added in lane order), then the near ones with the screened forms in index order (their sum in T, added after).
template <class T>
void screened_chunk(const ForceSourcesCpu<T> &s, int64_t b, int64_t e, T px, T py, T pz, double *out) {
    T lanes[4 * kLanes], near[kFieldChunk];
    screened_far(b, e, s.sx.data(), s.sy.data(), s.sz.data(), s.sc.data(), s.cut2.data(), px, py, pz, lanes, near);
    for (int q = 0; q < 4; ++q) {
        double sum = 0;
        for (int l = 0; l < kLanes; ++l) sum += lanes[q * kLanes + l];
        out[q] += sum;
    }
    T v = 0, gx = 0, gy = 0, gz = 0;
    for (int64_t k0 = b; k0 < e; k0 += kLanes) {  // a block's flags at once: most blocks have no near charge
        const int64_t k1 = std::min(e, k0 + kLanes);
        T any = 0;
        for (int64_t k = k0; k < k1; ++k) any += near[k - b];
        if (any == T(0)) continue;
        for (int64_t m = k0; m < k1; ++m) {
            if (near[m - b] == T(0)) continue;
            const T dx = px - s.sx[m], dy = py - s.sy[m], dz = pz - s.sz[m];
            const T d2 = dx * dx + dy * dy + dz * dz;
            const T gv = screened_inv_r_xyz<T>(s.kind, dx, dy, dz, s.sa[m], s.sb[m]);
            const T h = d2 > T(0) ? screened_grad_h<T>(s.kind, d2, s.sa[m], s.sb[m]) : T(0);
            const T cm = s.sc[m], ch = cm * h;
            v += cm * gv, gx += ch * dx, gy += ch * dy, gz += ch * dz;
        }
    }
    out[0] += v, out[1] += gx, out[2] += gy, out[3] += gz;
}

// Chunk c of the sources (the plain sites' chunks of kFieldChunk, then the screened charges') for the tile's points
// [p0, p1) (p: their offsets in T, kPointTile rows, the rows past p1 copies of the first): t[i - p0] = its terms. A
// point's sums add its chunks' t in chunk order, one addition a chunk, however the call is cut.
template <class T>
void chunk_terms(const ForceSourcesCpu<T> &s, int64_t c, int64_t p0, int64_t p1, const T (*p)[3], double (*t)[4]) {
    for (int64_t i = p0; i < p1; ++i)
        for (int q = 0; q < 4; ++q) t[i - p0][q] = 0;
    const int64_t plain_chunks = (s.n_plain + kFieldChunk - 1) / kFieldChunk;
    if (c >= plain_chunks) {
        const int64_t b = (c - plain_chunks) * kFieldChunk, e = std::min(s.n_screened, b + kFieldChunk);
        for (int64_t i = p0; i < p1; ++i) screened_chunk(s, b, e, p[i - p0][0], p[i - p0][1], p[i - p0][2], t[i - p0]);
        return;
    }
    const int64_t b = c * kFieldChunk, e = std::min(s.n_plain, b + kFieldChunk);
    if (s.rows.axis >= 0) {  // built only where the AVX-512 loops run
        // The chunk's rows; a point whose row sums say a site may be within the singular radius takes the chunk from
        // the plain loop instead (its bits then are that loop's, whatever shares its tile).
        double part[kPointTile][4] = {};
        const ForceRow<T> *r = s.rows.rows.data();
        const int a = s.rows.axis;
        const uint32_t redo = avx512_forces::grad_rows<T>(
            r + s.rows.group_rows[c], r + s.rows.group_rows[c + 1], a,
            a == 0 ? s.x.data() : a == 1 ? s.y.data() : s.z.data(), s.c.data(), &p[0][0], &part[0][0]);
        for (int64_t i = p0; i < p1; ++i) {
            if (redo >> (i - p0) & 1) plain(s, 1, b, e, p[i - p0], t[i - p0]);
            else
                for (int q = 0; q < 4; ++q) t[i - p0][q] = part[i - p0][q];
        }
        return;
    }
    int64_t i = p0;
    for (; i + kPass<T> <= p1; i += kPass<T>) plain(s, kPass<T>, b, e, p[i - p0], t[i - p0]);
    for (; i < p1; ++i) plain(s, 1, b, e, p[i - p0], t[i - p0]);
}

}  // namespace

template <class T>
bool force_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, double *u, double *g) {
    const double pairs = static_cast<double>(n) * static_cast<double>(s.n_plain + 8 * s.n_screened);
    const int nt = call_threads(s.n_threads, pairs);
    const int64_t tiles = (n + kPointTile - 1) / kPointTile;
    const int64_t chunks = (s.n_plain + kFieldChunk - 1) / kFieldChunk + (s.n_screened + kFieldChunk - 1) / kFieldChunk;
    auto points = [&](int64_t t, T (*p)[3]) {  // tile t's offsets; the rows past the last point copy the first
        const int64_t p0 = t * kPointTile, p1 = std::min(n, p0 + kPointTile);
        for (int64_t i = p0; i < p0 + kPointTile; ++i)
            for (int k = 0; k < 3; ++k) p[i - p0][k] = static_cast<T>(xyz[3 * (i < p1 ? i : p0) + k] - s.origin[k]);
    };
    // One flag for the call, written only by a tile with a non-finite output; parallel_tiles' end orders it.
    std::atomic<bool> bad{false};
    auto put = [&](int64_t t, const double (*acc)[4]) {
        const int64_t p0 = t * kPointTile, p1 = std::min(n, p0 + kPointTile);
        bool ok = true;
        for (int64_t i = p0; i < p1; ++i) {
            const double *a = acc[i - p0];
            u[i] = a[0], g[3 * i] = a[1], g[3 * i + 1] = a[2], g[3 * i + 2] = a[3];
            ok &= std::isfinite(a[0]) && std::isfinite(a[1]) && std::isfinite(a[2]) && std::isfinite(a[3]);
        }
        if (!ok) bad.store(true, std::memory_order_relaxed);
    };
    const size_t per = static_cast<size_t>(kPointTile) * 4;  // a tile's terms of one chunk
    if (nt > 1 && chunks > 1 && tiles < kFewTiles * parallel_width(nt) &&
        static_cast<size_t>(tiles * chunks) * per * sizeof(double) <= kFewPointsBytes) {
        // Few points (a walker's electrons): the threads take (tile, chunk) pairs, each chunk's terms kept apart and
        // added in chunk order afterwards, the same additions as below; the tiles alone would leave threads idle or
        // unevenly loaded (22 points: a tile of 16 and one of 6). A thread's buffer grows and is kept (no allocation
        // a call once it holds the largest call).
        thread_local std::vector<double> keep;
        if (keep.size() < static_cast<size_t>(tiles * chunks) * per) keep.resize(static_cast<size_t>(tiles * chunks) * per);
        double *part = keep.data();
        parallel_tiles(nt, tiles * chunks, [&](int64_t k) {
            const int64_t t = k / chunks, p0 = t * kPointTile;
            T p[kPointTile][3];
            points(t, p);
            chunk_terms(s, k % chunks, p0, std::min(n, p0 + kPointTile), p,
                        reinterpret_cast<double(*)[4]>(part + static_cast<size_t>(k) * per));
        });
        for (int64_t t = 0; t < tiles; ++t) {
            double acc[kPointTile][4] = {};
            for (int64_t c = 0; c < chunks; ++c) {
                const double *q = part + static_cast<size_t>(t * chunks + c) * per;
                for (int i = 0; i < kPointTile; ++i)
                    for (int j = 0; j < 4; ++j) acc[i][j] += q[4 * i + j];
            }
            put(t, acc);
        }
        return !bad.load(std::memory_order_relaxed);
    }
    parallel_tiles(nt, tiles, [&](int64_t t) {
        const int64_t p0 = t * kPointTile, p1 = std::min(n, p0 + kPointTile);
        double acc[kPointTile][4] = {}, part[kPointTile][4];
        T p[kPointTile][3];
        points(t, p);
        for (int64_t c = 0; c < chunks; ++c) {
            chunk_terms(s, c, p0, p1, p, part);
            for (int64_t i = p0; i < p1; ++i)
                for (int j = 0; j < 4; ++j) acc[i - p0][j] += part[i - p0][j];
        }
        put(t, acc);
    });
    return !bad.load(std::memory_order_relaxed);
}

template bool force_grad_cpu<double>(const ForceSourcesCpu<double> &, int64_t, const double *, double *, double *);
template bool force_grad_cpu<float>(const ForceSourcesCpu<float> &, int64_t, const double *, double *, double *);

namespace {

// The CPU kernels: the sources in T; the accumulator's sums in the kernels' order (double), added to in each call's
// tiles (force_sites_cpu).
template <class T>
class ForceCpu final : public ForceKernels {
public:
    explicit ForceCpu(const ForceSources &src) : index_(src.site_index) {
        ForceSourcesCpu<T> &s = s_;
        s.n_plain = src.n_plain, s.n_self = src.n_self, s.n_screened = src.n_screened, s.kind = src.kind;
        s.n_threads = src.n_threads;
        // SINGLE: a point that float puts on a cell it is not on in double must not take the cell's self term (23.8
        // hartree for 5e7 at 1e-8 bohr): NaN there, and the engine recomputes the point in double.
        s.self_inv_r = std::is_same<T, float>::value ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(src.self_inv_r);
        if (std::is_same<T, float>::value && (src.n_plain || src.n_screened)) {
            // The centre of the sites' box, in whole bohr: offsets round by the field's size, not its place.
            double lo[3], hi[3];
            for (int k = 0; k < 3; ++k) lo[k] = INFINITY, hi[k] = -INFINITY;
            auto grow = [&](double a, double b2, double c2) {
                const double v[3] = {a, b2, c2};
                for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], v[k]), hi[k] = std::max(hi[k], v[k]);
            };
            for (int64_t m = 0; m < src.n_plain; ++m) grow(src.x[m], src.y[m], src.z[m]);
            for (int64_t m = 0; m < src.n_screened; ++m) grow(src.sx[m], src.sy[m], src.sz[m]);
            for (int k = 0; k < 3; ++k) s.origin[k] = std::round(0.5 * (lo[k] + hi[k]));
        }
        auto put = [](std::vector<T> &to, const std::vector<double> &from, double o) {
            to.resize(from.size());
            for (size_t i = 0; i < from.size(); ++i) to[i] = static_cast<T>(from[i] - o);
        };
        put(s.x, src.x, s.origin[0]), put(s.y, src.y, s.origin[1]), put(s.z, src.z, s.origin[2]), put(s.c, src.c, 0);
        put(s.sx, src.sx, s.origin[0]), put(s.sy, src.sy, s.origin[1]), put(s.sz, src.sz, s.origin[2]);
        put(s.sc, src.sc, 0), put(s.sa, src.sa, 0), put(s.sb, src.sb, 0);
        for (T &q : s.c) q *= ForceSourcesCpu<T>::kPre;
        s.cut2.resize(static_cast<size_t>(src.n_screened));
        for (int64_t m = 0; m < src.n_screened; ++m)
            s.cut2[m] = static_cast<T>(charges_cut2(src.kind, src.sa[m], src.sb[m]));
        if (forces_use_avx512()) {  // the compiler's loops take no rows and keep no singular test of their own
            s.rows = force_rows<T>(s.x.data(), s.y.data(), s.z.data(), src.c.data(), s.n_plain, kFieldChunk, kMinRow);
            const int64_t chunks = (s.n_plain + kFieldChunk - 1) / kFieldChunk;
            s.sign_lim.resize(2 * static_cast<size_t>(chunks));
            for (int64_t k = 0; k < chunks; ++k) {
                const int64_t b = k * kFieldChunk, e = std::min(s.n_plain, b + kFieldChunk);
                const int64_t cut = std::min(std::max(s.n_self, b), e);
                s.sign_lim[2 * k] = avx512_forces::grad_sign_limit(s.c.data(), b, cut);
                s.sign_lim[2 * k + 1] = avx512_forces::grad_sign_limit(s.c.data(), cut, e);
            }
        }
    }
    void grad_start(int64_t n, const double *xyz, double *u, double *grad) override {
        ok_ = force_grad_cpu(s_, n, xyz, u, grad);
    }
    void grad_finish(bool *bad) override { *bad = !ok_; }
    bool grad_rows() const override { return s_.rows.axis >= 0; }
    void sites(int64_t n, const double *xyz, const double *w, double *phi, double *efield, bool accumulate,
               double weight, bool *bad) override {
        const size_t np = static_cast<size_t>(s_.n_plain), ns = static_cast<size_t>(s_.n_screened);
        const int64_t m = static_cast<int64_t>(index_.size());
        if (accumulate) {  // into the spare copy of the sums, which becomes the sums when every value is finite
            if (acc_[0].size() != 4 * static_cast<size_t>(m)) accum_reset();
            acc_[1].resize(acc_[0].size());
            SiteAccum a{{}, {}, weight};
            for (int q = 0; q < 4; ++q) a.in[q] = &acc_[0][q * m], a.out[q] = &acc_[1][q * m];
            *bad = !force_sites_cpu(s_, n, xyz, w, nullptr, nullptr, nullptr, nullptr, &a);
            if (!*bad) acc_[0].swap(acc_[1]);
            return;
        }
        if (ns == 0) {  // the caller's order is the plain sites' own: no copy
            *bad = !force_sites_cpu(s_, n, xyz, w, phi, efield, nullptr, nullptr);
            return;
        }
        pp_.resize(np), pe_.resize(3 * np), sp_.resize(ns), se_.resize(3 * ns);
        *bad = !force_sites_cpu(s_, n, xyz, w, pp_.data(), pe_.data(), sp_.data(), se_.data());
        if (*bad) return;
        for (int64_t k = 0; k < m; ++k) {
            const int64_t j = index_[k];
            const double *v = j >= 0 ? &pp_[j] : &sp_[-1 - j];
            const double *e = j >= 0 ? &pe_[3 * j] : &se_[3 * (-1 - j)];
            phi[k] = v[0];
            for (int c = 0; c < 3; ++c) efield[3 * k + c] = e[c];
        }
    }
    void accum_reset() override { acc_[0].assign(4 * index_.size(), 0.0); }
    bool accum_add_values(const double *phi, const double *efield, double weight) override {
        const int64_t m = static_cast<int64_t>(index_.size());
        if (acc_[0].size() != 4 * static_cast<size_t>(m)) accum_reset();
        for (int64_t k = 0; k < m; ++k) {
            const int64_t j = at(k);
            acc_[0][j] = add_weighted(acc_[0][j], weight, phi[k]);
            for (int c = 0; c < 3; ++c) {
                double &a = acc_[0][(c + 1) * m + j];
                a = add_weighted(a, weight, efield[3 * k + c]);
            }
        }
        return true;
    }
    void accum_read(double *phi, double *efield) override {
        const int64_t m = static_cast<int64_t>(index_.size());
        if (acc_[0].size() != 4 * static_cast<size_t>(m)) accum_reset();
        for (int64_t k = 0; k < m; ++k) {
            const int64_t j = at(k);
            phi[k] = acc_[0][j];
            for (int c = 0; c < 3; ++c) efield[3 * k + c] = acc_[0][(c + 1) * m + j];
        }
    }
    // Plain sites only (the engine refuses screened ones): the caller's order is the plain sites' own. egrad is never
    // NULL here: the CPU stages an accumulating call's gradient through accum_stage_grad, which writes the sums.
    void sites_grad(int64_t n, const double *xyz, const double *w, double *egrad, bool *bad) override {
        *bad = !force_sites_grad_cpu(s_, n, xyz, w, egrad);
    }
    void accum_grad_reset() override { acc_g_[0].assign(6 * index_.size(), 0.0), acc_g_[1].resize(6 * index_.size()); }
    // The call's sums (running sums + weight x values) go into the spare copy as the tiles finish; the commit swaps
    // it in, so a call that fails later (its potential or field) leaves the sums as they were.
    void accum_stage_grad(int64_t n, const double *xyz, const double *w, double weight, bool *bad) override {
        if (acc_g_[0].size() != 6 * index_.size()) accum_grad_reset();
        *bad = !force_sites_grad_cpu(s_, n, xyz, w, acc_g_[1].data(), acc_g_[0].data(), weight);
        staged_ = !*bad;
    }
    void accum_commit_grad(double weight, const double *egrad) override {
        if (acc_g_[0].size() != 6 * index_.size()) accum_grad_reset();
        if (!egrad) {  // the staged call
            if (staged_) acc_g_[0].swap(acc_g_[1]);
            staged_ = false;
            return;
        }
        staged_ = false;
        for (size_t k = 0; k < acc_g_[0].size(); ++k) acc_g_[0][k] = add_weighted(acc_g_[0][k], weight, egrad[k]);
    }
    void accum_read_grad(double *egrad) override {
        if (acc_g_[0].size() != 6 * index_.size()) accum_grad_reset();
        std::copy(acc_g_[0].begin(), acc_g_[0].end(), egrad);
    }

private:
    // Caller's site k in the kernels' order (the plain sites, then the screened ones).
    int64_t at(int64_t k) const {
        const int64_t j = index_[k];
        return j >= 0 ? j : s_.n_plain - 1 - j;
    }
    ForceSourcesCpu<T> s_;
    std::vector<int64_t> index_;
    bool ok_ = true;
    std::vector<double> pp_, pe_, sp_, se_;
    // The gradient's running sums (acc_g_[0]) and the spare copy a staged call writes (acc_g_[1]).
    std::vector<double> acc_g_[2];
    bool staged_ = false;
    // The accumulator: acc_[0] the running sums of phi, Ex, Ey, Ez (m each, in the kernels' order), acc_[1] the spare
    // copy a call writes (kept between calls: no allocation per call).
    std::vector<double> acc_[2];
};

}  // namespace

std::unique_ptr<ForceKernels> make_force_kernels_cpu(const ForceSources &s) {
    if (s.precision == QMMM_PRECISION_SINGLE) return std::make_unique<ForceCpu<float>>(s);
    return std::make_unique<ForceCpu<double>>(s);
}

}  // namespace qmmm
