// field_split.cpp -- how the range-split field (field_split.hpp) is set up, the same for the CPU and the CUDA
// backend: split_build runs the steps of field_split_build.hpp in order (parameters, cell list, f-table, grid) and
// adds MIXED's measured rounding; and what both backends share at evaluation (the direct data, the points' order).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include "error.hpp"
#include "split/field_split_build.hpp"

namespace qmmm {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

FieldData split_direct_data(const FieldData &d) {
    FieldData c;
    c.n_cells = d.n_cells, c.cell_xyz = d.cell_xyz, c.cell_q = d.cell_q, c.cell_volume = d.cell_volume;
    c.cell_self_inv_r = std::isfinite(d.cell_self_inv_r) ? d.cell_self_inv_r : 0.0;
    return c;
}

void split_build(SplitModel &m, const FieldData &d, const qmmm_options &o, SplitEngine &engine) {
    using namespace split;
    const auto t0 = Clock::now();
    const double tol = o.tolerance;  // check_split_options has bounded it
    const double x_cut = erfc_inverse(kSplitTruncShare * tol);  // a R_c
    const double alpha = d.point_charges ? charges_alpha(d, o.region, tol, x_cut) : choose_alpha(tol);
    const double rc = x_cut / alpha;
    m.info = SplitInfo{};
    m.info.alpha = alpha, m.info.r_cut = rc, m.info.tolerance = tol;
    m.info.trunc_bound = std::erfc(alpha * rc);
    m.self = d.cell_self_inv_r;
    m.build_self = std::isfinite(m.self) ? m.self : 0.0;
    build_cells(m, d, rc);
    // f's error e adds at most e R_c to a cell's term relative to |q|/d: 1e-3 of the tolerance, or rounding.
    build_table(m, alpha, rc, std::max(1e-3 * tol / rc, 1e-15 * static_cast<double>(f_exact(alpha, 0))));
    build_table_single(m, alpha, rc);
    engine.cells_ready(m);
    SplitSamples samples;
    build_grid(m, d, engine, o.region, tol, choose_spacing(tol), samples);
    m.info.error_estimate = m.info.trunc_bound + std::max(m.info.interp_estimate, m.info.sampled_error);
    if (o.precision == QMMM_PRECISION_MIXED) {
        const int64_t n = static_cast<int64_t>(samples.c.size());
        std::vector<double> s(static_cast<size_t>(n));
        if (engine.short_range_mixed(m, n, samples.xyz.data(), m.build_self, s.data())) {
            double worst = 0;
            for (int64_t i = 0; i < n; ++i) {
                const double *p = &samples.xyz[3 * i];
                worst = std::max(worst, std::fabs(s[i] - samples.s[i]) / scale_bound(d, p, samples.c[i], samples.floor[i]));
            }
            // Kept only within the tolerance (and NaN-safe: a NaN worst keeps double).
            if (m.info.error_estimate + kSplitRoundingSafety * worst <= tol) {
                m.info.single_pairs = true;
                m.info.error_estimate += kSplitRoundingSafety * worst;
            }
        }
    }
    if (m.info.error_estimate > tol)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->tolerance = %g is not reached in opt->region even at the finest grid (spacing %g bohr): "
                           "estimated error %.2e; give a larger tolerance",
                           tol, m.info.spacing / (1 << kSplitMaxLevel), m.info.error_estimate));
    m.info.setup_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
}

SplitView SplitModel::view() const {
    using split::f_exact;
    SplitView v;
    v.cells = cv, v.table = tv, v.grid = gv;
    v.alpha = info.alpha, v.rc2 = info.r_cut * info.r_cut;
    v.f0 = static_cast<double>(f_exact(info.alpha, 0));
    return v;
}

int64_t SplitModel::bytes() const {
    return static_cast<int64_t>(sizeof(int64_t) * start.size() + sizeof(double) * (x.size() * 4 + table.size() + g0.size() + pool.size()) +
                                sizeof(int32_t) * brick.size() + sizeof(SplitBlock) * blocks.size());
}

void split_point_order(const SplitGridView &g, double box, int64_t n, const double *xyz, int threads,
                       std::vector<int64_t> &order) {
    for (int k = 0; k < 3; ++k) box = std::max(box, (g.hi[k] - g.lo[k]) / 32.0);  // 32 boxes a side at most: 15 bits
    const double inv = 1.0 / box;
    std::vector<uint64_t> key(static_cast<size_t>(n)), tmp(static_cast<size_t>(n));
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 4096)
    for (int64_t i = 0; i < n; ++i) {
        uint64_t m = 0;
        for (int k = 0; k < 3; ++k)
            m |= morton_spread(static_cast<uint64_t>(std::clamp((xyz[3 * i + k] - g.lo[k]) * inv, 0.0, 31.0))) << k;
        key[static_cast<size_t>(i)] = m << 32 | static_cast<uint64_t>(i);  // n < 2^32 (the API's batches)
    }
    // LSD radix sort of the 15-bit codes in two passes (8 and 7 bits; stable: ties keep the index order).
    for (int shift = 32; shift < 47; shift += 8) {
        std::array<int64_t, 257> count{};
        for (uint64_t k : key) ++count[((k >> shift) & 0xff) + 1];
        for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
        for (uint64_t k : key) tmp[static_cast<size_t>(count[(k >> shift) & 0xff]++)] = k;
        key.swap(tmp);
    }
    order.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = static_cast<int64_t>(key[static_cast<size_t>(i)] & 0xffffffffULL);
}

}  // namespace qmmm
