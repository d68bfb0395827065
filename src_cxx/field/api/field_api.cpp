// field_api.cpp -- the C API of the embedding field: the handle, its lifetime and calls. The arguments are checked
// by field_checks.cpp, the backend is chosen by backend/field_factory.cpp, the numbers come from the backends.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "all_finite.hpp"
#include "api/field_checks.hpp"
#include "api/field_walkers.hpp"
#include "backend/checked_sum.hpp"
#include "backend/field_backend.hpp"
#include "backend/field_factory.hpp"
#include "charges/field_charges.hpp"
#include "dipoles/field_dipoles.hpp"
#include "error.hpp"
#include "forces/field_forces.hpp"
#include "handle_registry.hpp"
#include "split/field_split.hpp"

struct qmmm_field_s {
    std::unique_ptr<qmmm::FieldBackend> impl;
    qmmm::FieldData nuclei;  // nuclei only, as given: the singular-point check runs on the host for every backend
    int64_t n_cells = 0;     // cells or charges as given (qmmm_field_sizes)
    bool pending = false;
    int64_t pending_n = 0;
    double *pending_u = nullptr;
    std::vector<double> pending_xyz;  // the points of the pending evaluation, for its error messages
    double *pending_sum = nullptr;    // qmmm_field_eval_sum_async: where wait writes the sum
    std::vector<double> scratch;      // the per-point values of a summing evaluation (grows, never shrinks)
    // A point-charge field: the charges on which a point has no finite potential (unscreened, or EXP with a != 1),
    // with the caller's index of each, for the singular-point message.
    bool charges = false;
    std::vector<double> singular_xyz;
    std::vector<int64_t> singular_index;
    // Calls inside f now (eval, eval_sum, their async forms, wait), so that a destroy from another thread meanwhile is
    // QMMM_ERR_BUSY instead of freeing what they use (a destroy that slips in before the count rises stays undefined).
    std::atomic<int> in_use{0};
    // The gradient and the field at the sites (forces/field_forces.hpp): the sources as given, kernels on first use.
    std::unique_ptr<qmmm::ForceEngine> forces;
    // Point dipoles (qmmm_field_set_dipoles): one term shared by the value wrapper around impl and the forces engine.
    std::shared_ptr<qmmm::DipoleTerm> dipoles;
    // A pending qmmm_field_eval_walkers_async that shares one backend call: its sums, made by wait once the values
    // are checked (api/field_walkers.cpp).
    std::function<void()> pending_walkers;
};

