// field_checks.cpp -- the C API's argument checks (field_checks.hpp).
#include "api/field_checks.hpp"

#include <cmath>
#include <cstddef>

#include "all_finite.hpp"
#include "cpu_threads.hpp"
#include "error.hpp"
#include "host_memory.hpp"
#include "split/field_split.hpp"

namespace qmmm {

namespace {

// A field's host memory at its peak during create, per site, measured (peak RSS over the caller's arrays, 2e6 sites,
// CPU backend) and rounded up: the checked copy (32 bytes a site), the backend's layout (MIXED's the largest, with
// its hi/lo parts), the forces engine's copy of the sources (41 bytes a site: x, y, z, charge, index, flag) and, for
// charges, the growth of the vectors they are sorted into (screened or plain). Measured: cells 112.5 / 100.6 /
// 184.5 bytes (DOUBLE / SINGLE / MIXED), charges 185.3 / 157.3 / 219.3 (the larger of all-screened and
// all-plain), nuclei 144.5 whatever the precision (the handle's copy, the backend's, the forces').
constexpr double kCellBytes[3] = {120, 112, 192};
constexpr double kChargeBytes[3] = {192, 160, 224};
constexpr double kNucleusBytes = 152;

}  // namespace

void check_array(const char *name, const double *a, int64_t n, int64_t stride) {
    if (all_finite(a, n * stride)) return;
    for (int64_t i = 0; i < n * stride; ++i)
        if (!std::isfinite(a[i]))
            throw Error(QMMM_ERR_NONFINITE, strfmt("%s: element %lld of entry %lld is %s", name,
                                                   ix(i % stride), ix(i / stride),
                                                   std::isnan(a[i]) ? "NaN" : "Inf"));
}

double max_charge(int precision) { return precision == QMMM_PRECISION_DOUBLE ? 1e300 : 1e30; }

void check_magnitude(const char *name, const double *a, int64_t n, int precision) {
    const double lim = max_charge(precision);
    for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(a[i]) && std::fabs(a[i]) > lim)  // NaN and Inf: NONFINITE, checked apart
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("%s: entry %lld is %g, beyond the %g that %s precision sums without overflow%s", name,
                               ix(i), a[i], lim, precision == QMMM_PRECISION_DOUBLE ? "DOUBLE" : "SINGLE and MIXED",
                               precision == QMMM_PRECISION_DOUBLE ? "" : " (DOUBLE takes up to 1e300)"));
}

void check_field_memory(const char *what, int64_t n, int64_t n_nuclei, int precision, bool charges) {
    const double phys = physical_memory_bytes();
    const int p = precision == QMMM_PRECISION_SINGLE ? 1 : precision == QMMM_PRECISION_MIXED ? 2 : 0;
    const double each = charges ? kChargeBytes[p] : kCellBytes[p];
    const double need = each * static_cast<double>(n) + kNucleusBytes * static_cast<double>(n_nuclei);
    if (need > phys)
        throw Error(QMMM_ERR_OUT_OF_MEMORY,
                    strfmt("%s = %lld, n_nuclei = %lld: the field needs about %.3g GB of host memory while it is made "
                           "(%s precision: %g bytes a %s, %g a nucleus) and this machine has %.3g GB",
                           what, static_cast<long long>(n), static_cast<long long>(n_nuclei), need / 1e9,
                           p == 0 ? "DOUBLE" : p == 1 ? "SINGLE" : "MIXED", each, charges ? "charge" : "cell",
                           kNucleusBytes, phys / 1e9));
}

double max_coordinate(int precision) { return precision == QMMM_PRECISION_DOUBLE ? 1e150 : 1e18; }

void check_reach(const char *name, const double *a, int64_t n, int64_t stride, int precision) {
    const double lim = max_coordinate(precision);
    for (int64_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k)
            if (std::fabs(a[i * stride + k]) > lim && std::isfinite(a[i * stride + k]))
                throw Error(QMMM_ERR_INVALID_ARG,
                            strfmt("%s: %c of entry %lld is %g bohr, beyond the %g bohr that %s precision squares "
                                   "without overflow%s",
                                   name, "xyz"[k], ix(i), a[i * stride + k], lim,
                                   precision == QMMM_PRECISION_DOUBLE ? "DOUBLE" : "SINGLE and MIXED",
                                   precision == QMMM_PRECISION_DOUBLE ? "" : " (DOUBLE takes up to 1e150)"));
}

