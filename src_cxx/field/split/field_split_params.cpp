// field_split_params.cpp -- the split's parameters from the tolerance (alpha, R_c, the grid's spacing), the check
// of its options, and the f-tables (field_split_build.hpp).
#include <algorithm>
#include <cmath>
#include <vector>

#include "error.hpp"
#include "split/field_split_build.hpp"

namespace qmmm {

namespace split {

double erfc_inverse(double y) {  // erfc(x) = y for 0 < y < 1, by bisection (x in [0, 10])
    double a = 0, b = 10;
    for (int i = 0; i < 200; ++i) {
        const double c = 0.5 * (a + b);
        (std::erfc(c) > y ? a : b) = c;
    }
    return 0.5 * (a + b);
}

// alpha: the short-range cost falls as alpha^-3; the interpolation error, and so the grid's refinement, grows with it.
// 4.5 at 1e-7 and looser tolerances, down to 3 at 1e-11. Against 4 at 1e-7 (glycine; docs/design/split.md):
// R_c 0.863 instead of 0.971 bohr; the H100's MIXED calls of 8,192
// points take 9 % (268,938 cells) and 15 % (1,099,098) less time, the CPU's 14 % (2 threads); the grid grew 1 % and
// setup did not grow; max normwise error 3.4e-8 -> 5.2e-8 at 268,938 cells (estimate 8.0e-8 either way). Alpha 5:
// error 7.2e-8 against an estimate of 8.0e-8, too close.
double choose_alpha(double tol) { return std::clamp(4.5 * std::pow(tol / 1e-7, 1.0 / 16), 3.0, 4.5); }

// Point charges (MM environments) have charges of ~0.3-0.8 e inside and next to the region, where density cells
// have small ones: interpolating their erf(a d)/d at the density's alpha asks for deep refinement around each (100,000
// charges 5-15 bohr from a molecule, region = nuclei + 4 bohr, 1e-7: 2,463 charges in the region; alpha 4.5: > 67
// million grid values; 2.0: 3.7 million at 20,000 charges; 1.5: 1.2 million and 23 s of setup on 2 cores at 100,000,
// 50x the direct sum per point). A smaller alpha widens R_c instead: alpha is set so that a point meets about
// kChargesShortRange charges within R_c at the charges' density around the region (the box grown by 3 bohr), and
// never above the densities' alpha.
constexpr double kChargesShortRange = 512;
double charges_alpha(const FieldData &d, const double *region, double tol, double x_cut) {
    constexpr double grow = 3.0;
    double vol = 1;
    for (int k = 0; k < 3; ++k) vol *= region[3 + k] - region[k] + 2 * grow;
    int64_t near = 0;
    for (int64_t m = 0; m < d.n_cells; ++m) {
        bool in = true;
        for (int k = 0; k < 3; ++k)
            in = in && d.cell_xyz[3 * m + k] >= region[k] - grow && d.cell_xyz[3 * m + k] <= region[3 + k] + grow;
        near += in;
    }
    const double pi = 3.14159265358979323846;
    const double rho = std::max(static_cast<double>(near), 1.0) / vol;
    const double rc = std::cbrt(3 * kChargesShortRange / (4 * pi * rho));
    return std::clamp(x_cut / rc, 0.5, choose_alpha(tol));
}

// Level-0 spacing: measured on glycine's QM region (order 8), ~0.4 tol is met at 0.25 bohr for 1e-7 away from
// environment nuclei; bricks near them are refined.
double choose_spacing(double tol) { return std::clamp(0.25 * std::pow(tol / 1e-7, 1.0 / 8), 0.04, 0.6); }

long double f_exact(long double alpha, long double s) {
    if (s <= 0) return 2 * alpha / std::sqrt(3.14159265358979323846264338327950288L);
    const long double r = std::sqrt(s);
    return std::erf(alpha * r) / r;
}

// The n-term Chebyshev series of g on [-1, 1] in powers of x (long double): the coefficients (the first halved), then
// sum_j c_j T_j(x) in powers of x by T_{j+1} = 2x T_j - T_{j-1}.
template <class G>
std::vector<long double> chebyshev_powers(G &&g, int n) {
    const long double pi = 3.14159265358979323846264338327950288L;
    std::vector<long double> cheb(static_cast<size_t>(n)), pw(static_cast<size_t>(n), 0.0L);
    for (int j = 0; j < n; ++j) {
        long double c = 0;
        for (int k = 0; k < n; ++k) {
            const long double th = pi * (k + 0.5L) / n;
            c += g(std::cos(th)) * std::cos(j * th);
        }
        cheb[j] = (j == 0 ? 1 : 2) * c / n;
    }
    std::vector<long double> prev(static_cast<size_t>(n), 0.0L), cur(static_cast<size_t>(n), 0.0L), next(static_cast<size_t>(n));
    cur[0] = 1;  // T_0
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i <= j; ++i) pw[i] += cheb[j] * cur[i];
        for (int i = 0; i < n; ++i)  // T_1 = x, T_{j+1} = 2x T_j - T_{j-1}
            next[i] = (i > 0 ? (j == 0 ? 1 : 2) * cur[i - 1] : 0) - (j == 0 ? 0 : prev[i]);
        prev.swap(cur), cur.swap(next);
    }
    return pw;
}

