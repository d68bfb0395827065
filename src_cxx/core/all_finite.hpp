// all_finite.hpp -- the API's NaN/Inf screen of caller arrays, at memory speed: it runs on every field evaluation
// (8,192 points are 24,576 coordinates), where an element-by-element isfinite with an early exit cost ~1 ns a value.
#pragma once
#include <cmath>
#include <cstdint>

namespace qmmm {

// True when a[0..n) holds no NaN and no Inf: v * 0 is 0 for finite v and NaN otherwise, so eight independent sums of
// those stay 0 exactly when all are finite (a loop without branches, which the compiler vectorises; v * 0 is not
// folded without -ffast-math). The caller finds the offending element with a plain loop when this says false.
inline bool all_finite(const double *a, int64_t n) {
    if (n <= 8) {  // a legacy call site's few values: a plain test costs less than the eight sums and their tree
        bool ok = true;
        for (int64_t i = 0; i < n; ++i) ok &= std::isfinite(a[i]);
        return ok;
    }
    double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    const int64_t full = n - n % 8;
    for (int64_t i = 0; i < full; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * 0.0;
    for (int64_t i = full; i < n; ++i) acc[i - full] += a[i] * 0.0;
    double s = 0;
    for (double v : acc) s += v;
    return s == 0;
}

}  // namespace qmmm
