// field_walkers.cpp -- the crowd calls of the field's C API: many walkers in one call (one sum per walker) and
// device-resident points and values. The handle is lent by field_api.cpp (field_access_call); the numbers come from
// the backends.
//
// A walker's sum has the bits of qmmm_field_eval_sum on its points alone, whatever the other walkers: its values are
// added in point order, and the values come from one backend call for all walkers only where the backend says that a
// point's bits do not depend on the call (FieldBackend::merge_from); otherwise from one call per walker, the calls
// qmmm_field_eval_sum would make.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "api/field_checks.hpp"
#include "api/field_walkers.hpp"
#include "backend/checked_sum.hpp"
#include "error.hpp"

namespace {

using qmmm::Error;
using qmmm::FieldAccess;
using qmmm::strfmt;

// n_walkers, offsets and sums as the header states them; returns offsets[n_walkers] - offsets[0] (0 without walkers).
int64_t check_walkers(int64_t n_walkers, const int64_t *offsets, const void *sums, const char *sums_name) {
    if (n_walkers < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_walkers = %lld is negative", static_cast<long long>(n_walkers)));
    if (n_walkers == 0) return 0;
    if (!offsets) throw Error(QMMM_ERR_NULL_ARG, strfmt("offsets is NULL with n_walkers = %lld", static_cast<long long>(n_walkers)));
    if (!sums) throw Error(QMMM_ERR_NULL_ARG, strfmt("%s is NULL with n_walkers = %lld", sums_name, static_cast<long long>(n_walkers)));
    if (offsets[0] < 0)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("offsets[0] = %lld is negative", static_cast<long long>(offsets[0])));
    for (int64_t w = 0; w < n_walkers; ++w)
        if (offsets[w + 1] < offsets[w])
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("walker %lld: offsets[%lld] = %lld is below offsets[%lld] = %lld (offsets must not decrease)",
                               qmmm::ix(w), static_cast<long long>(w + 1), static_cast<long long>(offsets[w + 1]),
                               static_cast<long long>(w), static_cast<long long>(offsets[w])));
    return offsets[n_walkers] - offsets[0];
}

// Whether every walker with points has at least the backend's merge_from points (one backend call for all).
bool mergeable(const FieldAccess &a, int64_t n_walkers, const int64_t *offsets) {
    const int64_t from = a.impl.merge_from();
    for (int64_t w = 0; w < n_walkers; ++w) {
        const int64_t c = offsets[w + 1] - offsets[w];
        if (c > 0 && c < from) return false;
    }
    return true;
}

// sums[w] = walker w's values (v indexed from offsets[0]) added in point order: qmmm_field_eval_sum's order (and its
// error where finite values sum beyond double's range).
void walker_sums(int64_t n_walkers, const int64_t *offsets, const double *v, double *sums) {
    for (int64_t w = 0; w < n_walkers; ++w)
        sums[w] = qmmm::checked_sum(v + (offsets[w] - offsets[0]), offsets[w + 1] - offsets[w],
                                    "qmmm_field_eval_walkers", w);
}

// The checks every host-array walker call makes; returns where the values go (u, or the handle's buffer).
double *start_walkers(FieldAccess &a, int64_t n_walkers, const int64_t *offsets, const double *xyz, double *sums,
                      double *u, int64_t &n) {
    if (a.pending) throw Error(QMMM_ERR_BUSY, "an evaluation is already pending; call qmmm_field_wait");
    n = check_walkers(n_walkers, offsets, sums, "sums");
    std::fill(sums, sums + n_walkers, 0.0);
    double *v = u ? u + (n_walkers ? offsets[0] : 0) : a.scratch(n);
    if (n > 0 && !xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("xyz is NULL with %lld points", static_cast<long long>(n)));
    qmmm::check_points(n, n ? xyz + 3 * offsets[0] : xyz, v, a.impl.precision());
    return v;
}

// Walker by walker, the calls qmmm_field_eval_sum makes; then the values checked and added.
int walkers_one_by_one(FieldAccess &a, int64_t n_walkers, const int64_t *offsets, const double *xyz, double *sums,
                       double *v, int64_t n) {
    for (int64_t w = 0; w < n_walkers; ++w) {
        const int64_t c = offsets[w + 1] - offsets[w];
        if (c > 0)
            if (int s = a.impl.eval(c, xyz + 3 * offsets[w], v + (offsets[w] - offsets[0]))) return s;
    }
    a.check_values(n, xyz + 3 * offsets[0], v);
    walker_sums(n_walkers, offsets, v, sums);
    return QMMM_SUCCESS;
}

