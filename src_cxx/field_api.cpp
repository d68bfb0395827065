// field_api.cpp -- the C API of the embedding field: argument checks, backend choice, handle
// lifetime. The numbers are computed by the backends (field_cpu.cpp, src_cuda/).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../src_cuda/qmmm_cuda.h"
#include "error.hpp"
#include "field_backend.hpp"
#include "handle_registry.hpp"

struct qmmm_field_s {
    std::unique_ptr<qmmm::FieldBackend> impl;
    qmmm::FieldData nuclei;  // nuclei only: the singular-point check runs on the host for every backend
    bool pending = false;
    int64_t pending_n = 0;
    double *pending_u = nullptr;
};

namespace {

using qmmm::fail;

qmmm::HandleRegistry<qmmm_field_s> g_fields;

int check_array(const char *name, const double *a, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n * stride; ++i)
        if (!std::isfinite(a[i]))
            return fail(QMMM_ERR_NONFINITE, "%s: element %lld of entry %lld is %s", name,
                        static_cast<long long>(i % stride), static_cast<long long>(i / stride),
                        std::isnan(a[i]) ? "NaN" : "Inf");
    return QMMM_SUCCESS;
}

int check_options(const qmmm_options &o) {
    if (o.backend < QMMM_BACKEND_AUTO || o.backend > QMMM_BACKEND_CUDA)
        return fail(QMMM_ERR_INVALID_ARG, "opt->backend = %d is not a backend (0 AUTO, 1 CPU, 2 CUDA)", o.backend);
    if (o.precision < QMMM_PRECISION_DOUBLE || o.precision > QMMM_PRECISION_MIXED)
        return fail(QMMM_ERR_INVALID_ARG, "opt->precision = %d is not a precision (0 DOUBLE, 1 SINGLE, 2 MIXED)",
                    o.precision);
    if (o.device < -1) return fail(QMMM_ERR_INVALID_ARG, "opt->device = %d (use -1 or a device index)", o.device);
    if (o.n_threads < 0) return fail(QMMM_ERR_INVALID_ARG, "opt->n_threads = %d is negative", o.n_threads);
    if (!std::isfinite(o.cell_volume) || o.cell_volume < 0)
        return fail(QMMM_ERR_INVALID_ARG, "opt->cell_volume = %g (bohr^3) must be finite and >= 0", o.cell_volume);
    return QMMM_SUCCESS;
}

// AUTO -> QMMM_BACKEND (if set) -> CUDA when a GPU is present -> CPU.
int resolve_backend(int requested, int *resolved) {
    if (requested != QMMM_BACKEND_AUTO) {
        *resolved = requested;
        return QMMM_SUCCESS;
    }
    if (const char *env = std::getenv("QMMM_BACKEND"); env && *env) {
        std::string v(env);
        for (auto &c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (v == "cpu") *resolved = QMMM_BACKEND_CPU;
        else if (v == "cuda") *resolved = QMMM_BACKEND_CUDA;
        else if (v == "auto") *resolved = QMMM_BACKEND_AUTO;
        else return fail(QMMM_ERR_INVALID_ARG, "environment variable QMMM_BACKEND='%s' (use cpu, cuda or auto)", env);
        if (*resolved != QMMM_BACKEND_AUTO) return QMMM_SUCCESS;
    }
    int count = 0;
    qmmm::cuda::device_count(&count);
    *resolved = count > 0 ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU;
    return QMMM_SUCCESS;
}

int check_points(const qmmm_field_s *f, int64_t n, const double *xyz, const double *u) {
    if (n < 0) return fail(QMMM_ERR_INVALID_ARG, "n_points = %lld is negative", static_cast<long long>(n));
    if (n == 0) return QMMM_SUCCESS;
    if (!xyz) return fail(QMMM_ERR_NULL_ARG, "xyz is NULL with n_points = %lld", static_cast<long long>(n));
    if (!u) return fail(QMMM_ERR_NULL_ARG, "u is NULL with n_points = %lld", static_cast<long long>(n));
    if (int s = check_array("xyz", xyz, n, 3)) return s;
    const auto &d = f->nuclei;
    const double r2 = qmmm::kSingularRadius * qmmm::kSingularRadius;
    // First offending point, found in parallel without early exit (vectorisable) when the batch is large:
    // on the GPU path this check would otherwise cost as much as the field itself.
    int64_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static) if (n * d.n_nuclei > 65536)
    for (int64_t p = 0; p < n; ++p) {
        bool on = false;
        for (int64_t b = 0; b < d.n_nuclei; ++b) {
            const double dx = xyz[3 * p] - d.nuc_xyz[3 * b], dy = xyz[3 * p + 1] - d.nuc_xyz[3 * b + 1],
                         dz = xyz[3 * p + 2] - d.nuc_xyz[3 * b + 2];
            on |= dx * dx + dy * dy + dz * dz < r2;
        }
        if (on && p < first) first = p;
    }
    for (int64_t p = first; p < n && p == first; ++p)
        for (int64_t b = 0; b < d.n_nuclei; ++b) {
            const double dx = xyz[3 * p] - d.nuc_xyz[3 * b], dy = xyz[3 * p + 1] - d.nuc_xyz[3 * b + 1],
                         dz = xyz[3 * p + 2] - d.nuc_xyz[3 * b + 2];
            if (dx * dx + dy * dy + dz * dz < r2)
                return fail(QMMM_ERR_SINGULAR,
                            "point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of nucleus %lld: a point "
                            "charge has no finite potential there",
                            static_cast<long long>(p), xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2],
                            static_cast<long long>(b));
        }
    return QMMM_SUCCESS;
}