// f(s) = erf(a sqrt s)/sqrt s on [0, R_c^2] as a polynomial in x = 2 s / R_c^2 - 1 (its Chebyshev series in powers of
// x), computed in long double, with the fewest terms whose error (checked densely, as split_f evaluates it) is at
// most `target` (absolute; f itself is between 1/R_c and 2a/sqrt(pi)).
void build_table(SplitModel &m, double alpha, double rc, double target) {
    const long double smax = static_cast<long double>(rc) * rc;
    m.tv.scale = static_cast<double>(2 / smax);
    for (int n = 8; n <= kSplitMaxTerms; ++n) {
        const std::vector<long double> pw =
            chebyshev_powers([&](long double x) { return f_exact(alpha, smax * (0.5L + 0.5L * x)); }, n);
        m.table.assign(pw.begin(), pw.end());
        m.tv.c = m.table.data(), m.tv.n = n;
        double worst = 0;
        for (int i = 0; i <= 4096; ++i) {
            const double s = std::min(static_cast<double>(smax) * i / 4096, static_cast<double>(smax));
            worst = std::max(worst, std::fabs(split_f(m.tv, s) - static_cast<double>(f_exact(alpha, s))));
        }
        if (worst <= target) return;
    }
    throw Error(QMMM_ERR_INTERNAL, strfmt("split: f(s) needs more than %d terms (alpha %g, R_c %g)", kSplitMaxTerms, alpha, rc));
}

// f'(s) = (a/sqrt(pi)) e^{-a^2 s} / s - erf(a r) / (2 r^3), r = sqrt s; below a^2 s = 2 (where those two cancel) from
// the series of f, (2a/sqrt(pi)) sum_{n>=1} (-1)^n n a^{2n} s^{n-1} / (n! (2n+1)), whose terms stay below e^2 there.
long double fp_exact(long double alpha, long double s) {
    const long double rpi = 1.7724538509055160272981674833411452L, x = alpha * alpha * s;
    if (x < 2) {
        long double sum = 0, t = 1;  // t = (-x)^(n-1) / (n-1)!
        for (int n = 1; n < 60; ++n) {
            sum += t * static_cast<long double>(n) / (n * (2 * n + 1.0L));  // (-x)^(n-1) n / (n! (2n+1))
            t *= -x / n;
        }
        return -2 * alpha / rpi * alpha * alpha * sum;
    }
    const long double r = std::sqrt(s);
    return alpha / rpi * std::exp(-x) / s - std::erf(alpha * r) / (2 * r * r * r);
}

bool build_table_grad(std::vector<double> &table, SplitTableView &tv, double alpha, double rg, double target) {
    const long double smax = static_cast<long double>(rg) * rg;
    tv.scale = static_cast<double>(2 / smax);
    for (int n = 8; n <= kSplitMaxTerms; ++n) {
        const std::vector<long double> pw =
            chebyshev_powers([&](long double x) { return fp_exact(alpha, smax * (0.5L + 0.5L * x)); }, n);
        table.assign(pw.begin(), pw.end());
        tv.c = table.data(), tv.n = n;
        double worst = 0;
        for (int i = 0; i <= 4096; ++i) {
            const double s = std::min(static_cast<double>(smax) * i / 4096, static_cast<double>(smax));
            worst = std::max(worst, std::fabs(split_f(tv, s) - static_cast<double>(fp_exact(alpha, s))));
        }
        if (worst <= target) return true;
    }
    return false;
}

