// field_split.cpp -- how the range-split field (field_split.hpp) is set up, the same for the CPU and the CUDA
// backend: split_build runs the steps of field_split_build.hpp in order (parameters, cell list, f-table, grid) and
// adds MIXED's measured rounding; and what both backends share at evaluation (the direct data, the points' order).
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <new>
#include <random>
#include <vector>

#include "cpu_parallel.hpp"
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

void split_build(SplitModel &m, const FieldData &d, const qmmm_options &o, SplitEngine &engine, double alpha_in) {
    using namespace split;
    const auto t0 = Clock::now();
    const double tol = o.tolerance;  // check_split_options has bounded it
    const double x_cut = erfc_inverse(kSplitTruncShare * tol);  // a R_c
    const double alpha = alpha_in > 0                ? alpha_in
                         : d.point_charges ? charges_alpha(d, o.region, tol, x_cut)
                                           : choose_alpha(tol);
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

FieldData split_model_data(const SplitModel &m, const FieldData &nuclei, double cell_volume, bool point_charges) {
    FieldData d;
    const int64_t n = static_cast<int64_t>(m.x.size()) - kSplitCellPadding;
    for (int64_t i = 0; i < n; ++i) d.cell_xyz.insert(d.cell_xyz.end(), {m.x[i], m.y[i], m.z[i]}), d.cell_q.push_back(m.q[i]);
    d.n_cells = n > 0 ? n : 0;
    d.n_nuclei = nuclei.n_nuclei, d.nuc_xyz = nuclei.nuc_xyz, d.nuc_z = nuclei.nuc_z;
    d.cell_volume = cell_volume, d.point_charges = point_charges, d.cell_self_inv_r = m.self;
    return d;
}

namespace {

// The max normwise error per component of the cells' gradient (eval on view) against the direct double sum at
// kSplitGradChecks random points of the region (a fifth of them on its faces), relative to sum |q|/d^2 + sum Z/d^2.
// A cell within the singular radius adds nothing to either.
double grad_check(const SplitGradView &view, double self, const FieldData &d, const SplitGradEval &eval, int threads) {
    const SplitGridView &g = view.v.grid;
    std::mt19937_64 rng(20261205);
    const int64_t n = kSplitGradChecks;
    std::vector<double> p(3 * n), u(n), gs(3 * n), err(n, 0.0);
    for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) p[3 * i + k] = std::uniform_real_distribution<double>(g.lo[k], g.hi[k])(rng);
        if (i % 5 == 0) p[3 * i + i / 5 % 3] = i / 15 % 2 ? g.hi[i / 5 % 3] : g.lo[i / 5 % 3];
    }
    eval(view, self, n, p.data(), u.data(), gs.data());
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) {
        const double *r = &p[3 * i];
        double ex[3] = {0, 0, 0}, scale = 0;
        for (int64_t m = 0; m < d.n_cells; ++m) {
            const double dx = r[0] - d.cell_xyz[3 * m], dy = r[1] - d.cell_xyz[3 * m + 1], dz = r[2] - d.cell_xyz[3 * m + 2];
            const double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < kSingularRadius2) continue;
            const double inv = 1 / std::sqrt(d2), c = -((d.cell_q[m] * inv) * inv) * inv;
            ex[0] += c * dx, ex[1] += c * dy, ex[2] += c * dz, scale += std::fabs(d.cell_q[m]) / d2;
        }
        for (int64_t b = 0; b < d.n_nuclei; ++b) {
            const double *q = &d.nuc_xyz[3 * b];
            scale += std::fabs(d.nuc_z[b]) / ((r[0] - q[0]) * (r[0] - q[0]) + (r[1] - q[1]) * (r[1] - q[1]) + (r[2] - q[2]) * (r[2] - q[2]));
        }
        double e = 0;
        for (int k = 0; k < 3; ++k) e = std::max(e, std::fabs(gs[3 * i + k] - ex[k]));
        err[i] = scale > 0 ? e / scale : e;
    }
    double worst = 0;  // NaN stays (the estimate then does not fit)
    for (double e : err) worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);
    return worst;
}

}  // namespace

