// field_forces_api.cpp -- the C API of the forces: qmmm_field_eval_grad and its async and summing forms, the field at
// the sites (qmmm_field_site_field) and its gradient (qmmm_field_site_field_grad), the accumulator; argument checks
// and the sources made at create.
#include <cmath>
#include <limits>

#include "all_finite.hpp"
#include "api/field_checks.hpp"
#include "error.hpp"
#include "charges/field_charges_shared.hpp"
#include "forces/field_forces.hpp"

namespace qmmm {

ForceSources force_sources_cells(int64_t n_cells, const double *cell_xyz, const double *cell_q, int64_t n_nuclei,
                                 const double *nuc_xyz, const double *nuc_z, const qmmm_options &o) {
    ForceSources s;
    s.backend = o.backend, s.precision = o.precision, s.device = o.device, s.n_threads = o.n_threads;
    s.n_first = n_cells;
    s.self_inv_r = o.cell_volume > 0 ? kCubeSelfPotential / std::cbrt(o.cell_volume)
                                     : std::numeric_limits<double>::quiet_NaN();
    s.n_self = o.cell_volume > 0 ? n_cells : 0;
    s.n_plain = n_cells + n_nuclei;
    s.x.reserve(s.n_plain), s.y.reserve(s.n_plain), s.z.reserve(s.n_plain), s.c.reserve(s.n_plain);
    for (int64_t m = 0; m < n_cells; ++m) {
        s.x.push_back(cell_xyz[3 * m]), s.y.push_back(cell_xyz[3 * m + 1]), s.z.push_back(cell_xyz[3 * m + 2]);
        s.c.push_back(cell_q[m]);
        s.site_index.push_back(m), s.singular.push_back(o.cell_volume > 0 ? 0 : 1);
    }
    for (int64_t b = 0; b < n_nuclei; ++b) {
        s.x.push_back(nuc_xyz[3 * b]), s.y.push_back(nuc_xyz[3 * b + 1]), s.z.push_back(nuc_xyz[3 * b + 2]);
        s.c.push_back(-nuc_z[b]);
        s.site_index.push_back(n_cells + b), s.singular.push_back(1);
    }
    return s;
}

ForceSources force_sources_charges(int64_t n, const double *x, const double *y, const double *z, int64_t stride,
                                   const double *q, int screening, const double *screen_a, const double *screen_b,
                                   int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z, const qmmm_options &o) {
    ForceSources s;
    s.backend = o.backend, s.precision = o.precision, s.device = o.device, s.n_threads = o.n_threads;
    s.n_first = n, s.charges = true, s.kind = screening;
    s.self_inv_r = std::numeric_limits<double>::quiet_NaN();
    std::vector<int64_t> plain_of;  // the charges that are plain, then the nuclei
    for (int64_t m = 0; m < n; ++m) {
        const double a = screening != QMMM_SCREEN_NONE ? screen_a[m] : 0.0;
        const double b = screening == QMMM_SCREEN_EXP ? screen_b[m] : 0.0;
        const bool screened = screening == QMMM_SCREEN_EXP ? (a != 0 && b != 0)
                              : screening == QMMM_SCREEN_GAUSSIAN ? a != 0 : false;
        const double p[3] = {x[m * stride], y[m * stride], z[m * stride]};
        if (!screened) {
            s.site_index.push_back(static_cast<int64_t>(s.c.size()));
            s.x.push_back(p[0]), s.y.push_back(p[1]), s.z.push_back(p[2]), s.c.push_back(-q[m]);
        } else {
            s.site_index.push_back(-1 - static_cast<int64_t>(s.sc.size()));
            s.sx.push_back(p[0]), s.sy.push_back(p[1]), s.sz.push_back(p[2]), s.sc.push_back(-q[m]);
            s.sa.push_back(screening == QMMM_SCREEN_GAUSSIAN ? 1.0 / a : a), s.sb.push_back(b);
        }
        s.singular.push_back(!screened || (screening == QMMM_SCREEN_EXP && a != 1));
    }
    for (int64_t b = 0; b < n_nuclei; ++b) {
        s.site_index.push_back(static_cast<int64_t>(s.c.size()));
        s.x.push_back(nuc_xyz[3 * b]), s.y.push_back(nuc_xyz[3 * b + 1]), s.z.push_back(nuc_xyz[3 * b + 2]);
        s.c.push_back(-nuc_z[b]);
        s.singular.push_back(1);
    }
    s.n_plain = static_cast<int64_t>(s.c.size()), s.n_screened = static_cast<int64_t>(s.sc.size());
    return s;
}

}  // namespace qmmm

