// field_split_cpu.cpp -- the CPU backend of the range-split field (field_split.hpp): interpolation of the
// long-range part, the short-range sum over the cell list in SIMD lanes, the direct CPU backend for points outside
// the region and for building the grid.
//
// Determinism: a point's value is a fixed sequence of operations on the point and the tables (its cell ranges in
// a fixed order, each summed in kLanes lanes by position in the range): independent of the other points, of the
// batch and of the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "cpu_simd.hpp"
#include "error.hpp"
#include "field_split.hpp"

namespace qmmm {

namespace {

constexpr int kLanes = 8;

#define QMMM_SPLIT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

// As field_cpu.cpp: without trapping math the selects below (on the centre / within R_c / beyond) compute every
// lane and blend, which vectorises; no value changes (IEEE non-stop mode).
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

// sum over cells [0, n) of q (1/d - f(d^2)) within R_c, q * self_f0 on a centre (self_f0 = self - f(0)).
QMMM_SPLIT_CLONES double range_sum(const double *__restrict x, const double *__restrict y, const double *__restrict z,
                                   const double *__restrict q, int64_t n, double px, double py, double pz, double rc2,
                                   double self_f0, const double *__restrict c, double inv_ds) {
    constexpr int nc = kSplitTableDegree + 1;
    double acc[kLanes] = {};
    auto term = [&](int64_t m) {
        const double dx = px - x[m], dy = py - y[m], dz = pz - z[m];
        const double d2 = dx * dx + dy * dy + dz * dz;
        const double s = d2 < rc2 ? d2 : 0.0;  // table index stays in range beyond R_c (the term is 0 there)
        const double u = s * inv_ds;
        int k = static_cast<int>(u);
        k = k < kSplitTableSegments - 1 ? k : kSplitTableSegments - 1;
        const double t = u - k;
        const double *ck = c + k * nc;
        double f = ck[nc - 1];
        for (int j = nc - 2; j >= 0; --j) f = f * t + ck[j];
        const double v = d2 < kSingularRadius2 ? self_f0 : (d2 < rc2 ? 1.0 / std::sqrt(d2) - f : 0.0);
        return q[m] * v;
    };
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) acc[l] += term(i + l);
    for (int l = 0; i + l < n; ++l) acc[l] += term(i + l);
    double s4[4];
    for (int l = 0; l < 4; ++l) s4[l] = acc[l] + acc[l + 4];
    return (s4[0] + s4[2]) + (s4[1] + s4[3]);
}

#pragma GCC pop_options

double short_sum(const SplitView &v, const double *p, double self) {
    double s = 0.0;
    const double self_f0 = self - v.f0;
    split_for_ranges(v.cells, p, v.rc2, [&](int64_t b, int64_t e) {
        s += range_sum(v.cells.x + b, v.cells.y + b, v.cells.z + b, v.cells.q + b, e - b, p[0], p[1], p[2], v.rc2, self_f0,
                       v.table.c, v.table.inv_ds);
    });
    return s;
}

class FieldSplitCpu final : public FieldBackend, public SplitStats, private SplitEngine {
public:
    FieldSplitCpu(const FieldData &d, const qmmm_options &opt) : threads_(opt.n_threads) {
        nuclei_.n_nuclei = d.n_nuclei, nuclei_.nuc_xyz = d.nuc_xyz, nuclei_.nuc_z = d.nuc_z;
        qmmm_options od = opt;
        od.method = QMMM_METHOD_DIRECT, od.backend = QMMM_BACKEND_CPU, od.precision = QMMM_PRECISION_DOUBLE;
        od.region = nullptr;
        direct_ = make_field_cpu(split_direct_data(d), od);
        split_build(model_, d, opt, *this);
        view_ = model_.view();
        simd_clear_upper();
    }

    int backend() const override { return QMMM_BACKEND_CPU; }
    int precision() const override { return QMMM_PRECISION_DOUBLE; }

    int eval(int64_t n, const double *xyz, double *u) override {
        const int nt = threads_ > 0 ? threads_ : omp_get_max_threads();
        std::vector<char> out(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 8) num_threads(nt)
        for (int64_t i = 0; i < n; ++i) {
            const double *p = xyz + 3 * i;
            out[i] = !split_inside(view_.grid, p);
            u[i] = out[i] ? 0.0 : split_interp(view_.grid, p) + short_sum(view_, p, model_.self);
        }
        outside(n, xyz, out, u);
        add_nuclear_term(nuclei_, n, xyz, u);
        simd_clear_upper();
        return QMMM_SUCCESS;
    }

    const SplitInfo &split_info() const override { return model_.info; }
    int64_t points() const override { return points_; }
    int64_t points_outside() const override { return outside_; }
    // The tables and the direct backend's cells (4 doubles per cell, chunks of kFieldChunk).
    int64_t bytes() const override {
        const int64_t cells = static_cast<int64_t>(model_.x.size());
        return model_.bytes() + 32 * ((cells + kFieldChunk - 1) / kFieldChunk * kFieldChunk);
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
    void cells_ready(const SplitModel &) override {}
    void short_range(const SplitModel &m, int64_t n, const double *xyz, double self, double *out) override {
        const SplitView v = m.view();
        const int nt = threads_ > 0 ? threads_ : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
        for (int64_t i = 0; i < n; ++i) out[i] = short_sum(v, xyz + 3 * i, self);
    }

    int threads_;
    FieldData nuclei_;
    std::unique_ptr<FieldBackend> direct_;
    SplitModel model_;
    SplitView view_;
    int64_t points_ = 0, outside_ = 0;
};

}  // namespace

std::unique_ptr<FieldBackend> make_field_split_cpu(const FieldData &d, const qmmm_options &opt) {
    return std::make_unique<FieldSplitCpu>(d, opt);
}

}  // namespace qmmm
