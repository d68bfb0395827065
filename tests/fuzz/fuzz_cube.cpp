// fuzz_cube.cpp -- the Gaussian cube reader through the public C API (qmmm_accel_cube.h): qmmm_cube_read,
// qmmm_env_*, qmmm_field_create_from_env. Input: the cube file (plain or gzip).
// Invariants:
//   - a failed read returns FILE_FORMAT or UNSUPPORTED, leaves *env NULL, and its message names the file;
//   - a successful read keeps every point at threshold -1, with finite cells, populations and nuclei and a
//     finite dV > 0; read again at a threshold it keeps a subset of the cells in the same order (each with
//     rho >= threshold) and the same nuclei; adding a cube to an environment appends;
//   - the environment makes a field whose value at a point is finite (or the point is singular).
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "qmmm_accel.h"

namespace {

struct Env {
    int64_t n_cells = 0, n_nuclei = 0;
    double dv = 0;
    std::vector<double> cell_xyz, cell_q, nuc_xyz, nuc_z;
};

Env contents(qmmm_env env) {
    Env e;
    FUZZ_CHECK(qmmm_env_sizes(env, &e.n_cells, &e.n_nuclei, &e.dv) == QMMM_SUCCESS, "%s", qmmm_error_message());
    e.cell_xyz.resize(3 * e.n_cells), e.cell_q.resize(e.n_cells);
    e.nuc_xyz.resize(3 * e.n_nuclei), e.nuc_z.resize(e.n_nuclei);
    FUZZ_CHECK(qmmm_env_copy(env, e.cell_xyz.data(), e.cell_q.data(), e.nuc_xyz.data(), e.nuc_z.data()) == QMMM_SUCCESS,
               "%s", qmmm_error_message());
    return e;
}

void check_failure(int s, const std::string &path) {
    // OUT_OF_MEMORY: a header whose grid could keep more cells than this machine holds, refused before any value.
    FUZZ_CHECK(s == QMMM_ERR_FILE_FORMAT || s == QMMM_ERR_UNSUPPORTED ||
                   (s == QMMM_ERR_OUT_OF_MEMORY && std::strstr(qmmm_error_message(), "may keep up to")),
               "status %s: %s", qmmm_status_string(s), qmmm_error_message());
    FUZZ_CHECK(std::strstr(qmmm_error_message(), path.c_str()), "message does not name the file: %s",
               qmmm_error_message());
}

// The field of the cube at one point near the first cell (or the origin): finite, or the point is singular.
void check_field(qmmm_env env, const Env &e) {
    qmmm_options opt;
    qmmm_options_default(&opt);
    opt.backend = QMMM_BACKEND_CPU;
    opt.n_threads = 1;
    qmmm_field f = nullptr;
    const int s = qmmm_field_create_from_env(&f, env, &opt);
    // Charges beyond 1e300, and cells or nuclei beyond 1e150 bohr, are refused (DOUBLE would overflow the sum or a
    // squared distance), with that reason.
    bool huge = false;
    for (double q : e.cell_q) huge = huge || std::fabs(q) > 1e300;
    for (double z : e.nuc_z) huge = huge || std::fabs(z) > 1e300;
    for (double x : e.cell_xyz) huge = huge || std::fabs(x) > 1e150;
    for (double x : e.nuc_xyz) huge = huge || std::fabs(x) > 1e150;
    if (huge) {
        FUZZ_CHECK(s == QMMM_ERR_INVALID_ARG && std::strstr(qmmm_error_message(), "without overflow"),
                   "a field of charges beyond 1e300 or positions beyond 1e150 bohr: %s: %s", qmmm_status_string(s), qmmm_error_message());
        return;
    }
    FUZZ_CHECK(s == QMMM_SUCCESS, "field from a valid environment: %s: %s", qmmm_status_string(s),
               qmmm_error_message());
    double p[3] = {0.1, 0.2, 0.3}, u = 0;
    if (e.n_cells)
        for (int d = 0; d < 3; ++d) p[d] += e.cell_xyz[d];
    const int se = qmmm_field_eval(f, 1, p, &u);
    FUZZ_CHECK(se == QMMM_SUCCESS || se == QMMM_ERR_SINGULAR, "eval: %s: %s", qmmm_status_string(se),
               qmmm_error_message());
    if (se == QMMM_SUCCESS) FUZZ_CHECK(std::isfinite(u), "eval succeeded with u = %g", u);
    FUZZ_CHECK(qmmm_field_destroy(f) == QMMM_SUCCESS, "%s", qmmm_error_message());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fuzz::MemFile file("fuzz_cube");
    const std::string &path = file.write(data, size);

    qmmm_env all = reinterpret_cast<qmmm_env>(&file);  // must come back NULL on failure
    int s = qmmm_cube_read(&all, path.c_str(), -1.0);
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(all == nullptr, "failed qmmm_cube_read left *env set");
        check_failure(s, path);
        return 0;
    }
    const Env a = contents(all);
    FUZZ_CHECK(a.n_cells >= 1, "no cells at threshold -1");
    FUZZ_CHECK(std::isfinite(a.dv) && a.dv > 0, "cell volume %g", a.dv);
    FUZZ_CHECK(fuzz::all_finite(a.cell_xyz.data(), a.cell_xyz.size()), "non-finite cell centre");
    FUZZ_CHECK(fuzz::all_finite(a.cell_q.data(), a.cell_q.size()), "non-finite cell population");
    FUZZ_CHECK(fuzz::all_finite(a.nuc_xyz.data(), a.nuc_xyz.size()), "non-finite nucleus position");
    FUZZ_CHECK(fuzz::all_finite(a.nuc_z.data(), a.nuc_z.size()), "non-finite nuclear charge");