// MIXED's h(d) = exp(a^2 d^2) erfc(a d) on [0, R_c] (split_h_single): float coefficients of its Chebyshev series in
// powers of u = 2 d / R_c - 1 (h is entire and falls only from 1 to ~0.12 there), as few as reach the accuracy that
// float evaluation allows: the fewest terms within 1.25x of the best error over 8..kSplitMaxTermsSingle terms,
// checked densely as the kernel computes it. Its error, a few ulps, is part of the rounding split_build measures.
void build_table_single(SplitModel &m, double alpha, double rc) {
    const long double a = alpha, r = rc;
    auto h = [&](long double d) { return std::exp(a * a * d * d) * std::erfc(a * d); };
    const float scale = static_cast<float>(2 / r);
    std::vector<std::vector<float>> tables;
    std::vector<double> worst;
    for (int n = 8; n <= kSplitMaxTermsSingle; ++n) {
        const std::vector<long double> pw = chebyshev_powers([&](long double x) { return h(r * (0.5L + 0.5L * x)); }, n);
        tables.emplace_back(pw.begin(), pw.end());
        double w = 0;
        for (int i = 0; i <= 4096; ++i) {
            const float d = static_cast<float>(rc * i / 4096);
            const long double exact = h(static_cast<long double>(d));
            w = std::max(w, static_cast<double>(std::fabs((split_h_single(tables.back().data(), n, scale, d) - exact) / exact)));
        }
        worst.push_back(w);
    }
    const double best = *std::min_element(worst.begin(), worst.end());
    size_t k = 0;
    while (worst[k] > 1.25 * best) ++k;
    m.table_single = tables[k];
    m.scale_single = scale;
    m.exp_single = static_cast<float>(-a * a / std::log(2.0L));  // exp(-a^2 s) = 2^(exp_single s)
}

}  // namespace split

void check_split_options(const qmmm_options &o) {
    if (o.method != QMMM_METHOD_SPLIT) {
        if (o.region)
            throw Error(QMMM_ERR_INVALID_ARG, "opt->region is set but opt->method is DIRECT (the region is for SPLIT)");
        return;
    }
    // 0 is refused too: a zeroed struct must not silently mean some tolerance (qmmm_options_default sets one).
    if (!(o.tolerance >= split::kMinTolerance && o.tolerance <= split::kMaxTolerance))
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->tolerance = %g: the split method needs %g <= tolerance <= %g (qmmm_options_default "
                           "sets %g)", o.tolerance, split::kMinTolerance, split::kMaxTolerance, kSplitDefaultTolerance));
    if (o.precision != QMMM_PRECISION_DOUBLE && o.precision != QMMM_PRECISION_MIXED)
        throw Error(QMMM_ERR_UNSUPPORTED, strfmt("opt->precision = %d: the split method runs in double or mixed precision "
                                                 "(QMMM_PRECISION_DOUBLE, QMMM_PRECISION_MIXED)", o.precision));
    if (!o.region)
        throw Error(QMMM_ERR_NULL_ARG, "opt->region is NULL: the split method needs the QM region (6 doubles, bohr; see "
                                       "qmmm_region_around)");
    static const char *name[6] = {"lo_x", "lo_y", "lo_z", "hi_x", "hi_y", "hi_z"};
    for (int k = 0; k < 6; ++k)
        if (!std::isfinite(o.region[k]))
            throw Error(QMMM_ERR_NONFINITE, strfmt("opt->region[%d] (%s) is %s", k, name[k], std::isnan(o.region[k]) ? "NaN" : "Inf"));
    for (int k = 0; k < 3; ++k)
        if (!(o.region[3 + k] > o.region[k]))
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->region: %s = %g is not above %s = %g", name[3 + k], o.region[3 + k],
                                                     name[k], o.region[k]));
}

}  // namespace qmmm