namespace {

using qmmm::Error;
using qmmm::strfmt;

// As the value path (field_api.cpp): the largest coordinate a precision squares without overflow, and the largest
// charge (here: weight) it sums.
double max_coordinate(int precision) { return precision == QMMM_PRECISION_DOUBLE ? 1e150 : 1e18; }
double max_weight(int precision) { return precision == QMMM_PRECISION_DOUBLE ? 1e300 : 1e30; }

// scratch_bytes_each: what the call allocates per point (the summing form's values).
void check_points(const qmmm::ForceEngine &e, int64_t n, const double *xyz, double scratch_bytes_each = 0) {
    qmmm::check_point_count(n, scratch_bytes_each);
    if (n == 0) return;
    if (!xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("xyz is NULL with n_points = %lld", static_cast<long long>(n)));
    const double lim = max_coordinate(e.sources().precision);
    bool ok = true;
    for (int64_t i = 0; i < 3 * n; ++i) ok &= std::fabs(xyz[i]) <= lim;
    if (ok) return;
    for (int64_t i = 0; i < 3 * n; ++i) {
        if (!std::isfinite(xyz[i]))
            throw Error(QMMM_ERR_NONFINITE, strfmt("xyz: element %lld of point %lld is %s", qmmm::ix(i % 3),
                                                   qmmm::ix(i / 3), std::isnan(xyz[i]) ? "NaN" : "Inf"));
        if (std::fabs(xyz[i]) > lim)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("xyz: %c of point %lld is %g bohr, beyond the %g bohr that the "
                                                     "field's precision squares without overflow",
                                                     "xyz"[i % 3], qmmm::ix(i / 3), xyz[i], lim));
    }
}

void check_weights(const qmmm::ForceEngine &e, int64_t n, const double *w) {
    if (n > 0 && !w) throw Error(QMMM_ERR_NULL_ARG, strfmt("w is NULL with n_points = %lld", static_cast<long long>(n)));
    const double lim = max_weight(e.sources().precision);
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(w[i]))
            throw Error(QMMM_ERR_NONFINITE, strfmt("w: weight %lld is %s", qmmm::ix(i), std::isnan(w[i]) ? "NaN" : "Inf"));
        if (std::fabs(w[i]) > lim)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("w: weight %lld is %g, beyond the %g that the field's precision "
                                                     "sums without overflow", qmmm::ix(i), w[i], lim));
    }
}

void not_pending(bool pending) {
    if (pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
}

// Runs fn(engine, pending) on f inside api_guard.
template <class F>
int with_engine(const char *where, qmmm_field f, F &&fn) {
    return qmmm::api_guard(where, [&]() -> int {
        return qmmm::field_forces_call(
            f,
            [](qmmm::ForceEngine &e, bool &pending, void *ctx) -> int {
                return (*static_cast<F *>(ctx))(e, pending);
            },
            &fn);
    });
}

}  // namespace

