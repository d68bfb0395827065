// checked_sum.hpp -- a call's sum of per-point values, added in index order (the same bits for the same values,
// whatever computed them in parallel). Finite values can still sum beyond double's range (values near 1e308
// hartree from charges near the create limits): that is QMMM_ERR_NONFINITE, never an Inf returned with success.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "error.hpp"

namespace qmmm {

// sum_i u[i] in index order; what names the sum in the error (e.g. "qmmm_field_eval_sum"), or with walker >= 0 the
// call whose walker it is ("walker 3's sum of qmmm_field_eval_walkers"): the name is formed on the error path only.
inline double checked_sum(const double *u, int64_t n, const char *what, int64_t walker = -1) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += u[i];
    if (std::isfinite(s)) return s;
    double big = 0;
    for (int64_t i = 0; i < n; ++i) big = std::fabs(u[i]) > big ? std::fabs(u[i]) : big;
    const std::string name = walker >= 0 ? strfmt("walker %lld's sum of %s", ix(walker), what) : std::string(what);
    throw Error(QMMM_ERR_NONFINITE,
                strfmt("%s: the sum of %lld finite values leaves double's range (largest |value| %.3g hartree)",
                       name.c_str(), ix(n), big));
}

}  // namespace qmmm
