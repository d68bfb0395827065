// fuzz_pot.cpp -- the potential-file (.pot) reader through the public C API (qmmm_accel_pol.h):
// qmmm_pol_create_from_pot, then the sites, their permanent field and one induced-dipole solve. Input: the file
// (its size's parity switches Thole damping on or off).
// Invariants:
//   - a failed read returns FILE_FORMAT or UNSUPPORTED (the file), or INVALID_ARG (sites the constructor refuses:
//     coincident sites, an indefinite polarizability, a field that overflows), leaves *p NULL, and its message
//     names the file;
//   - a successful read has at least one site, finite positions, charges, dipoles and polarizabilities, at most as
//     many polarizable sites as sites, and a finite permanent field;
//   - a solve in a uniform field either succeeds with finite dipoles, a residual within the tolerance and finite
//     energies (e_pol = e_pol_ext + e_pol_mm), or returns NOT_CONVERGED with a message and finite last dipoles;
//   - the handle is destroyed once, and a second destroy is refused.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "qmmm_accel.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static fuzz::MemFile file("fuzz_pot");
    const std::string &path = file.write(data, size);

    qmmm_pol_options opt;
    qmmm_pol_options_default(&opt);
    opt.n_threads = 1;
    opt.max_iter = 100;
    // Thole damping on for files of odd size (both paths of the solver, decided by the input itself).
    opt.damp_induced = opt.damp_multipole = static_cast<int32_t>(size & 1);
    qmmm_pol p = reinterpret_cast<qmmm_pol>(&file);  // must come back NULL on failure
    int s = qmmm_pol_create_from_pot(&p, path.c_str(), &opt);
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(p == nullptr, "failed qmmm_pol_create_from_pot left *p set");
        FUZZ_CHECK(s == QMMM_ERR_FILE_FORMAT || s == QMMM_ERR_UNSUPPORTED || s == QMMM_ERR_INVALID_ARG, "status %s: %s",
                   qmmm_status_string(s), qmmm_error_message());
        FUZZ_CHECK(std::strstr(qmmm_error_message(), path.c_str()), "message does not name the file: %s",
                   qmmm_error_message());
        return 0;
    }
    int64_t n = 0, np = 0;
    FUZZ_CHECK(qmmm_pol_sizes(p, &n, &np) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(n >= 1 && np >= 0 && np <= n, "sizes %lld %lld", static_cast<long long>(n), static_cast<long long>(np));
    std::vector<double> xyz(3 * n), q(n), dip(3 * n), alpha(6 * n), f(3 * n), mu(3 * n), e(3 * n, 0.0);
    FUZZ_CHECK(qmmm_pol_sites(p, xyz.data(), q.data(), dip.data(), alpha.data()) == QMMM_SUCCESS, "%s",
               qmmm_error_message());
    FUZZ_CHECK(fuzz::all_finite(xyz.data(), xyz.size()) && fuzz::all_finite(q.data(), q.size()) &&
                   fuzz::all_finite(dip.data(), dip.size()) && fuzz::all_finite(alpha.data(), alpha.size()),
               "non-finite site data");
    FUZZ_CHECK(qmmm_pol_static_field(p, f.data()) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(fuzz::all_finite(f.data(), f.size()), "non-finite permanent field");
    for (int64_t i = 0; i < n; ++i) e[3 * i + 2] = 0.01;
    qmmm_pol_stats st{};
    s = qmmm_pol_solve(p, e.data(), mu.data(), &st);
    if (s == QMMM_SUCCESS) {
        FUZZ_CHECK(fuzz::all_finite(mu.data(), mu.size()), "solve succeeded with non-finite dipoles");
        FUZZ_CHECK(st.residual <= opt.tolerance, "residual %g above the tolerance", st.residual);
        FUZZ_CHECK(std::isfinite(st.e_pol) && st.e_pol == st.e_pol_ext + st.e_pol_mm, "energies %g %g %g", st.e_pol,
                   st.e_pol_ext, st.e_pol_mm);
        for (int64_t i = 0; i < n; ++i) {
            bool pol = false;
            for (int d = 0; d < 6; ++d) pol = pol || alpha[6 * i + d] != 0;
            if (!pol) FUZZ_CHECK(mu[3 * i] == 0 && mu[3 * i + 1] == 0 && mu[3 * i + 2] == 0, "dipole at a site "
                                 "without polarizability");
        }
    } else {
        FUZZ_CHECK(s == QMMM_ERR_NOT_CONVERGED || s == QMMM_ERR_INVALID_ARG, "solve: %s: %s", qmmm_status_string(s),
                   qmmm_error_message());
        FUZZ_CHECK(std::strlen(qmmm_error_message()) > 0, "no message");
        if (s == QMMM_ERR_NOT_CONVERGED) FUZZ_CHECK(st.iterations <= opt.max_iter, "iterations %d", st.iterations);
    }
    FUZZ_CHECK(qmmm_pol_destroy(p) == QMMM_SUCCESS, "%s", qmmm_error_message());
    FUZZ_CHECK(qmmm_pol_destroy(p) == QMMM_ERR_BAD_HANDLE, "destroying twice was not detected");
    return 0;
}