void split_grad_prepare(SplitGradModel &gm, const SplitModel &value, const FieldData &d, const qmmm_options &opt,
                        SplitEngine &engine, const SplitGradEval &eval, int threads) {
    using namespace split;
    const auto t0 = Clock::now();
    const double tol = value.info.tolerance;
    gm.info = SplitGradInfo{};
    gm.self = value.self;
    const SplitModel *m = &value;
    double prev_tol = 0, prev_err = 0;  // the last try's grid tolerance and error: the measured rate between tries
    for (int attempt = 0; attempt < kSplitGradTries; ++attempt) {
        // The near terms' gradient over the cells that the grid's L leaves out, those within its R_c: no term
        // missing, none counted twice (L = C - S holds each cell beyond R_c whole).
        const double rg = m->info.r_cut;
        // f''s error e adds at most 2 e R_g^3 to a term relative to |q|/d^2: 1e-3 of the tolerance, or rounding.
        const double fp0 = std::fabs(static_cast<double>(fp_exact(m->info.alpha, 0)));
        if (!build_table_grad(gm.fp, gm.view.fp, m->info.alpha, rg, std::max(0.5e-3 * tol / (rg * rg * rg), 1e-15 * fp0)))
            break;
        gm.view.v = m->view();
        gm.view.rg2 = rg * rg;
        gm.info.r_cut = rg;
        gm.info.grid_tolerance = m->info.tolerance;
        gm.info.grid_values = m == &value ? 0 : m->info.grid_values;
        gm.info.sampled_error = grad_check(gm.view, m->build_self, d, eval, threads);
        if (attempt == 0) gm.info.value_grid_error = gm.info.sampled_error;
        gm.info.error_estimate = kSplitGradSafety * gm.info.sampled_error;
        if (gm.info.error_estimate <= tol) {
            gm.info.split = true;
            break;
        }
        if (attempt + 1 == kSplitGradTries || !(gm.info.sampled_error > 0)) break;
        // The derivative's error falls as h^7 and the grid's spacing as the value tolerance^(1/8), so as the value
        // tolerance^(7/8) (0.84 measured on the water dimer), or at the rate measured between the last two tries: the
        // value tolerance that brings it within the tolerance, aiming at kSplitGradAim of it. A miss costs a second
        // grid, finer than the first: the first grids' errors landed at 0.2-2.6x the aim of 0.5 (rates 0.46-1.19 from
        // the value's grid), and on the 21,952-cell lattice at 1e-5 the error was 1.3e-4 at 9.6e-8 and 3.9e-7 at 5.3e-8.
        double rate = 7.0 / 8.0;
        if (attempt > 0) {
            const double r = std::log(gm.info.sampled_error / prev_err) / std::log(m->info.tolerance / prev_tol);
            if (std::isfinite(r)) rate = std::clamp(r, 0.25, 1.5);
        }
        prev_tol = m->info.tolerance, prev_err = gm.info.sampled_error;
        const double want = tol / (kSplitGradSafety * gm.info.sampled_error);
        qmmm_options o = opt;
        o.precision = QMMM_PRECISION_DOUBLE;
        o.tolerance = std::max(kMinTolerance, m->info.tolerance * std::pow(kSplitGradAim * want, 1.0 / rate));
        if (!(o.tolerance < m->info.tolerance)) break;
        try {
            auto own = std::make_unique<SplitModel>();
            split_build(*own, d, o, engine, m->info.alpha);
            gm.own = std::move(own);
            m = gm.own.get();
        } catch (const Error &) {  // the finer grid does not fit (the limit on grid values, the finest spacing)
            break;
        } catch (const std::bad_alloc &) {  // or not in memory: the gradient is then the direct sum
            break;
        }
    }
    if (!gm.info.split) gm.own.reset(), gm.fp.clear();
    gm.info.ready = true;
    gm.info.setup_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
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
    constexpr int64_t kTile = 2048;  // keys a tile of the pool's loop (cpu_parallel.hpp, as the call's own loop)
    parallel_tiles(n >= 4096 ? threads : 1, (n + kTile - 1) / kTile, [&](int64_t t) {
        for (int64_t i = t * kTile; i < std::min(n, (t + 1) * kTile); ++i) {
            uint64_t m = 0;
            for (int k = 0; k < 3; ++k)
                m |= morton_spread(static_cast<uint64_t>(std::clamp((xyz[3 * i + k] - g.lo[k]) * inv, 0.0, 31.0))) << k;
            key[static_cast<size_t>(i)] = m << 32 | static_cast<uint64_t>(i);  // n < 2^32 (the API's batches)
        }
    });
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