// A device pointer of the field's device (or managed memory), as the device calls need; the CUDA backend checks it.
void check_device_args(int64_t n, const double *d_xyz, const double *d_u) {
    if (n < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_points = %lld is negative", static_cast<long long>(n)));
    if (n > 0 && !d_xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("d_xyz is NULL with %lld points", static_cast<long long>(n)));
    if (n > 0 && !d_u) throw Error(QMMM_ERR_NULL_ARG, strfmt("d_u is NULL with n_points = %lld", static_cast<long long>(n)));
}

}  // namespace

extern "C" {

QMMM_API int qmmm_field_eval_walkers(qmmm_field f, int64_t n_walkers, const int64_t *offsets, const double *xyz,
                                     double *sums, double *u) {
    return qmmm::api_guard("qmmm_field_eval_walkers", [&]() -> int {
        return qmmm::field_access_call(f, [&](FieldAccess &a) -> int {
            int64_t n = 0;
            double *v = start_walkers(a, n_walkers, offsets, xyz, sums, u, n);
            if (n == 0) return QMMM_SUCCESS;
            if (!mergeable(a, n_walkers, offsets)) return walkers_one_by_one(a, n_walkers, offsets, xyz, sums, v, n);
            const double *p = xyz + 3 * offsets[0];
            if (int s = a.impl.eval(n, p, v)) return s;
            a.check_values(n, p, v);
            walker_sums(n_walkers, offsets, v, sums);
            return QMMM_SUCCESS;
        });
    });
}

QMMM_API int qmmm_field_eval_walkers_async(qmmm_field f, int64_t n_walkers, const int64_t *offsets, const double *xyz,
                                           double *sums, double *u) {
    return qmmm::api_guard("qmmm_field_eval_walkers_async", [&]() -> int {
        return qmmm::field_access_call(f, [&](FieldAccess &a) -> int {
            int64_t n = 0;
            double *v = start_walkers(a, n_walkers, offsets, xyz, sums, u, n);
            if (n == 0) return QMMM_SUCCESS;
            if (!mergeable(a, n_walkers, offsets)) return walkers_one_by_one(a, n_walkers, offsets, xyz, sums, v, n);
            const double *p = xyz + 3 * offsets[0];
            if (int s = a.impl.eval_async(n, p, v)) return s;
            a.pending = true, a.pending_n = n, a.pending_u = v;
            a.pending_xyz.assign(p, p + 3 * n);
            // wait checks the values (the copy of the points names them), then this adds them.
            auto offs = std::make_shared<std::vector<int64_t>>(offsets, offsets + n_walkers + 1);
            a.pending_walkers = [offs, v, sums, n_walkers]() { walker_sums(n_walkers, offs->data(), v, sums); };
            return QMMM_SUCCESS;
        });
    });
}

QMMM_API int qmmm_field_eval_device(qmmm_field f, int64_t n_points, const double *d_xyz, double *d_u, void *stream) {
    return qmmm::api_guard("qmmm_field_eval_device", [&]() -> int {
        return qmmm::field_access_call(f, [&](FieldAccess &a) -> int {
            if (a.pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
            check_device_args(n_points, d_xyz, d_u);
            return a.impl.eval_device(n_points, d_xyz, d_u, 0, nullptr, nullptr, stream);
        });
    });
}

QMMM_API int qmmm_field_eval_walkers_device(qmmm_field f, int64_t n_walkers, const int64_t *offsets,
                                            const double *d_xyz, double *d_sums, double *d_u, void *stream) {
    return qmmm::api_guard("qmmm_field_eval_walkers_device", [&]() -> int {
        return qmmm::field_access_call(f, [&](FieldAccess &a) -> int {
            if (a.pending) throw Error(QMMM_ERR_BUSY, "an asynchronous evaluation is pending; call qmmm_field_wait");
            const int64_t n = check_walkers(n_walkers, offsets, d_sums, "d_sums");
            if (n > 0 && !d_xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("d_xyz is NULL with %lld points", static_cast<long long>(n)));
            return a.impl.eval_device(n, d_xyz, d_u, n_walkers, offsets, d_sums, stream);
        });
    });
}

}  // extern "C"