namespace {

// A SPLIT field's gradient (split/field_split.hpp), in its backend or the one a wrapper holds; null for DIRECT. The
// wrapper owns it for the field's life; the gradient prepares its tables in it on first use.
qmmm::SplitGradStats *split_grad_of(qmmm::FieldBackend *impl) {
    for (const qmmm::FieldBackend *b = impl; b; b = b->wrapped())
        if (auto *s = dynamic_cast<const qmmm::SplitGradStats *>(b)) return const_cast<qmmm::SplitGradStats *>(s);
    return nullptr;
}

using qmmm::check_array;
using qmmm::check_field_memory;
using qmmm::check_magnitude;
using qmmm::check_options;
using qmmm::check_point_count;
using qmmm::check_points;
using qmmm::check_reach;
using qmmm::Error;
using qmmm::max_charge;
using qmmm::max_coordinate;
using qmmm::strfmt;

qmmm::HandleRegistry<qmmm_field_s> g_fields;

struct InUse {
    qmmm_field_s *h;
    explicit InUse(qmmm_field_s *f) : h(f) { h->in_use.fetch_add(1, std::memory_order_acq_rel); }
    ~InUse() { h->in_use.fetch_sub(1, std::memory_order_acq_rel); }
    InUse(const InUse &) = delete;
    InUse &operator=(const InUse &) = delete;
};

qmmm_field_s *live(qmmm_field f) {
    qmmm_field_s *h = g_fields.get(f);
    if (!h) throw Error(QMMM_ERR_BAD_HANDLE, "f is not a live field handle (NULL or destroyed)");
    return h;
}

// The handle's own copy of the nuclei (check_values names them) and the count of cells or charges as given; the
// backends get theirs, which they may move (a local origin) or hold on the GPU.
void keep_nuclei(qmmm_field_s &h, int64_t n_cells, int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z) {
    h.n_cells = n_cells;
    h.nuclei.n_nuclei = n_nuclei;
    if (n_nuclei) h.nuclei.nuc_xyz.assign(nuc_xyz, nuc_xyz + 3 * n_nuclei), h.nuclei.nuc_z.assign(nuc_z, nuc_z + n_nuclei);
}

// The backends' nuclei: those with Z != 0 (a zero charge adds nothing, and a point on it has the others' value).
// Cells and charges of zero charge are left out where they are copied, for the same reason.
void keep_charged_nuclei(qmmm::FieldData &d, const qmmm::FieldData &given) {
    for (int64_t b = 0; b < given.n_nuclei; ++b)
        if (given.nuc_z[b] != 0) {
            d.nuc_xyz.insert(d.nuc_xyz.end(), &given.nuc_xyz[3 * b], &given.nuc_xyz[3 * b] + 3);
            d.nuc_z.push_back(given.nuc_z[b]);
        }
    d.n_nuclei = static_cast<int64_t>(d.nuc_z.size());
}

bool on_nucleus(const qmmm::FieldData &d, const double *p, int64_t b) {
    if (d.nuc_z[b] == 0) return false;  // no charge, no singularity: the backends never got it
    const double dx = p[0] - d.nuc_xyz[3 * b], dy = p[1] - d.nuc_xyz[3 * b + 1], dz = p[2] - d.nuc_xyz[3 * b + 2];
    return dx * dx + dy * dy + dz * dz < qmmm::kSingularRadius2;
}

// The backends return NaN for a point within the singular radius of a nucleus (they compute the nuclear term
// anyway, so the check costs nothing there) and for a point on a cell centre when cell_volume is unknown; this
// says which, for the first such point.
// A point without a finite value is recomputed on the host in double first, term by term (ForceEngine::grad_host): a
// SINGLE field's point that float's coordinates put on a site (a NaN, as the self-potential is NaN there) gets the
// true value whether or not it is on the site in double, and a screened charge's term that overflowed in the kernels'
// order (q (1 - a e^-x) before / d: 4e119 x 4e202 at 1e27 bohr, a term of 2e295) gets the host's (the factor / d
// first). Only what is still not finite is reported.
void check_values(const qmmm_field_s &h, int64_t n, const double *xyz, double *u) {
    const qmmm::FieldData &d = h.nuclei;
    if (qmmm::all_finite(u, n)) return;
    for (int64_t p = 0; p < n; ++p) {
        if (std::isfinite(u[p])) continue;
        const double *x = xyz + 3 * p;
        if (h.forces->grad_host(x, &u[p], nullptr)) {
            // grad_host gives the sources' term alone: the dipoles' is added again (the same bits as in the call).
            if (h.dipoles) h.dipoles->add(1, x, &u[p], nullptr);
            continue;
        }
        for (int64_t b = 0; b < d.n_nuclei; ++b)
            if (on_nucleus(d, x, b))
                throw Error(QMMM_ERR_SINGULAR,
                            strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of nucleus %lld: a point "
                                   "charge has no finite potential there",
                                   qmmm::ix(p), x[0], x[1], x[2], qmmm::ix(b)));
        if (h.charges) {
            for (size_t m = 0; m < h.singular_index.size(); ++m) {
                const double *c = &h.singular_xyz[3 * m];
                const double dx = x[0] - c[0], dy = x[1] - c[1], dz = x[2] - c[2];
                if (dx * dx + dy * dy + dz * dz < qmmm::kSingularRadius2)
                    throw Error(QMMM_ERR_SINGULAR,
                                strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of charge %lld, which "
                                       "has no finite potential there (unscreened, or EXP screening with a != 1)",
                                       qmmm::ix(p), x[0], x[1], x[2], qmmm::ix(h.singular_index[m])));
            }
            // Valid charges (up to 1e300 in DOUBLE) can still make a term or the sum leave the precision's range
            // (1e299 e at 1e-28 bohr of an EXP-screened charge with a = 1 is 1e325 hartree): say so.
            throw Error(QMMM_ERR_NONFINITE,
                        strfmt("point %lld (%.17g, %.17g, %.17g): the potential is beyond the range of the field's "
                               "precision (a term or the sum of its charges overflows); the point is on no charge and "
                               "no nucleus",
                               qmmm::ix(p), x[0], x[1], x[2]));
        }
        throw Error(QMMM_ERR_SINGULAR,
                    strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of a density cell centre and "
                           "qmmm_options.cell_volume is 0 (unknown); set it to use the uniform-cube self-potential",
                           qmmm::ix(p), x[0], x[1], x[2]));
    }
}

