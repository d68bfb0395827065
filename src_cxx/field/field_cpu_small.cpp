// field_cpu_small.cpp -- the direct sum for small fields (at most kSmallCells cells, DOUBLE or SINGLE): the call site
// of a legacy QMC code sums 10-1,000 MM charges for 1-100 electrons, where the chunked kernels (field_cpu.cpp) would
// pad every point's sum to 1,024 cells. Here the cells stay unpadded, a point's sum runs in kLanes lanes (vectorised,
// 1/sqrt correctly rounded, the same singular rule as the chunked kernels), nothing is allocated per call, and a call
// runs on the caller's thread unless it is large (call_threads).
#include <algorithm>
#include <cmath>

#include "cpu_pool.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "field_backend.hpp"
#include "field_charges.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

#define QMMM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")  // as in field_cpu.cpp: lets the select below vectorise

template <class T>
QMMM_CLONES T small_sum(int64_t n, const T *__restrict x, const T *__restrict y, const T *__restrict z,
                        const T *__restrict q, T px, T py, T pz, T self) {
    T acc[kLanes] = {};
    const T eps2 = static_cast<T>(kSingularRadius2);
    const int64_t full = n - n % kLanes;
    for (int64_t i = 0; i < full; i += kLanes)
        for (int l = 0; l < kLanes; ++l) {
            const T dx = px - x[i + l], dy = py - y[i + l], dz = pz - z[i + l];
            const T d2 = dx * dx + dy * dy + dz * dz;
            acc[l] += q[i + l] * (d2 < eps2 ? self : T(1) / std::sqrt(d2));
        }
    for (int64_t i = full; i < n; ++i) {
        const T dx = px - x[i], dy = py - y[i], dz = pz - z[i];
        const T d2 = dx * dx + dy * dy + dz * dz;
        acc[i - full] += q[i] * (d2 < eps2 ? self : T(1) / std::sqrt(d2));
    }
    T s = 0;
    for (int l = 0; l < kLanes; ++l) s += acc[l];
    return s;
}

#pragma GCC pop_options

template <class T>
class FieldCpuSmall final : public FieldBackend {
public:
    FieldCpuSmall(const FieldData &d, const qmmm_options &opt)
        : data_(d), n_(d.n_cells), precision_(opt.precision), threads_(opt.n_threads),
          self_(static_cast<T>(d.cell_self_inv_r)) {
        cpu_isa_choose();  // QMMM_CPU_ISA is checked as for every CPU field (the kernels here dispatch by themselves)
        for (int64_t m = 0; m < n_; ++m) {
            x_.push_back(static_cast<T>(d.cell_xyz[3 * m])), y_.push_back(static_cast<T>(d.cell_xyz[3 * m + 1]));
            z_.push_back(static_cast<T>(d.cell_xyz[3 * m + 2])), q_.push_back(static_cast<T>(d.cell_q[m]));
        }
        data_.cell_xyz = {}, data_.cell_q = {};
    }
    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return precision_; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = call_threads(threads_, static_cast<double>(n) * static_cast<double>(n_ + data_.n_nuclei));
        constexpr int64_t kTile = 16;
        parallel_tiles(nt, (n + kTile - 1) / kTile, [&](int64_t t) {
            for (int64_t p = t * kTile; p < std::min(n, (t + 1) * kTile); ++p) u[p] = point(xyz + 3 * p);
        });
        if (data_.n_nuclei) add_nuclear_term(data_, n, xyz, u, nt);
        return QMMM_SUCCESS;
    }

private:
    double point(const double *p) const {
        return static_cast<double>(small_sum<T>(n_, x_.data(), y_.data(), z_.data(), q_.data(), static_cast<T>(p[0]),
                                                static_cast<T>(p[1]), static_cast<T>(p[2]), self_));
    }

    FieldData data_;  // the nuclei
    int64_t n_;
    int precision_, threads_;
    T self_;
    std::vector<T> x_, y_, z_, q_;
};

}  // namespace

std::unique_ptr<FieldBackend> make_field_cpu_small(const FieldData &d, const qmmm_options &opt) {
    if (opt.precision == QMMM_PRECISION_SINGLE) return std::make_unique<FieldCpuSmall<float>>(d, opt);
    return std::make_unique<FieldCpuSmall<double>>(d, opt);
}

}  // namespace qmmm
