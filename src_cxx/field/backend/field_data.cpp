// field_data.cpp -- what the CPU and CUDA backends build from the same host data (field_backend.hpp): the
// nuclear term, the Morton order of the cells, and MIXED precision's cell layout (chunk origins, float
// offsets and error-diffused charges).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cpu_parallel.hpp"
#include "backend/field_backend.hpp"
#include "error.hpp"

namespace qmmm {

namespace {

// The nuclear (and heavy-cell) term of one point: u becomes (u + heavy) - nuclear, NaN on a nucleus. With g, g[0..2]
// gains its gradient (the heavy cells' q (R - r) / d^3, none within the singular radius: the cube's self term; the
// nuclei's -Z (R - r) / d^3), NaN on a nucleus; u's operations are the same either way.
inline double nuclear_point(const FieldData &d, int64_t n_heavy, const double *p, double u, double *g = nullptr) {
    double h = 0.0, hg[3] = {0.0, 0.0, 0.0};
    for (int64_t m = 0; m < n_heavy; ++m) {
        const double dx = p[0] - d.heavy_xyz[3 * m], dy = p[1] - d.heavy_xyz[3 * m + 1], dz = p[2] - d.heavy_xyz[3 * m + 2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        h += d.heavy_q[m] * (d2 < kSingularRadius2 ? d.cell_self_inv_r : 1.0 / std::sqrt(d2));
        if (g && !(d2 < kSingularRadius2)) {
            const double inv = 1.0 / std::sqrt(d2), t = ((d.heavy_q[m] * inv) * inv) * inv;
            hg[0] -= t * dx, hg[1] -= t * dy, hg[2] -= t * dz;
        }
    }
    double s = 0.0;
    bool on = false;
    for (int64_t b = 0; b < d.n_nuclei; ++b) {
        const double dx = p[0] - d.nuc_xyz[3 * b], dy = p[1] - d.nuc_xyz[3 * b + 1], dz = p[2] - d.nuc_xyz[3 * b + 2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        on |= d2 < kSingularRadius2;
        s += d.nuc_z[b] / std::sqrt(d2);
        if (g) {
            const double inv = 1.0 / std::sqrt(d2), t = ((d.nuc_z[b] * inv) * inv) * inv;
            hg[0] += t * dx, hg[1] += t * dy, hg[2] += t * dz;
        }
    }
    if (g)
        for (int k = 0; k < 3; ++k) g[k] = on ? std::numeric_limits<double>::quiet_NaN() : g[k] + hg[k];
    return on ? std::numeric_limits<double>::quiet_NaN() : (u + h) - s;  // the API reports the nucleus
}

// add_nuclear_term and add_nuclear_grad: the points' nuclear_point, g null or not. In parallel from a few thousand
// pairs on: serial, the 20 nuclei of the glycine environment made a CPU split call of 1,024 or 8,192 points on 16 cores
// 19-24 % slower (0.31-0.38 against 0.25-0.32 us a point, alternated runs on the H100's host).
void nuclear_points(const FieldData &d, int64_t n, const double *xyz, double *u, double *g, int threads) {
    const int64_t n_heavy = static_cast<int64_t>(d.heavy_q.size());
    if (d.n_nuclei == 0 && n_heavy == 0) return;
    auto one = [&](int64_t p) { u[p] = nuclear_point(d, n_heavy, xyz + 3 * p, u[p], g ? g + 3 * p : nullptr); };
    // Small calls stay on the caller's thread (waking helpers costs microseconds: more than a legacy code's whole
    // point-charge loop).
    if (threads <= 1 || n * (d.n_nuclei + n_heavy) < 16384) {
        for (int64_t p = 0; p < n; ++p) one(p);
        return;
    }
    constexpr int64_t kTile = 64;
    parallel_tiles(threads, (n + kTile - 1) / kTile, [&](int64_t t) {
        for (int64_t p = t * kTile; p < std::min(n, (t + 1) * kTile); ++p) one(p);
    });
}

}  // namespace

void add_nuclear_term(const FieldData &d, int64_t n, const double *xyz, double *u, int threads) {
    nuclear_points(d, n, xyz, u, nullptr, threads);
}

void add_nuclear_grad(const FieldData &d, int64_t n, const double *xyz, double *u, double *g, int threads) {
    nuclear_points(d, n, xyz, u, g, threads);
}

void field_take_heavy(FieldData &d) {
    const int64_t n = d.n_cells;
    double sum = 0, sum2 = 0;
    for (double q : d.cell_q) sum += std::fabs(q), sum2 += q * q;
    const double limit = sum * sum / kMixedHeavyNeff;
    if (!(sum2 > limit)) return;
    const int64_t k = std::min(n, kMixedMaxHeavy);
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), int64_t{0});
    std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) {
        const double qa = std::fabs(d.cell_q[a]), qb = std::fabs(d.cell_q[b]);
        return qa != qb ? qa > qb : a < b;
    });
    std::vector<char> heavy(static_cast<size_t>(n), 0);
    for (int64_t h = 0; h < k && sum2 > limit; ++h) {
        const int64_t m = idx[h];
        heavy[m] = 1, sum2 -= d.cell_q[m] * d.cell_q[m];
        d.heavy_xyz.insert(d.heavy_xyz.end(), &d.cell_xyz[3 * m], &d.cell_xyz[3 * m] + 3);
        d.heavy_q.push_back(d.cell_q[m]);
    }
    int64_t kept = 0;
    for (int64_t m = 0; m < n; ++m) {
        if (heavy[m]) continue;
        for (int c = 0; c < 3; ++c) d.cell_xyz[3 * kept + c] = d.cell_xyz[3 * m + c];
        d.cell_q[kept++] = d.cell_q[m];
    }
    d.cell_xyz.resize(static_cast<size_t>(3 * kept)), d.cell_q.resize(static_cast<size_t>(kept));
    d.n_cells = kept;
}