// The precision whose limits the dipoles' arrays take: SINGLE's on a SINGLE field (its dipoles' term is float),
// DOUBLE's otherwise (double on DOUBLE and MIXED).
int dipole_precision(const qmmm_field_s &h) {
    return h.impl->precision() == QMMM_PRECISION_SINGLE ? QMMM_PRECISION_SINGLE : QMMM_PRECISION_DOUBLE;
}

// The handle's buffer for n per-point values (allocated once per size reached, not per call).
double *scratch(qmmm_field_s *h, int64_t n) {
    if (n <= 0) return h->scratch.data();
    if (static_cast<int64_t>(h->scratch.size()) < n) h->scratch.resize(static_cast<size_t>(n));
    return h->scratch.data();
}

qmmm_options resolved_options(const qmmm_options *opt) {
    qmmm_options o;
    qmmm_options_default(&o);
    if (opt) o = *opt;
    check_options(o);
    return o;
}

}  // namespace

extern "C" {

QMMM_API int qmmm_options_default(qmmm_options *opt) {
    return qmmm::api_guard("qmmm_options_default", [&]() -> int {
        if (!opt) throw Error(QMMM_ERR_NULL_ARG, "opt is NULL");
        std::memset(opt, 0, sizeof *opt);
        opt->backend = QMMM_BACKEND_AUTO;
        opt->precision = QMMM_PRECISION_DOUBLE;
        opt->device = -1;
        opt->tolerance = qmmm::kSplitDefaultTolerance;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_create(qmmm_field *f, int64_t n_cells, const double *cell_xyz, const double *cell_q,
                               int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z,
                               const qmmm_options *opt) {
    return qmmm::api_guard("qmmm_field_create", [&]() -> int {
        if (!f) throw Error(QMMM_ERR_NULL_ARG, "f (the handle to fill) is NULL");
        *f = nullptr;
        if (n_cells < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_cells = %lld is negative", static_cast<long long>(n_cells)));
        if (n_nuclei < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_nuclei = %lld is negative", static_cast<long long>(n_nuclei)));
        if (n_cells > 0 && !cell_xyz) throw Error(QMMM_ERR_NULL_ARG, "cell_xyz is NULL with n_cells > 0");
        if (n_cells > 0 && !cell_q) throw Error(QMMM_ERR_NULL_ARG, "cell_q is NULL with n_cells > 0");
        if (n_nuclei > 0 && !nuc_xyz) throw Error(QMMM_ERR_NULL_ARG, "nuc_xyz is NULL with n_nuclei > 0");
        if (n_nuclei > 0 && !nuc_z) throw Error(QMMM_ERR_NULL_ARG, "nuc_z is NULL with n_nuclei > 0");
        const qmmm_options o0 = resolved_options(opt);
        check_field_memory("n_cells", n_cells, n_nuclei, o0.precision, false);
        check_array("cell_xyz", cell_xyz, n_cells, 3);
        check_array("cell_q", cell_q, n_cells, 1);
        check_array("nuc_xyz", nuc_xyz, n_nuclei, 3);
        check_array("nuc_z", nuc_z, n_nuclei, 1);
        check_magnitude("cell_q", cell_q, n_cells, o0.precision);
        check_reach("cell_xyz", cell_xyz, n_cells, 3, o0.precision);
        check_reach("nuc_xyz", nuc_xyz, n_nuclei, 3, o0.precision);
        check_magnitude("nuc_z", nuc_z, n_nuclei, o0.precision);
        if (n_cells == 0 && n_nuclei == 0)
            throw Error(QMMM_ERR_INVALID_ARG, "the field has no cells and no nuclei (n_cells = n_nuclei = 0): create "
                                              "it after the environment is read");

        auto h = std::make_unique<qmmm_field_s>();
        keep_nuclei(*h, n_cells, n_nuclei, nuc_xyz, nuc_z);
        qmmm::FieldData d;
        d.cell_volume = o0.cell_volume;
        for (int64_t m = 0; m < n_cells; ++m)
            if (cell_q[m] != 0)
                d.cell_xyz.insert(d.cell_xyz.end(), cell_xyz + 3 * m, cell_xyz + 3 * m + 3), d.cell_q.push_back(cell_q[m]);
        d.n_cells = static_cast<int64_t>(d.cell_q.size());
        keep_charged_nuclei(d, h->nuclei);
        // SINGLE rounds coordinates to float (2^-24 of their size): a point 1e-8 bohr from a cell lands on it there,
        // and took the cube's self-potential of a cell it is not on (23.8 hartree for 5.9e7). Its backends give NaN
        // on a cell instead; check_values recomputes such a point in double.
        d.cell_self_inv_r = o0.cell_volume > 0 && o0.precision != QMMM_PRECISION_SINGLE
                                ? qmmm::kCubeSelfPotential / std::cbrt(o0.cell_volume)
                                : std::numeric_limits<double>::quiet_NaN();
        h->impl = qmmm::make_field_backend(d, o0);
        // The forces' engine on the same backend (the factory resolved AUTO) with the caller's arrays.
        qmmm_options fo = o0;
        fo.backend = h->impl->backend();
        h->forces = std::make_unique<qmmm::ForceEngine>(
            qmmm::force_sources_cells(n_cells, cell_xyz, cell_q, n_nuclei, nuc_xyz, nuc_z, fo));
        h->forces->set_split(split_grad_of(h->impl.get()));
        // The value backend's own gradient where it is the backend itself (no wrapper moves or adds terms).
        h->forces->set_own(dynamic_cast<qmmm::FieldGradOwn *>(h->impl.get()));
        *f = g_fields.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        check_points(n_points, xyz, u, h->impl->precision());
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = h->impl->eval(n_points, xyz, u)) return s;
        check_values(*h, n_points, xyz, u);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_async(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval_async", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an evaluation is already pending; call qmmm_field_wait");
        check_point_count(n_points, qmmm::kPointBytes);  // the copy of the points kept for wait's messages
        check_points(n_points, xyz, u, h->impl->precision());
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = h->impl->eval_async(n_points, xyz, u)) return s;
        h->pending = true, h->pending_n = n_points, h->pending_u = u;
        h->pending_xyz.assign(xyz, xyz + 3 * n_points);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_wait(qmmm_field f) {
    return qmmm::api_guard("qmmm_field_wait", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (int s = h->impl->wait_device()) return s;  // device-resident calls (api/field_walkers.cpp)
        if (!h->pending) return QMMM_SUCCESS;
        h->pending = false;
        const std::function<void()> walkers = std::move(h->pending_walkers);
        h->pending_walkers = nullptr;
        if (h->forces->pending()) {  // an asynchronous gradient
            h->forces->wait();
            return QMMM_SUCCESS;
        }
        double *sum = h->pending_sum;
        h->pending_sum = nullptr;
        if (int s = h->impl->wait()) return s;
        check_values(*h, h->pending_n, h->pending_xyz.data(), h->pending_u);
        if (sum) *sum = qmmm::checked_sum(h->pending_u, h->pending_n, "qmmm_field_eval_sum_async");
        if (walkers) walkers();
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_sum(qmmm_field f, int64_t n_points, const double *xyz, double *sum) {
    return qmmm::api_guard("qmmm_field_eval_sum", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        if (!sum) throw Error(QMMM_ERR_NULL_ARG, "sum is NULL");
        *sum = 0;
        check_point_count(n_points, sizeof(double));  // before the scratch array grows to n_points values
        double *u = scratch(h, n_points);
        check_points(n_points, xyz, u, h->impl->precision());
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = h->impl->eval(n_points, xyz, u)) return s;
        check_values(*h, n_points, xyz, u);
        *sum = qmmm::checked_sum(u, n_points, "qmmm_field_eval_sum");
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_sum_async(qmmm_field f, int64_t n_points, const double *xyz, double *sum) {
    return qmmm::api_guard("qmmm_field_eval_sum_async", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an evaluation is already pending; call qmmm_field_wait");
        if (!sum) throw Error(QMMM_ERR_NULL_ARG, "sum is NULL");
        *sum = 0;
        check_point_count(n_points, sizeof(double) + qmmm::kPointBytes);  // the values, and the points for wait
        double *u = scratch(h, n_points);
        check_points(n_points, xyz, u, h->impl->precision());
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = h->impl->eval_async(n_points, xyz, u)) return s;
        h->pending = true, h->pending_n = n_points, h->pending_u = u, h->pending_sum = sum;
        h->pending_xyz.assign(xyz, xyz + 3 * n_points);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_create_charges(qmmm_field *f, int64_t n_charges, const double *x, const double *y,
                                       const double *z, int64_t stride, const double *q, int32_t screening,
                                       const double *screen_a, const double *screen_b, int64_t n_nuclei,
                                       const double *nuc_xyz, const double *nuc_z, const qmmm_options *opt) {
    return qmmm::api_guard("qmmm_field_create_charges", [&]() -> int {
        if (!f) throw Error(QMMM_ERR_NULL_ARG, "f (the handle to fill) is NULL");
        *f = nullptr;
        if (n_charges < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_charges = %lld is negative", static_cast<long long>(n_charges)));
        if (n_nuclei < 0)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_nuclei = %lld is negative", static_cast<long long>(n_nuclei)));
        if (n_charges == 0 && n_nuclei == 0)
            throw Error(QMMM_ERR_INVALID_ARG, "the field has no charges and no nuclei (n_charges = n_nuclei = 0): "
                                              "create it after the charges are read");
        if (stride < 1)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("stride = %lld: use 1 for three arrays x, y, z, or 3 for one "
                                                     "array (3,n) passed as x = xyz, y = xyz + 1, z = xyz + 2",
                                                     static_cast<long long>(stride)));
        if (screening < QMMM_SCREEN_NONE || screening > QMMM_SCREEN_GAUSSIAN)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("screening = %d is not a screening (0 NONE, 1 EXP, 2 GAUSSIAN)",
                                                     screening));
        if (n_charges > 0) {
            if (!x || !y || !z) throw Error(QMMM_ERR_NULL_ARG, "x, y or z is NULL with n_charges > 0");
            if (!q) throw Error(QMMM_ERR_NULL_ARG, "q is NULL with n_charges > 0");
            if (screening != QMMM_SCREEN_NONE && !screen_a)
                throw Error(QMMM_ERR_NULL_ARG, screening == QMMM_SCREEN_EXP ? "screen_a (EXP: a) is NULL"
                                                                            : "screen_a (GAUSSIAN: sigma) is NULL");
            if (screening == QMMM_SCREEN_EXP && !screen_b) throw Error(QMMM_ERR_NULL_ARG, "screen_b (EXP: b) is NULL");
        }
        if (n_nuclei > 0 && !nuc_xyz) throw Error(QMMM_ERR_NULL_ARG, "nuc_xyz is NULL with n_nuclei > 0");
        if (n_nuclei > 0 && !nuc_z) throw Error(QMMM_ERR_NULL_ARG, "nuc_z is NULL with n_nuclei > 0");
        const qmmm_options o = resolved_options(opt);
        check_field_memory("n_charges", n_charges, n_nuclei, o.precision, true);
        if (o.method == QMMM_METHOD_SPLIT && screening != QMMM_SCREEN_NONE)
            throw Error(QMMM_ERR_UNSUPPORTED, "screened charges are summed directly: SPLIT takes unscreened point charges "
                                              "(screening QMMM_SCREEN_NONE)");
        if (o.cell_volume != 0)
            throw Error(QMMM_ERR_INVALID_ARG, "opt->cell_volume must be 0 for point charges (it belongs to cells)");
        check_array("nuc_xyz", nuc_xyz, n_nuclei, 3);
        check_array("nuc_z", nuc_z, n_nuclei, 1);
        check_magnitude("nuc_z", nuc_z, n_nuclei, o.precision);
        check_reach("nuc_xyz", nuc_xyz, n_nuclei, 3, o.precision);
        if (n_charges > 0) check_magnitude("q", q, n_charges, o.precision);

        auto h = std::make_unique<qmmm_field_s>();
        h->charges = true;
        keep_nuclei(*h, n_charges, n_nuclei, nuc_xyz, nuc_z);
        // Every charge as the electron feels it, -q: the unscreened ones as cells, the screened ones apart
        // (charges/field_charges.hpp).
        qmmm::FieldData d;
        qmmm::ScreenedCharges sc;
        sc.kind = screening;
        const char *names[2] = {screening == QMMM_SCREEN_GAUSSIAN ? "sigma" : "a", "b"};
        for (int64_t m = 0; m < n_charges; ++m) {
            const double p[3] = {x[m * stride], y[m * stride], z[m * stride]};
            const double qm = q[m];
            const double a = screening != QMMM_SCREEN_NONE ? screen_a[m] : 0.0;
            const double b = screening == QMMM_SCREEN_EXP ? screen_b[m] : 0.0;
            const double v[6] = {p[0], p[1], p[2], qm, a, b};
            const char *what[6] = {"x", "y", "z", "q", names[0], names[1]};
            for (int k = 0; k < 6; ++k)
                if (!std::isfinite(v[k]))
                    throw Error(QMMM_ERR_NONFINITE, strfmt("charge %lld: %s is %s", qmmm::ix(m), what[k],
                                                           std::isnan(v[k]) ? "NaN" : "Inf"));
            for (int k = 0; k < 3; ++k)
                if (std::fabs(p[k]) > max_coordinate(o.precision))
                    throw Error(QMMM_ERR_INVALID_ARG,
                                strfmt("charge %lld: %s = %g bohr is beyond the %g bohr that this precision squares "
                                       "without overflow",
                                       qmmm::ix(m), what[k], p[k], max_coordinate(o.precision)));
            if (screening == QMMM_SCREEN_EXP && b < 0)
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("charge %lld: b = %g bohr^-2 must be >= 0", qmmm::ix(m), b));
            // b d^2 is formed in the precision's floats: a b beyond its range is Inf, and Inf * 0 on the charge NaN.
            if (screening == QMMM_SCREEN_EXP && b > max_charge(o.precision))
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("charge %lld: b = %g bohr^-2 is beyond the %g bohr^-2 that this "
                                                         "precision takes", qmmm::ix(m), b, max_charge(o.precision)));
            // a multiplies q in the term (q a exp(-b d^2) / d): the charges' limit, for the same reason.
            if (screening == QMMM_SCREEN_EXP && std::fabs(a) > max_charge(o.precision))
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("charge %lld: |a| = %g is beyond the %g that this precision takes",
                                                         qmmm::ix(m), std::fabs(a), max_charge(o.precision)));
            // sigma = 0 is an unscreened charge; a smaller sigma than 1e-6 bohr has the charge's value on top of it,
            // 2 q / (sqrt(pi) sigma), beyond float's range at 1e30 e (and every smearing in use is ~0.1-2 bohr).
            if (screening == QMMM_SCREEN_GAUSSIAN && (a < 0 || (a > 0 && a < qmmm::kMinSigma)))
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("charge %lld: sigma = %g bohr must be 0 (unscreened) or at "
                                                         "least %g bohr", qmmm::ix(m), a, qmmm::kMinSigma));
            const bool screened = screening == QMMM_SCREEN_EXP ? (a != 0 && b != 0)
                                  : screening == QMMM_SCREEN_GAUSSIAN ? a != 0 : false;
            if (qm == 0) continue;  // no term anywhere, and no singularity at its site
            if (!screened) {
                d.cell_xyz.insert(d.cell_xyz.end(), p, p + 3), d.cell_q.push_back(-qm);
            } else {
                const double sa = screening == QMMM_SCREEN_GAUSSIAN ? 1.0 / a : a;
                sc.x.push_back(p[0]), sc.y.push_back(p[1]), sc.z.push_back(p[2]), sc.q.push_back(-qm);
                sc.a.push_back(sa), sc.b.push_back(b), sc.cut2.push_back(qmmm::charges_cut2(screening, sa, b));
                sc.index.push_back(m);
            }
            if (!screened || (screening == QMMM_SCREEN_EXP && a != 1)) {
                h->singular_xyz.insert(h->singular_xyz.end(), p, p + 3);
                h->singular_index.push_back(m);
            }
        }
        sc.n = static_cast<int64_t>(sc.q.size());
        d.n_cells = static_cast<int64_t>(d.cell_q.size());
        keep_charged_nuclei(d, h->nuclei);
        d.cell_self_inv_r = std::numeric_limits<double>::quiet_NaN();  // a point on an unscreened charge: SINGULAR
        d.point_charges = true;
        h->impl = qmmm::make_charges_backend(d, sc, o);
        qmmm_options fo = o;
        fo.backend = h->impl->backend();
        h->forces = std::make_unique<qmmm::ForceEngine>(qmmm::force_sources_charges(
            n_charges, x, y, z, stride, q, screening, screen_a, screen_b, n_nuclei, nuc_xyz, nuc_z, fo));
        h->forces->set_split(split_grad_of(h->impl.get()));
        *f = g_fields.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_backend(qmmm_field f, int *backend, int *precision, int *device) {
    return qmmm::api_guard("qmmm_field_backend", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (backend) *backend = h->impl->backend();
        if (precision) *precision = h->impl->precision();
        if (device) *device = h->impl->device();
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_runtime(qmmm_field f, int *cpu_isa, int *ll_running, int64_t *ll_launches) {
    return qmmm::api_guard("qmmm_field_runtime", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        int running = 0;
        int64_t launches = 0;
        h->impl->low_latency(&running, &launches);
        if (cpu_isa) *cpu_isa = h->impl->cpu_isa();
        if (ll_running) *ll_running = running;
        if (ll_launches) *ll_launches = launches;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_sizes(qmmm_field f, int64_t *n_cells, int64_t *n_nuclei) {
    return qmmm::api_guard("qmmm_field_sizes", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (n_cells) *n_cells = h->n_cells;
        if (n_nuclei) *n_nuclei = h->nuclei.n_nuclei;
        return QMMM_SUCCESS;
    });
}

// The split's report (field_split.hpp); a DIRECT field has none.
static const qmmm::SplitStats &split_of(const qmmm_field_s *h) {
    const qmmm::SplitStats *s = nullptr;
    for (const qmmm::FieldBackend *b = h->impl.get(); b && !s; b = b->wrapped())
        s = dynamic_cast<const qmmm::SplitStats *>(b);
    if (!s) throw Error(QMMM_ERR_UNSUPPORTED, "f is a DIRECT field (created without opt->method = QMMM_METHOD_SPLIT)");
    return *s;
}

QMMM_API int qmmm_field_split_params(qmmm_field f, double *alpha, double *r_cut, double *spacing, double *error_estimate) {
    return qmmm::api_guard("qmmm_field_split_params", [&]() -> int {
        const qmmm::SplitInfo &i = split_of(live(f)).split_info();
        if (alpha) *alpha = i.alpha;
        if (r_cut) *r_cut = i.r_cut;
        if (spacing) *spacing = i.spacing;
        if (error_estimate) *error_estimate = i.error_estimate;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_split_stats(qmmm_field f, int64_t *grid_values, int64_t *bytes, int64_t *n_points,
                                    int64_t *n_outside) {
    return qmmm::api_guard("qmmm_field_split_stats", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        const qmmm::SplitStats &s = split_of(h);
        if (grid_values) *grid_values = s.split_info().grid_values;
        if (bytes) *bytes = s.bytes();
        if (n_points) *n_points = s.points();
        if (n_outside) *n_outside = s.points_outside();
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_split_grad_params(qmmm_field f, double *r_cut, double *error_estimate, int64_t *grid_values,
                                         int *is_split) {
    return qmmm::api_guard("qmmm_field_split_grad_params", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        split_of(h);  // UNSUPPORTED for a DIRECT field
        qmmm::SplitGradStats *g = split_grad_of(h->impl.get());
        if (!g) throw Error(QMMM_ERR_UNSUPPORTED, "this SPLIT field's backend has no split gradient (its gradient is the direct sum)");
        const qmmm::SplitGradInfo &i = g->split_grad_info();
        if (r_cut) *r_cut = i.split ? i.r_cut : 0.0;
        if (error_estimate) *error_estimate = i.split ? i.error_estimate : 0.0;
        if (grid_values) *grid_values = i.split ? i.grid_values : 0;
        if (is_split) *is_split = i.split ? 1 : 0;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_set_dipoles(qmmm_field f, int64_t n_sites, const double *site_xyz, const double *mu) {
    return qmmm::api_guard("qmmm_field_set_dipoles", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        if (n_sites < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_sites = %lld is negative", static_cast<long long>(n_sites)));
        if (n_sites > 0 && !site_xyz) throw Error(QMMM_ERR_NULL_ARG, "site_xyz is NULL with n_sites > 0");
        check_field_memory("n_sites", n_sites, 0, QMMM_PRECISION_DOUBLE, false);
        // The dipoles' term is double on DOUBLE and MIXED (DOUBLE's limits), float on SINGLE (SINGLE's, as its
        // charges': float squares offsets of sites within 1e18 bohr and holds dipoles within 1e30).
        const int prec = dipole_precision(*h);
        check_array("site_xyz", site_xyz, n_sites, 3);
        check_reach("site_xyz", site_xyz, n_sites, 3, prec);
        if (mu) {
            check_array("mu", mu, n_sites, 3);
            check_magnitude("mu", mu, 3 * n_sites, prec);
        }
        if (!h->dipoles) {
            if (n_sites == 0) return QMMM_SUCCESS;
            const qmmm::ForceSources &src = h->forces->sources();
            auto term = std::make_shared<qmmm::DipoleTerm>(h->impl->backend(), h->impl->device(), src.n_threads,
                                                           h->impl->precision());
            term->set_sites(n_sites, site_xyz, mu);
            h->impl = qmmm::wrap_dipoles(std::move(h->impl), term);
            h->forces->set_dipoles(term);
            h->dipoles = std::move(term);
            return QMMM_SUCCESS;
        }
        h->dipoles->set_sites(n_sites, site_xyz, mu);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_update_dipoles(qmmm_field f, int64_t n_sites, const double *mu) {
    return qmmm::api_guard("qmmm_field_update_dipoles", [&]() -> int {
        qmmm_field_s *h = live(f);
        const InUse in_use(h);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        const int64_t have = h->dipoles ? h->dipoles->n() : 0;
        if (n_sites != have)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_sites = %lld, but f has %lld dipole sites (qmmm_field_set_dipoles)",
                                                     static_cast<long long>(n_sites), static_cast<long long>(have)));
        if (n_sites > 0 && !mu) throw Error(QMMM_ERR_NULL_ARG, "mu is NULL with n_sites > 0");
        check_array("mu", mu, n_sites, 3);
        check_magnitude("mu", mu, 3 * n_sites, dipole_precision(*h));
        if (n_sites > 0) h->dipoles->set_mu(mu);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_dipole_count(qmmm_field f, int64_t *n_sites) {
    return qmmm::api_guard("qmmm_field_dipole_count", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (!n_sites) throw Error(QMMM_ERR_NULL_ARG, "n_sites is NULL");
        *n_sites = h->dipoles ? h->dipoles->n() : 0;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_destroy(qmmm_field f) {
    return qmmm::api_guard("qmmm_field_destroy", [&]() -> int {
        if (qmmm_field_s *h = g_fields.get(f); h && h->in_use.load(std::memory_order_acquire) > 0)
            throw Error(QMMM_ERR_BUSY, "another thread is inside a call on f; destroy it after that call returns");
        auto owned = g_fields.remove(f);
        if (!owned) throw Error(QMMM_ERR_BAD_HANDLE, "f is not a live field handle (NULL or already destroyed)");
        // Never free memory a GPU is still writing. A pending gradient is the forces engine's (its destructor waits);
        // the value backend's wait would copy its last results again into the caller's array of a finished call.
        if (owned->pending && !owned->forces->pending()) owned->impl->wait();
        return QMMM_SUCCESS;
    });
}

}  // extern "C"

int qmmm::field_access_call(qmmm_field f, const std::function<int(qmmm::FieldAccess &)> &body) {
    qmmm_field_s *h = live(f);
    const InUse in_use(h);
    qmmm::FieldAccess a{*h->impl,       h->pending,  h->pending_n, h->pending_u, h->pending_xyz, h->pending_walkers,
                        [h](int64_t n) { return scratch(h, n); },
                        [h](int64_t n, const double *xyz, double *u) { check_values(*h, n, xyz, u); }};
    return body(a);
}

int qmmm::field_forces_call(qmmm_field f, int (*body)(qmmm::ForceEngine &, bool &pending, void *ctx), void *ctx) {
    qmmm_field_s *h = live(f);
    const InUse in_use(h);
    return body(*h->forces, h->pending, ctx);
}

// The split's region around the QM points (a helper for opt->region).
extern "C" QMMM_API int qmmm_region_around(int64_t n, const double *xyz, double margin, double *region) {
    using qmmm::Error;
    return qmmm::api_guard("qmmm_region_around", [&]() -> int {
        if (n < 1) throw Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("n = %lld: at least one point is needed", static_cast<long long>(n)));
        if (!xyz) throw Error(QMMM_ERR_NULL_ARG, "xyz is NULL");
        if (!region) throw Error(QMMM_ERR_NULL_ARG, "region is NULL");
        if (!std::isfinite(margin) || margin < 0)
            throw Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("margin = %g (bohr) must be finite and >= 0", margin));
        double r[6];
        for (int k = 0; k < 3; ++k) r[k] = std::numeric_limits<double>::infinity(), r[3 + k] = -r[k];
        for (int64_t i = 0; i < n; ++i)
            for (int k = 0; k < 3; ++k) {
                const double v = xyz[3 * i + k];
                if (!std::isfinite(v))
                    throw Error(QMMM_ERR_NONFINITE, qmmm::strfmt("xyz: element %d of point %lld is not finite", k, static_cast<long long>(i)));
                r[k] = std::min(r[k], v), r[3 + k] = std::max(r[3 + k], v);
            }
        for (int k = 0; k < 3; ++k) region[k] = r[k] - margin, region[3 + k] = r[3 + k] + margin;
        return QMMM_SUCCESS;
    });
}
