// dcs_cpu.cpp -- the CPU DCS kernel (as VMD's CPU version: terms that do not change along a row are reused).
//
// For one lattice row (fixed j, k) the per-atom terms dy^2 + dz^2 do not change along x, so they are
// computed once per row into a packed array (x_a, dy^2+dz^2, q_a); the inner loop then costs one
// subtract, one multiply-add, one sqrt and one divide per pair. Lanes are kLanes consecutive x points
// (not atoms), so each point's sum runs over the atoms in their given order: the value of a point does
// not depend on the thread count, and no reduction reassociates.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "dcs_backend.hpp"

namespace qmmm {
namespace {

constexpr int kLanes = 8;
#define QMMM_DCS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

template <class T, bool kMixed>
inline __attribute__((always_inline)) void row_body(int64_t n_atoms, const T *__restrict xa,
                                                    const T *__restrict dyz2, const T *__restrict qa,
                                                    int64_t nx, T hx, double *__restrict out) {
    for (int64_t i0 = 0; i0 < nx; i0 += kLanes) {
        T px[kLanes];
        for (int l = 0; l < kLanes; ++l) px[l] = static_cast<T>(i0 + l) * hx;
        double total[kLanes] = {};
        T acc[kLanes] = {};
        for (int64_t a = 0; a < n_atoms; ++a) {
            for (int l = 0; l < kLanes; ++l) {
                const T dx = px[l] - xa[a];
                acc[l] += qa[a] / std::sqrt(dx * dx + dyz2[a]);
            }
            if (kMixed && (a + 1) % kDcsMixedBlock == 0)
                for (int l = 0; l < kLanes; ++l) total[l] += acc[l], acc[l] = 0;
        }
        const int64_t m = std::min<int64_t>(kLanes, nx - i0);
        for (int l = 0; l < m; ++l) out[i0 + l] = kMixed ? total[l] + acc[l] : static_cast<double>(acc[l]);
    }
}

QMMM_DCS_CLONES void row_double(int64_t n, const double *xa, const double *d, const double *q, int64_t nx,
                                double hx, double *out) {
    row_body<double, false>(n, xa, d, q, nx, hx, out);
}
QMMM_DCS_CLONES void row_single(int64_t n, const float *xa, const float *d, const float *q, int64_t nx, float hx,
                                double *out) {
    row_body<float, false>(n, xa, d, q, nx, hx, out);
}
QMMM_DCS_CLONES void row_mixed(int64_t n, const float *xa, const float *d, const float *q, int64_t nx, float hx,
                               double *out) {
    row_body<float, true>(n, xa, d, q, nx, hx, out);
}

template <class T>
void planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) {
    const int64_t nx = p.n[0], ny = p.n[1], na = p.n_atoms, rows = ny * nk;
    // Atom coordinates in T once, shared by all threads.
    std::vector<T> ax(na), ay(na), az(na), aq(na);
    for (int64_t a = 0; a < na; ++a)
        ax[a] = static_cast<T>(p.x[a]), ay[a] = static_cast<T>(p.y[a]), az[a] = static_cast<T>(p.z[a]),
        aq[a] = static_cast<T>(p.q[a]);
    const T hx = static_cast<T>(p.h[0]), hy = static_cast<T>(p.h[1]), hz = static_cast<T>(p.h[2]);
    const int nt = p.n_threads > 0 ? p.n_threads : qmmm::default_threads();
#pragma omp parallel num_threads(nt)
    {
        std::vector<T> dyz2(na);
#pragma omp for schedule(dynamic, 1)
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t j = r % ny, k = k0 + r / ny;
            const T py = static_cast<T>(j) * hy, pz = static_cast<T>(k) * hz;
            for (int64_t a = 0; a < na; ++a) {
                const T dy = py - ay[a], dz = pz - az[a];
                dyz2[a] = dy * dy + dz * dz;
            }
            double *o = out + r * nx;
            if constexpr (sizeof(T) == 8) row_double(na, ax.data(), dyz2.data(), aq.data(), nx, hx, o);
            else if (p.precision == QMMM_PRECISION_MIXED) row_mixed(na, ax.data(), dyz2.data(), aq.data(), nx, hx, o);
            else row_single(na, ax.data(), dyz2.data(), aq.data(), nx, hx, o);
        }
    }
}

}  // namespace

void dcs_cpu_planes(const DcsProblem &p, int64_t k0, int64_t nk, double *out) {
    if (p.precision == QMMM_PRECISION_DOUBLE) planes<double>(p, k0, nk, out);
    else planes<float>(p, k0, nk, out);
    simd_clear_upper();
}

void dcs_copy_piece(const void *src, bool is_float, int64_t nxp, int64_t nyp, int64_t nx, int64_t ny, int64_t m,
                    double *out) {
    // Many threads: one thread's memory bandwidth would leave the GPU idle while a piece is unpacked.
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < m * ny; ++r) {
        const int64_t k = r / ny, j = r % ny;
        const size_t s = (static_cast<size_t>(k) * nyp + j) * nxp;
        double *dst = out + r * nx;
        if (is_float) {
            const float *f = static_cast<const float *>(src) + s;
            for (int64_t i = 0; i < nx; ++i) dst[i] = f[i];
        } else {
            const double *d = static_cast<const double *>(src) + s;
            for (int64_t i = 0; i < nx; ++i) dst[i] = d[i];
        }
    }
}

}  // namespace qmmm