void check_options(const qmmm_options &o) {
    if (o.backend < QMMM_BACKEND_AUTO || o.backend > QMMM_BACKEND_CUDA)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->backend = %d is not a backend (0 AUTO, 1 CPU, 2 CUDA)", o.backend));
    if (o.precision < QMMM_PRECISION_DOUBLE || o.precision > QMMM_PRECISION_MIXED)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->precision = %d is not a precision (0 DOUBLE, 1 SINGLE, 2 MIXED)", o.precision));
    if (o.device < -1) throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->device = %d (use -1 or a device index)", o.device));
    check_threads(o.n_threads, "opt->n_threads");
    if (!std::isfinite(o.cell_volume) || o.cell_volume < 0)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->cell_volume = %g (bohr^3) must be finite and >= 0", o.cell_volume));
    if (o.method != QMMM_METHOD_DIRECT && o.method != QMMM_METHOD_SPLIT)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->method = %d is not a method (0 DIRECT, 1 SPLIT)", o.method));
    if (o.flags & ~QMMM_FLAG_LOW_LATENCY)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->flags = %d has unknown bits (1 LOW_LATENCY)", o.flags));
    if (!std::isfinite(o.tolerance) || o.tolerance < 0)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->tolerance = %g must be finite and >= 0", o.tolerance));
    check_split_options(o);  // tolerance range and region (split/field_split_params.cpp)
}
// Fortran's type(qmmm_options) and older callers rely on this layout.
static_assert(sizeof(qmmm_options) == 56 && offsetof(qmmm_options, tolerance) == 32 && offsetof(qmmm_options, region) == 40,
              "qmmm_options ABI");

void check_point_count(int64_t n, double scratch_bytes_each) {
    if (n < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_points = %lld is negative", static_cast<long long>(n)));
    // Up to 2^20 points (56 MB with every copy) no machine is asked about its memory: sysconf is a system call,
    // 0.3-0.5 us against a 40-charge call's 0.34 us.
    if (n <= (int64_t{1} << 20)) return;
    const double phys = physical_memory_bytes(), pts = static_cast<double>(n);
    if (kPointBytes * pts > phys)
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("n_points = %lld: the points' coordinates alone (%g bytes each) would take %.3g GB and this "
                           "machine has %.3g GB; no array holds that many points",
                           static_cast<long long>(n), kPointBytes, kPointBytes * pts / 1e9, phys / 1e9));
    if (scratch_bytes_each * pts > phys)
        throw Error(QMMM_ERR_OUT_OF_MEMORY,
                    strfmt("n_points = %lld: the call needs %.3g GB of host memory for the points' values (%g bytes "
                           "each) and this machine has %.3g GB", static_cast<long long>(n),
                           scratch_bytes_each * pts / 1e9, scratch_bytes_each, phys / 1e9));
}

void check_points(int64_t n, const double *xyz, const double *u, int precision) {
    check_point_count(n, 0);
    if (n == 0) return;
    if (!xyz) throw Error(QMMM_ERR_NULL_ARG, strfmt("xyz is NULL with n_points = %lld", static_cast<long long>(n)));
    if (!u) throw Error(QMMM_ERR_NULL_ARG, strfmt("u is NULL with n_points = %lld", static_cast<long long>(n)));
    // One branch-free pass over the coordinates (the call of a legacy code passes 3 of them): |v| <= limit is false
    // for NaN, Inf and a coordinate beyond the precision's reach alike; only then the passes that say which.
    const double lim = max_coordinate(precision);
    bool ok = true;
    for (int64_t i = 0; i < 3 * n; ++i) ok &= std::fabs(xyz[i]) <= lim;
    if (ok) return;
    check_array("xyz", xyz, n, 3);
    check_reach("xyz", xyz, n, 3, precision);
}

}  // namespace qmmm
