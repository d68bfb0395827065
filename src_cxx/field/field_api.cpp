// field_api.cpp -- the C API of the embedding field: argument checks, backend choice, handle lifetime.
// The numbers are computed by the backends (field_cpu.cpp; the GPU side through FieldGpu).
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>

#include "all_finite.hpp"
#include "core_backend.hpp"
#include "error.hpp"
#include "field_backend.hpp"
#include "field_split.hpp"
#include "handle_registry.hpp"

struct qmmm_field_s {
    std::unique_ptr<qmmm::FieldBackend> impl;
    qmmm::FieldData nuclei;  // nuclei only: the singular-point check runs on the host for every backend
    bool pending = false;
    int64_t pending_n = 0;
    double *pending_u = nullptr;
    std::vector<double> pending_xyz;  // the points of the pending evaluation, for its error messages
};

namespace {

using qmmm::Error;
using qmmm::strfmt;

qmmm::HandleRegistry<qmmm_field_s> g_fields;

qmmm_field_s *live(qmmm_field f) {
    if (!g_fields.contains(f)) throw Error(QMMM_ERR_BAD_HANDLE, "f is not a live field handle (NULL or destroyed)");
    return f;
}

void check_array(const char *name, const double *a, int64_t n, int64_t stride) {
    if (qmmm::all_finite(a, n * stride)) return;
    for (int64_t i = 0; i < n * stride; ++i)
        if (!std::isfinite(a[i]))
            throw Error(QMMM_ERR_NONFINITE, strfmt("%s: element %lld of entry %lld is %s", name,
                                                   static_cast<long long>(i % stride), static_cast<long long>(i / stride),
                                                   std::isnan(a[i]) ? "NaN" : "Inf"));
}

void check_options(const qmmm_options &o) {
    if (o.backend < QMMM_BACKEND_AUTO || o.backend > QMMM_BACKEND_CUDA)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->backend = %d is not a backend (0 AUTO, 1 CPU, 2 CUDA)", o.backend));
    if (o.precision < QMMM_PRECISION_DOUBLE || o.precision > QMMM_PRECISION_MIXED)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->precision = %d is not a precision (0 DOUBLE, 1 SINGLE, 2 MIXED)", o.precision));
    if (o.device < -1) throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->device = %d (use -1 or a device index)", o.device));
    if (o.n_threads < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->n_threads = %d is negative", o.n_threads));
    if (!std::isfinite(o.cell_volume) || o.cell_volume < 0)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->cell_volume = %g (bohr^3) must be finite and >= 0", o.cell_volume));
    if (o.method != QMMM_METHOD_DIRECT && o.method != QMMM_METHOD_SPLIT)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->method = %d is not a method (0 DIRECT, 1 SPLIT)", o.method));
    if (o.flags & ~QMMM_FLAG_LOW_LATENCY)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->flags = %d has unknown bits (1 LOW_LATENCY)", o.flags));
    if (!std::isfinite(o.tolerance) || o.tolerance < 0)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->tolerance = %g must be finite and >= 0", o.tolerance));
    qmmm::check_split_options(o);  // tolerance range and region (field_split.cpp)
}
// Fortran's type(qmmm_options) and older callers rely on this layout.
static_assert(sizeof(qmmm_options) == 56 && offsetof(qmmm_options, tolerance) == 32 && offsetof(qmmm_options, region) == 40,
              "qmmm_options ABI");

bool on_nucleus(const qmmm::FieldData &d, const double *p, int64_t b) {
    const double dx = p[0] - d.nuc_xyz[3 * b], dy = p[1] - d.nuc_xyz[3 * b + 1], dz = p[2] - d.nuc_xyz[3 * b + 2];
    return dx * dx + dy * dy + dz * dz < qmmm::kSingularRadius2;
}

void check_points(int64_t n, const double *xyz, const double *u) {
    if (n < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_points = %lld is negative", static_cast<long long>(n)));
    if (n == 0) return;
    if (!xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("xyz is NULL with n_points = %lld", static_cast<long long>(n)));
    if (!u) throw Error(QMMM_ERR_NULL_ARG, strfmt("u is NULL with n_points = %lld", static_cast<long long>(n)));
    check_array("xyz", xyz, n, 3);
}

// The backends return NaN for a point within the singular radius of a nucleus (they compute the nuclear term
// anyway, so the check costs nothing there) and for a point on a cell centre when cell_volume is unknown; this
// says which, for the first such point.
void check_values(const qmmm::FieldData &d, int64_t n, const double *xyz, const double *u) {
    if (qmmm::all_finite(u, n)) return;
    for (int64_t p = 0; p < n; ++p) {
        if (std::isfinite(u[p])) continue;
        const double *x = xyz + 3 * p;
        for (int64_t b = 0; b < d.n_nuclei; ++b)
            if (on_nucleus(d, x, b))
                throw Error(QMMM_ERR_SINGULAR,
                            strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of nucleus %lld: a point "
                                   "charge has no finite potential there",
                                   static_cast<long long>(p), x[0], x[1], x[2], static_cast<long long>(b)));
        throw Error(QMMM_ERR_SINGULAR,
                    strfmt("point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of a density cell centre and "
                           "qmmm_options.cell_volume is 0 (unknown); set it to use the uniform-cube self-potential",
                           static_cast<long long>(p), x[0], x[1], x[2]));
    }
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
        qmmm_options o;
        qmmm_options_default(&o);
        if (opt) o = *opt;
        check_options(o);
        check_array("cell_xyz", cell_xyz, n_cells, 3);
        check_array("cell_q", cell_q, n_cells, 1);
        check_array("nuc_xyz", nuc_xyz, n_nuclei, 3);
        check_array("nuc_z", nuc_z, n_nuclei, 1);

        qmmm::FieldData d;
        d.n_cells = n_cells, d.n_nuclei = n_nuclei, d.cell_volume = o.cell_volume;
        if (n_cells) d.cell_xyz.assign(cell_xyz, cell_xyz + 3 * n_cells), d.cell_q.assign(cell_q, cell_q + n_cells);
        if (n_nuclei) d.nuc_xyz.assign(nuc_xyz, nuc_xyz + 3 * n_nuclei), d.nuc_z.assign(nuc_z, nuc_z + n_nuclei);
        d.cell_self_inv_r = o.cell_volume > 0 ? qmmm::kCubeSelfPotential / std::cbrt(o.cell_volume)
                                              : std::numeric_limits<double>::quiet_NaN();

        o.backend = qmmm::resolve_backend(o.backend);
        auto h = std::make_unique<qmmm_field_s>();
        // MIXED direct sums take the dominant cells apart (summed in double; field_backend.hpp says why).
        if (o.precision == QMMM_PRECISION_MIXED && o.method != QMMM_METHOD_SPLIT) qmmm::field_take_heavy(d);
        if (o.backend == QMMM_BACKEND_CUDA) {
            const qmmm::FieldGpu &gpu = qmmm::GpuRegistry<qmmm::FieldGpu>::get();
            qmmm::check_device(o.device, "opt->device");
            h->impl = o.method == QMMM_METHOD_SPLIT ? qmmm::GpuRegistry<qmmm::FieldSplitGpu>::get().make(d, o)
                                                    : gpu.make(d, o);
        } else {
            h->impl = o.method == QMMM_METHOD_SPLIT ? qmmm::make_field_split_cpu(d, o) : qmmm::make_field_cpu(d, o);
        }
        d.cell_xyz = {}, d.cell_q = {}, d.heavy_xyz = {}, d.heavy_q = {};
        d.n_cells = n_cells;  // as given (qmmm_field_sizes), heavy cells included
        h->nuclei = std::move(d);
        *f = g_fields.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval", [&]() -> int {
        qmmm_field_s *h = live(f);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
        check_points(n_points, xyz, u);
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = h->impl->eval(n_points, xyz, u)) return s;
        check_values(h->nuclei, n_points, xyz, u);
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_async(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval_async", [&]() -> int {
        qmmm_field_s *h = live(f);
        if (h->pending) throw Error(QMMM_ERR_BUSY, "an evaluation is already pending; call qmmm_field_wait");
        check_points(n_points, xyz, u);
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
        if (!h->pending) return QMMM_SUCCESS;
        h->pending = false;
        if (int s = h->impl->wait()) return s;
        check_values(h->nuclei, h->pending_n, h->pending_xyz.data(), h->pending_u);
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

QMMM_API int qmmm_field_sizes(qmmm_field f, int64_t *n_cells, int64_t *n_nuclei) {
    return qmmm::api_guard("qmmm_field_sizes", [&]() -> int {
        const qmmm_field_s *h = live(f);
        if (n_cells) *n_cells = h->nuclei.n_cells;
        if (n_nuclei) *n_nuclei = h->nuclei.n_nuclei;
        return QMMM_SUCCESS;
    });
}

// The split's report (field_split.hpp); a DIRECT field has none.
static const qmmm::SplitStats &split_of(const qmmm_field_s *h) {
    const auto *s = dynamic_cast<const qmmm::SplitStats *>(h->impl.get());
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

QMMM_API int qmmm_field_destroy(qmmm_field f) {
    return qmmm::api_guard("qmmm_field_destroy", [&]() -> int {
        auto owned = g_fields.remove(f);
        if (!owned) throw Error(QMMM_ERR_BAD_HANDLE, "f is not a live field handle (NULL or already destroyed)");
        if (owned->pending) owned->impl->wait();  // never free memory a GPU is still writing
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
