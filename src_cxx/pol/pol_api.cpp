// pol_api.cpp -- the C API of the pol family: polarizable sites from arrays or a potential file, their permanent
// field and the induced-dipole solve (qmmm_accel_pol.h).
#include <cmath>
#include <memory>
#include <string>

#include "error.hpp"
#include "handle_registry.hpp"
#include "pol_pot.hpp"
#include "pol_solver.hpp"
#include "qmmm_accel_pol.h"

struct qmmm_pol_s {
    qmmm::PolSystem sys;
};

namespace {

using qmmm::Error;

qmmm::HandleRegistry<qmmm_pol_s> g_pols;

qmmm_pol_s *live(qmmm_pol p) {
    qmmm_pol_s *h = g_pols.get(p);
    if (!h) throw Error(QMMM_ERR_BAD_HANDLE, std::string("p is ") + (p ? "not a live qmmm_pol (destroyed?)" : "NULL"));
    return h;
}

qmmm_pol_options options_or_default(const qmmm_pol_options *opt) {
    qmmm_pol_options o;
    qmmm_pol_options_default(&o);
    if (opt) o = *opt;
    return o;
}

}  // namespace

extern "C" {

QMMM_API int qmmm_pol_options_default(qmmm_pol_options *opt) {
    return qmmm::api_guard("qmmm_pol_options_default", [&]() -> int {
        if (!opt) throw Error(QMMM_ERR_NULL_ARG, "opt is NULL");
        *opt = qmmm_pol_options{};
        opt->max_iter = 200;
        opt->tolerance = 1e-8;
        opt->damping_induced = 2.1304;
        opt->damping_multipole = 2.1304;
        opt->backend = QMMM_BACKEND_AUTO;
        opt->device = -1;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_create(qmmm_pol *p, int64_t n_sites, const double *xyz, const double *charge,
                             const double *dipole, int32_t alpha_components, const double *alpha, int32_t excl_width,
                             const int64_t *excl, const qmmm_pol_options *opt) {
    return qmmm::api_guard("qmmm_pol_create", [&]() -> int {
        if (!p) throw Error(QMMM_ERR_NULL_ARG, "p (the handle to fill) is NULL");
        *p = nullptr;
        auto h = std::make_unique<qmmm_pol_s>();
        qmmm::build_pol_system(h->sys, n_sites, xyz, charge, dipole, alpha_components, alpha, excl_width, excl,
                               options_or_default(opt));
        *p = g_pols.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_create_from_pot(qmmm_pol *p, const char *path, const qmmm_pol_options *opt) {
    return qmmm::api_guard("qmmm_pol_create_from_pot", [&]() -> int {
        if (!p) throw Error(QMMM_ERR_NULL_ARG, "p (the handle to fill) is NULL");
        *p = nullptr;
        if (!path) throw Error(QMMM_ERR_NULL_ARG, "path is NULL");
        const qmmm_pol_options o = options_or_default(opt);
        qmmm::check_pol_options(o);  // before reading a large file
        const qmmm::PotSites f = qmmm::read_pot(path);
        auto h = std::make_unique<qmmm_pol_s>();
        try {
            // Indices in messages about the file's sites count from 1, as the file does.
            qmmm::IndexBase base(1);
            qmmm::build_pol_system(h->sys, f.n, f.xyz.data(), f.charge.data(), f.dipole.data(), 6, f.alpha.data(),
                                   f.excl_width, f.excl_width > 0 ? f.excl.data() : nullptr, o);
        } catch (const Error &e) {
            throw Error(e.status, std::string(path) + ": " + e.what());
        }
        *p = g_pols.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_sizes(qmmm_pol p, int64_t *n_sites, int64_t *n_polarizable) {
    return qmmm::api_guard("qmmm_pol_sizes", [&]() -> int {
        const qmmm_pol_s *h = live(p);
        if (n_sites) *n_sites = h->sys.n;
        if (n_polarizable) *n_polarizable = static_cast<int64_t>(h->sys.pol_site.size());
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_sites(qmmm_pol p, double *xyz, double *charge, double *dipole, double *alpha) {
    return qmmm::api_guard("qmmm_pol_sites", [&]() -> int {
        const qmmm::PolSystem &s = live(p)->sys;
        if (xyz) std::copy(s.xyz.begin(), s.xyz.end(), xyz);
        if (charge) std::copy(s.charge.begin(), s.charge.end(), charge);
        if (dipole) std::copy(s.dipole.begin(), s.dipole.end(), dipole);
        if (alpha) std::copy(s.alpha.begin(), s.alpha.end(), alpha);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_static_field(qmmm_pol p, double *field) {
    return qmmm::api_guard("qmmm_pol_static_field", [&]() -> int {
        const qmmm::PolSystem &s = live(p)->sys;
        if (!field) throw Error(QMMM_ERR_NULL_ARG, "field is NULL");
        std::copy(s.e_mm.begin(), s.e_mm.end(), field);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_set_tolerance(qmmm_pol p, double tolerance) {
    return qmmm::api_guard("qmmm_pol_set_tolerance", [&]() -> int {
        qmmm_pol_s *h = live(p);
        if (!std::isfinite(tolerance)) throw Error(QMMM_ERR_NONFINITE, qmmm::strfmt("tolerance is %g", tolerance));
        if (tolerance < qmmm::kPolTolMin || tolerance > qmmm::kPolTolMax)
            throw Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("tolerance = %g (%g .. %g)", tolerance, qmmm::kPolTolMin,
                                                           qmmm::kPolTolMax));
        h->sys.opt.tolerance = tolerance;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_solve(qmmm_pol p, const double *e_ext, double *mu, qmmm_pol_stats *stats) {
    return qmmm::api_guard("qmmm_pol_solve", [&]() -> int {
        const qmmm::PolSystem &s = live(p)->sys;
        if (!mu) throw Error(QMMM_ERR_NULL_ARG, "mu is NULL");
        qmmm_pol_stats st{};
        try {
            qmmm::solve_pol(s, e_ext, mu, st);
        } catch (const Error &e) {
            if (stats && e.status == QMMM_ERR_NOT_CONVERGED) *stats = st;
            throw;
        }
        if (stats) *stats = st;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_pol_destroy(qmmm_pol p) {
    return qmmm::api_guard("qmmm_pol_destroy", [&]() -> int {
        if (!g_pols.remove(p))
            throw Error(QMMM_ERR_BAD_HANDLE,
                        std::string("p is ") + (p ? "not a live qmmm_pol (destroyed twice?)" : "NULL"));
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