std::vector<int64_t> field_morton_order(const FieldData &d, int64_t chunk) {
    std::vector<int64_t> order(static_cast<size_t>(d.n_cells));
    std::iota(order.begin(), order.end(), int64_t{0});
    if (d.n_cells <= chunk) return order;
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = d.cell_xyz[k];
    for (int64_t m = 0; m < d.n_cells; ++m)
        for (int k = 0; k < 3; ++k)
            lo[k] = std::min(lo[k], d.cell_xyz[3 * m + k]), hi[k] = std::max(hi[k], d.cell_xyz[3 * m + k]);
    std::vector<uint64_t> key(static_cast<size_t>(d.n_cells));
    for (int64_t m = 0; m < d.n_cells; ++m) {
        uint64_t code = 0;
        for (int k = 0; k < 3; ++k) {
            const double span = hi[k] - lo[k];
            const double t = span > 0 ? (d.cell_xyz[3 * m + k] - lo[k]) / span : 0.0;
            code |= morton_spread(static_cast<uint64_t>(std::min(t, 1.0) * 2097151.0)) << k;
        }
        key[m] = code;
    }
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return key[a] != key[b] ? key[a] < key[b] : a < b; });
    return order;
}

MixedCells field_mixed_cells(const FieldData &d, int64_t chunk, float far) {
    MixedCells c;
    c.n_chunks = (d.n_cells + chunk - 1) / chunk;
    const size_t padded = static_cast<size_t>(c.n_chunks * chunk);
    c.origin.assign(3 * static_cast<size_t>(c.n_chunks), 0.0);
    c.x.assign(padded, far), c.y.assign(padded, far), c.z.assign(padded, far), c.q.assign(padded, 0.0f);
    c.xl.assign(padded, 0.0f), c.yl.assign(padded, 0.0f), c.zl.assign(padded, 0.0f);
    c.xd.assign(padded, far), c.yd.assign(padded, far), c.zd.assign(padded, far), c.qd.assign(padded, 0.0);
    c.lo_mean.assign(4 * static_cast<size_t>(c.n_chunks), 0.0);
    const std::vector<int64_t> order = field_morton_order(d, chunk);
    auto X = [&](int64_t m, int k) { return d.cell_xyz[3 * order[m] + k]; };
    for (int64_t ch = 0; ch < c.n_chunks; ++ch) {
        const int64_t b = ch * chunk, e = std::min(d.n_cells, b + chunk);
        double *o = &c.origin[3 * ch];
        for (int k = 0; k < 3; ++k) {  // centre of the bounding box: offsets stay as small as the chunk
            double lo = X(b, k), hi = lo;
            for (int64_t m = b; m < e; ++m) lo = std::min(lo, X(m, k)), hi = std::max(hi, X(m, k));
            o[k] = 0.5 * (lo + hi);
        }
        double carry = 0.0;
        for (int64_t m = b; m < e; ++m) {
            c.xd[m] = X(m, 0), c.yd[m] = X(m, 1), c.zd[m] = X(m, 2), c.qd[m] = d.cell_q[order[m]];
            field_mixed_split(c.xd[m] - o[0], c.x[m], c.xl[m]);
            field_mixed_split(c.yd[m] - o[1], c.y[m], c.yl[m]);
            field_mixed_split(c.zd[m] - o[2], c.z[m], c.zl[m]);
            const double want = c.qd[m] + carry;
            c.q[m] = static_cast<float>(want);
            carry = want - static_cast<double>(c.q[m]);
        }
        double *lm = &c.lo_mean[4 * ch];
        for (int64_t m = b; m < e; ++m) {
            const double l[3] = {c.xl[m], c.yl[m], c.zl[m]};
            for (int k = 0; k < 3; ++k) lm[k] += l[k], lm[3] += l[k] * l[k];
        }
        for (int k = 0; k < 4; ++k) lm[k] /= static_cast<double>(e - b);
    }
    return c;
}

// Device-resident calls: only the CUDA direct backend takes them (it overrides this); say what this field is.
int FieldBackend::eval_device(int64_t, const double *, double *, int64_t, const int64_t *, double *, void *) {
    if (backend() == QMMM_BACKEND_CPU)
        throw Error(QMMM_ERR_UNSUPPORTED, "f is a CPU field: points and values in device memory need a CUDA field "
                                          "(with host arrays use qmmm_field_eval or qmmm_field_eval_walkers)");
    throw Error(QMMM_ERR_UNSUPPORTED, "f is a CUDA field of a kind without device-resident calls (SPLIT, screened "
                                      "charges, SINGLE on a local origin, or nuclei only): use qmmm_field_eval or "
                                      "qmmm_field_eval_walkers with host arrays");
}

}  // namespace qmmm