// A non-finite value can only come from a point on a cell centre with cell_volume unknown.
int check_values(int64_t n, const double *xyz, const double *u) {
    for (int64_t p = 0; p < n; ++p)
        if (!std::isfinite(u[p]))
            return fail(QMMM_ERR_SINGULAR,
                        "point %lld (%.17g, %.17g, %.17g) lies within 1e-10 bohr of a density cell centre and "
                        "qmmm_options.cell_volume is 0 (unknown); set it to use the uniform-cube self-potential",
                        static_cast<long long>(p), xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2]);
    return QMMM_SUCCESS;
}

}  // namespace

extern "C" {

QMMM_API int qmmm_options_default(qmmm_options *opt) {
    if (!opt) return fail(QMMM_ERR_NULL_ARG, "qmmm_options_default: opt is NULL");
    std::memset(opt, 0, sizeof *opt);
    opt->backend = QMMM_BACKEND_AUTO;
    opt->precision = QMMM_PRECISION_DOUBLE;
    opt->device = -1;
    return QMMM_SUCCESS;
}

QMMM_API int qmmm_cuda_device_count(int *count) {
    if (!count) return fail(QMMM_ERR_NULL_ARG, "qmmm_cuda_device_count: count is NULL");
    return qmmm::cuda::device_count(count);
}

QMMM_API int qmmm_field_create(qmmm_field *f, int64_t n_cells, const double *cell_xyz, const double *cell_q,
                               int64_t n_nuclei, const double *nuc_xyz, const double *nuc_z,
                               const qmmm_options *opt) {
    return qmmm::api_guard("qmmm_field_create", [&]() -> int {
        if (!f) return fail(QMMM_ERR_NULL_ARG, "qmmm_field_create: f (the handle to fill) is NULL");
        *f = nullptr;
        if (n_cells < 0)
            return fail(QMMM_ERR_INVALID_ARG, "qmmm_field_create: n_cells = %lld is negative",
                        static_cast<long long>(n_cells));
        if (n_nuclei < 0)
            return fail(QMMM_ERR_INVALID_ARG, "qmmm_field_create: n_nuclei = %lld is negative",
                        static_cast<long long>(n_nuclei));
        if (n_cells > 0 && !cell_xyz)
            return fail(QMMM_ERR_NULL_ARG, "qmmm_field_create: cell_xyz is NULL with n_cells > 0");
        if (n_cells > 0 && !cell_q)
            return fail(QMMM_ERR_NULL_ARG, "qmmm_field_create: cell_q is NULL with n_cells > 0");
        if (n_nuclei > 0 && !nuc_xyz)
            return fail(QMMM_ERR_NULL_ARG, "qmmm_field_create: nuc_xyz is NULL with n_nuclei > 0");
        if (n_nuclei > 0 && !nuc_z)
            return fail(QMMM_ERR_NULL_ARG, "qmmm_field_create: nuc_z is NULL with n_nuclei > 0");
        qmmm_options o;
        qmmm_options_default(&o);
        if (opt) o = *opt;
        if (int s = check_options(o)) return qmmm::fail_context(s, "qmmm_field_create");
        if (int s = check_array("cell_xyz", cell_xyz, n_cells, 3)) return qmmm::fail_context(s, "qmmm_field_create");
        if (int s = check_array("cell_q", cell_q, n_cells, 1)) return qmmm::fail_context(s, "qmmm_field_create");
        if (int s = check_array("nuc_xyz", nuc_xyz, n_nuclei, 3)) return qmmm::fail_context(s, "qmmm_field_create");
        if (int s = check_array("nuc_z", nuc_z, n_nuclei, 1)) return qmmm::fail_context(s, "qmmm_field_create");

        qmmm::FieldData d;
        d.n_cells = n_cells, d.n_nuclei = n_nuclei, d.cell_volume = o.cell_volume;
        if (n_cells) d.cell_xyz.assign(cell_xyz, cell_xyz + 3 * n_cells), d.cell_q.assign(cell_q, cell_q + n_cells);
        if (n_nuclei) d.nuc_xyz.assign(nuc_xyz, nuc_xyz + 3 * n_nuclei), d.nuc_z.assign(nuc_z, nuc_z + n_nuclei);
        d.cell_self_inv_r = o.cell_volume > 0 ? qmmm::kCubeSelfPotential / std::cbrt(o.cell_volume)
                                              : std::numeric_limits<double>::quiet_NaN();

        int backend = 0;
        if (int s = resolve_backend(o.backend, &backend)) return qmmm::fail_context(s, "qmmm_field_create");
        o.backend = backend;
        auto h = std::make_unique<qmmm_field_s>();
        h->impl = backend == QMMM_BACKEND_CUDA ? qmmm::cuda::make_field(d, o) : qmmm::make_field_cpu(d, o);
        d.cell_xyz = {}, d.cell_q = {};
        h->nuclei = std::move(d);
        *f = g_fields.add(std::move(h));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval", [&]() -> int {
        const bool live = g_fields.contains(f);
        if (!live) return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_eval: f is not a live field handle (NULL or destroyed)");
        if (f->pending)
            return fail(QMMM_ERR_BUSY, "qmmm_field_eval: an asynchronous evaluation is pending; call qmmm_field_wait");
        if (int s = check_points(f, n_points, xyz, u)) return qmmm::fail_context(s, "qmmm_field_eval");
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = f->impl->eval(n_points, xyz, u)) return qmmm::fail_context(s, "qmmm_field_eval");
        if (int s = check_values(n_points, xyz, u)) return qmmm::fail_context(s, "qmmm_field_eval");
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_eval_async(qmmm_field f, int64_t n_points, const double *xyz, double *u) {
    return qmmm::api_guard("qmmm_field_eval_async", [&]() -> int {
        const bool live = g_fields.contains(f);
        if (!live) return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_eval_async: f is not a live field handle (NULL or destroyed)");
        if (f->pending)
            return fail(QMMM_ERR_BUSY, "qmmm_field_eval_async: an evaluation is already pending; call qmmm_field_wait");
        if (int s = check_points(f, n_points, xyz, u)) return qmmm::fail_context(s, "qmmm_field_eval_async");
        if (n_points == 0) return QMMM_SUCCESS;
        if (int s = f->impl->eval_async(n_points, xyz, u)) return qmmm::fail_context(s, "qmmm_field_eval_async");
        f->pending = true, f->pending_n = n_points, f->pending_u = u;
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_wait(qmmm_field f) {
    return qmmm::api_guard("qmmm_field_wait", [&]() -> int {
        const bool live = g_fields.contains(f);
        if (!live) return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_wait: f is not a live field handle (NULL or destroyed)");
        if (!f->pending) return QMMM_SUCCESS;
        f->pending = false;
        if (int s = f->impl->wait()) return qmmm::fail_context(s, "qmmm_field_wait");
        for (int64_t p = 0; p < f->pending_n; ++p)
            if (!std::isfinite(f->pending_u[p]))
                return fail(QMMM_ERR_SINGULAR,
                            "qmmm_field_wait: point %lld lies within 1e-10 bohr of a density cell centre and "
                            "qmmm_options.cell_volume is 0 (unknown); set it to use the uniform-cube self-potential",
                            static_cast<long long>(p));
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_field_backend(qmmm_field f, int *backend, int *precision, int *device) {
    const bool live = g_fields.contains(f);
    if (!live) return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_backend: f is not a live field handle (NULL or destroyed)");
    if (backend) *backend = f->impl->backend();
    if (precision) *precision = f->impl->precision();
    if (device) *device = f->impl->device();
    return QMMM_SUCCESS;
}

QMMM_API int qmmm_field_sizes(qmmm_field f, int64_t *n_cells, int64_t *n_nuclei) {
    const bool live = g_fields.contains(f);
    if (!live) return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_sizes: f is not a live field handle (NULL or destroyed)");
    if (n_cells) *n_cells = f->nuclei.n_cells;
    if (n_nuclei) *n_nuclei = f->nuclei.n_nuclei;
    return QMMM_SUCCESS;
}

QMMM_API int qmmm_field_destroy(qmmm_field f) {
    return qmmm::api_guard("qmmm_field_destroy", [&]() -> int {
        auto owned = g_fields.remove(f);
        if (!owned)
            return fail(QMMM_ERR_BAD_HANDLE, "qmmm_field_destroy: f is not a live field handle (NULL or already destroyed)");
        if (owned->pending) owned->impl->wait();  // never free memory a GPU is still writing
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