    // The same file at a threshold, twice into one environment.
    const double threshold = 1e-3;
    qmmm_env some = nullptr;
    FUZZ_CHECK(qmmm_env_create(&some) == QMMM_SUCCESS, "%s", qmmm_error_message());
    s = qmmm_env_add_cube(some, path.c_str(), threshold);
    FUZZ_CHECK(s == QMMM_SUCCESS, "second read of the same file: %s: %s", qmmm_status_string(s), qmmm_error_message());
    const Env b = contents(some);
    FUZZ_CHECK(b.n_nuclei == a.n_nuclei && b.nuc_xyz == a.nuc_xyz && b.nuc_z == a.nuc_z, "nuclei differ");
    FUZZ_CHECK(b.dv == a.dv, "dV %g vs %g", b.dv, a.dv);
    int64_t j = 0;  // b's cells: a subsequence of a's
    for (int64_t i = 0; i < b.n_cells; ++i, ++j) {
        while (j < a.n_cells && !(std::memcmp(&a.cell_xyz[3 * j], &b.cell_xyz[3 * i], 3 * sizeof(double)) == 0 &&
                                  a.cell_q[j] == b.cell_q[i]))
            ++j;
        FUZZ_CHECK(j < a.n_cells, "cell %lld at threshold %g is not among the cells at -1", static_cast<long long>(i),
                   threshold);
        FUZZ_CHECK(b.cell_q[i] >= threshold * b.dv, "cell %lld: q = %g below threshold * dV", static_cast<long long>(i),
                   b.cell_q[i]);
    }
    FUZZ_CHECK(qmmm_env_add_cube(some, path.c_str(), threshold) == QMMM_SUCCESS, "%s", qmmm_error_message());
    int64_t nc2 = 0, nn2 = 0;
    double dv2 = 0;
    FUZZ_CHECK(qmmm_env_sizes(some, &nc2, &nn2, &dv2) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(nc2 == 2 * b.n_cells && nn2 == 2 * b.n_nuclei && dv2 == b.dv, "adding a cube did not append");

    check_field(all, a);
    FUZZ_CHECK(qmmm_env_destroy(some) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(qmmm_env_destroy(all) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(qmmm_env_destroy(all) == QMMM_ERR_BAD_HANDLE, "destroying twice was not detected");
    return 0;
}