extern "C" {

QMMM_API int qmmm_field_eval_grad(qmmm_field f, int64_t n_points, const double *xyz, double *u, double *grad) {
    return with_engine("qmmm_field_eval_grad", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        check_points(e, n_points, xyz, u ? 0.0 : sizeof(double));
        if (n_points > 0 && !grad) throw Error(QMMM_ERR_NULL_ARG, "grad is NULL with n_points > 0");
        if (n_points == 0) return QMMM_SUCCESS;
        e.grad(n_points, xyz, u, grad, nullptr);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_grad_async(qmmm_field f, int64_t n_points, const double *xyz, double *u, double *grad) {
    return with_engine("qmmm_field_eval_grad_async", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        if (pending) throw Error(QMMM_ERR_BUSY, "an evaluation is already pending; call qmmm_field_wait");
        check_points(e, n_points, xyz, qmmm::kPointBytes + (u ? 0.0 : sizeof(double)));  // the points kept for wait
        if (n_points > 0 && !grad) throw Error(QMMM_ERR_NULL_ARG, "grad is NULL with n_points > 0");
        if (n_points == 0) return QMMM_SUCCESS;
        e.grad_async(n_points, xyz, u, grad, nullptr);
        pending = true;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_grad_sum(qmmm_field f, int64_t n_points, const double *xyz, double *sum_u,
                                      double *grad) {
    return with_engine("qmmm_field_eval_grad_sum", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        if (!sum_u) throw Error(QMMM_ERR_NULL_ARG, "sum_u is NULL");
        *sum_u = 0;
        check_points(e, n_points, xyz, sizeof(double));
        if (n_points > 0 && !grad) throw Error(QMMM_ERR_NULL_ARG, "grad is NULL with n_points > 0");
        if (n_points == 0) return QMMM_SUCCESS;
        e.grad(n_points, xyz, nullptr, grad, sum_u);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_field(qmmm_field f, int64_t n_points, const double *xyz, const double *w, double *phi,
                                   double *efield) {
    return with_engine("qmmm_field_site_field", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        check_points(e, n_points, xyz);
        check_weights(e, n_points, w);
        if (!phi) throw Error(QMMM_ERR_NULL_ARG, "phi is NULL");
        if (!efield) throw Error(QMMM_ERR_NULL_ARG, "efield is NULL");
        e.sites(n_points, xyz, w, phi, efield);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_accum_reset(qmmm_field f) {
    return with_engine("qmmm_field_site_accum_reset", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        e.accum_reset();
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_accum_add(qmmm_field f, int64_t n_points, const double *xyz, const double *w,
                                       double weight) {
    return with_engine("qmmm_field_site_accum_add", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        check_points(e, n_points, xyz);
        check_weights(e, n_points, w);
        if (!std::isfinite(weight))
            throw Error(QMMM_ERR_NONFINITE, strfmt("weight is %s", std::isnan(weight) ? "NaN" : "Inf"));
        e.accum_add(n_points, xyz, w, weight);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_accum_read(qmmm_field f, double *phi, double *efield, double *weight_sum,
                                        int64_t *n_calls) {
    return with_engine("qmmm_field_site_accum_read", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        if (!phi) throw Error(QMMM_ERR_NULL_ARG, "phi is NULL");
        if (!efield) throw Error(QMMM_ERR_NULL_ARG, "efield is NULL");
        e.accum_read(phi, efield, weight_sum, n_calls);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_field_grad(qmmm_field f, int64_t n_points, const double *xyz, const double *w,
                                        double *egrad) {
    return with_engine("qmmm_field_site_field_grad", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        check_points(e, n_points, xyz);
        check_weights(e, n_points, w);
        if (!egrad) throw Error(QMMM_ERR_NULL_ARG, "egrad is NULL");
        e.sites_grad(n_points, xyz, w, egrad);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_accum_set_grad(qmmm_field f, int on) {
    return with_engine("qmmm_field_site_accum_set_grad", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        e.accum_set_grad(on != 0);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_site_accum_read_grad(qmmm_field f, double *egrad) {
    return with_engine("qmmm_field_site_accum_read_grad", f, [&](qmmm::ForceEngine &e, bool &pending) -> int {
        not_pending(pending);
        if (!egrad) throw Error(QMMM_ERR_NULL_ARG, "egrad is NULL");
        e.accum_read_grad(egrad);
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
