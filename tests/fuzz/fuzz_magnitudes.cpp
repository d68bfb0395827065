// fuzz_magnitudes.cpp -- property-based: valid-looking calls of the field (qmmm_field_create, _create_charges with
// every screening, _eval, _eval_sum, _eval_grad, _site_field), DCS (qmmm_dcs_map, _place_ions) and RDF (qmmm_rdf_create, _set_cut,
// _set_selection*, _add_frame(s), _results, _box_limit) whose numbers span magnitudes 1e-300 .. 1e300 (both signs,
// log-uniform over an exponent range drawn from the input, now and then an edge: 0, 1e-308, 1e-162, 1e-10, 1e17,
// 1.3e154, 1e30, 1e39, 1e300, 1e308) and whose options lie at and just beyond their documented limits (n_threads
// 0 .. 1024, precisions and methods 0 .. 2, n_bins 1 .. 2^24, tolerance 1e-11 .. 1e-3, counts, charges up to 1e300
// in DOUBLE and 1e30 in SINGLE/MIXED, coordinates up to 1e150 / 1e18 bohr, DCS lengths and map bound, RDF r_max in
// [1e-6, 1e15], DCS on_atom 0 .. 1, distances >= 0, ...: fuzz_limits.hpp). No NaN, Inf or NULL is passed:
// fuzz_capi does those.
//
// Properties (each call):
//   - a call returns SUCCESS with every output finite, or a documented non-success status with a non-empty
//     qmmm_error_message(); never QMMM_ERR_INTERNAL (a bug by the header's definition), never NaN/Inf with SUCCESS;
//   - an option or argument beyond its documented limit is refused (never SUCCESS): a field point beyond the
//     precision's reach with QMMM_ERR_INVALID_ARG;
//   - DOUBLE field values (cells, nuclei, unscreened and screened point charges) agree with a long-double direct
//     sum to 1e-12 of sum |term| wherever no point is within a factor 100 of the 1e-10 bohr singular radius, and
//     such a field does not refuse points within its reach, on no singular charge, every term representable;
//     eval_sum equals the sum of eval's values;
//   - screening parameters at and just beyond their limits (EXP |a| and b up to 1e300 / 1e30, b >= 0; GAUSSIAN
//     sigma 0 or >= 1e-6) are refused beyond them;
//   - the forces (forces_calls): eval_grad, site_field and site_field_grad keep the error model, give finite outputs
//     with SUCCESS, refuse points and weights beyond their limits (site_field_grad: screened charges UNSUPPORTED);
//     DOUBLE's gradient U is eval's and the plain gradient matches a long-double one;
//   - DCS maps that succeed are finite (every precision); DOUBLE maps agree with a long-double sum to 1e-12
//     normwise plus the header's per-term rounding; SINGLE and MIXED maps stay within the header's bound
//     (u (8 + (2|p-o|_1 + |r_a-o|_1)/r_a) per term plus 2 u sqrt(n) of the sum, u = 2^-24; checked where every
//     number is within float's comfortable range); with on_atom OTHERS an atom on a point is left out there;
//   - RDF results finite (r_mid increasing, g >= 0, n_cum non-decreasing, average volume finite), frames counted;
//   - every handle is destroyed (ASan's leak check).
// A broken property prints "FUZZ_CHECK failed: <which>: <values>" and aborts, so libFuzzer keeps the input.
// QMMM_FUZZ_TRACE=1 prints every call and its status on stderr.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "fuzz_limits.hpp"
#include "qmmm_accel.h"

namespace {

using Provider = FuzzedDataProvider;
using ld = long double;

constexpr double kSingular2 = 1e-20;                // (1e-10 bohr)^2, the documented singular radius squared
constexpr double kBandLo = 1e-24, kBandHi = 1e-16;  // d^2 within a factor 100 of it: either outcome is allowed
constexpr int kMaxThreads = 1024;                   // src_cxx/core/cpu_threads.hpp (n_threads 0 .. 1024)

bool tracing() {
    static const bool on = std::getenv("QMMM_FUZZ_TRACE") != nullptr;
    return on;
}

// ---- the error model ----

void clear_message() { qmmm_set_error(QMMM_SUCCESS, ""); }

int checked(int s, const char *call) {
    if (tracing()) std::fprintf(stderr, "%s -> %s %s\n", call, qmmm_status_string(s), qmmm_error_message());
    FUZZ_CHECK(s >= QMMM_SUCCESS && (s <= QMMM_ERR_NOT_CONVERGED || s == QMMM_ERR_INTERNAL), "%s returned %d", call, s);
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(qmmm_error_message()[0] != '\0', "[error model] %s failed (%s) without a message", call,
                   qmmm_status_string(s));
        FUZZ_CHECK(s != QMMM_ERR_INTERNAL && s != QMMM_ERR_CUDA && s != QMMM_ERR_MPI && s != QMMM_ERR_BUSY,
                   "[error model] %s: %s: %s", call, qmmm_status_string(s), qmmm_error_message());
    }
    return s;
}
#define CALL(expr) (clear_message(), checked((expr), #expr))

// A value beyond a documented limit must be refused.
void refused(int s, bool beyond, const char *what) {
    if (beyond)
        FUZZ_CHECK(s != QMMM_SUCCESS, "[limits] %s: an argument or option beyond its documented limit was accepted",
                   what);
}

// ---- numbers ----

struct Mag {
    Provider &in;
    int lo = -300, hi = 300;  // decimal exponents of this family of numbers

    // A new exponent range: anywhere in -300 .. 300, as wide or narrow as the input says.
    void range() {
        int a = in.ConsumeIntegralInRange<int>(-300, 300), b = in.ConsumeIntegralInRange<int>(-300, 300);
        if (in.ConsumeBool()) b = a + in.ConsumeIntegralInRange<int>(0, 3);
        lo = std::max(-300, std::min(a, b)), hi = std::min(300, std::max(a, b));
    }
    double positive() {
        static const double kEdges[] = {1e-300, 1e300, 1e-308, 1e308, 1e-162, 1.3e154, 1e155, 1e-10,
                                        1e-9,   1e17,  1e30,   1e38,  1e39,   1.0,     0.5,   3.0};
        const int k = in.ConsumeIntegralInRange<int>(0, 15);
        if (k == 0) return kEdges[in.ConsumeIntegralInRange<int>(0, 15)];
        return std::pow(10.0, in.ConsumeFloatingPointInRange<double>(lo, hi));
    }
    double any() {  // either sign, sometimes 0
        if (in.ConsumeIntegralInRange<int>(0, 15) == 0) return 0.0;
        const double v = positive();
        return in.ConsumeBool() ? v : -v;
    }
};

// A small count, or now and then one at or beyond the limit (0 or -1: the caller says which is invalid).
int64_t small_count(Provider &in, int64_t lo, int64_t hi, bool *beyond) {
    if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
        *beyond = true;
        return lo - in.ConsumeIntegralInRange<int64_t>(1, 2);
    }
    return in.ConsumeIntegralInRange<int64_t>(lo, hi);
}

// n_threads at and beyond its limits.
int32_t threads(Provider &in, bool *beyond) {
    static const int32_t kValues[] = {0, 1, 2, kMaxThreads, kMaxThreads + 1, -1, INT32_MIN, INT32_MAX};
    const int32_t v = in.ConsumeIntegralInRange<int>(0, 7) ? (in.ConsumeBool() ? 0 : 1) : kValues[in.ConsumeIntegralInRange<int>(0, 7)];
    if (v < 0 || v > kMaxThreads) *beyond = true;
    return v;
}

// An enum: mostly a valid value, now and then one step beyond either end.
int32_t enum_value(Provider &in, int32_t lo, int32_t hi, bool *beyond) {
    const int32_t v = in.ConsumeIntegralInRange<int>(0, 7) ? in.ConsumeIntegralInRange<int32_t>(lo, hi)
                                                           : in.ConsumeIntegralInRange<int32_t>(lo - 1, hi + 1);
    if (v < lo || v > hi) *beyond = true;
    return v;
}

ld dist(const double *a, const double *b) {
    const ld dx = (ld)a[0] - b[0], dy = (ld)a[1] - b[1], dz = (ld)a[2] - b[2];
    return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// ---- the field ----

// The screening limits (qmmm_accel_field.h, qmmm_field_create_charges): EXP b >= 0 and |a|, b up to 1e300 (DOUBLE) or
// 1e30 (SINGLE, MIXED); GAUSSIAN sigma 0 (unscreened) or in [1e-6, ...). True when a charge's a (sigma) or b is
// beyond them (b is read for EXP only).
bool screening_beyond(int screening, double a, double b, int precision) {
    const double lim = fuzz::max_charge(precision);
    if (screening == QMMM_SCREEN_EXP) return b < 0 || b > lim || std::fabs(a) > lim;
    if (screening == QMMM_SCREEN_GAUSSIAN) return a < 0 || (a > 0 && a < 1e-6);
    return false;
}

// A screening parameter at or just beyond a limit: a (sigma for GAUSSIAN) or b.
double screening_edge(Provider &in, int screening, bool a) {
    static const double kExp[] = {0.0, 1.0, 1e30, 1.0000001e30, 1e300, 1.0000001e300, -1e30, -1.0000001e30, 1e-300};
    static const double kSigma[] = {0.0, 1e-6, 0.99999e-6, 1e-7, 1e-300, 1e30, 1e300, -1e-6};
    if (screening == QMMM_SCREEN_GAUSSIAN && a) return kSigma[in.ConsumeIntegralInRange<int>(0, 7)];
    const double v = kExp[in.ConsumeIntegralInRange<int>(0, 8)];
    return a ? v : std::fabs(v) * (in.ConsumeIntegralInRange<int>(0, 7) ? 1.0 : -1.0);
}

struct Source {  // one term of U: sign * q * screen(d) / d
    double xyz[3];
    double q;
    int kind;  // 0 cell (+q/d), 1 nucleus (-Z/d), 2 point charge (-q/d, screened)
    int screening = QMMM_SCREEN_NONE;
    double a = 0, b = 0;
    bool singular() const {  // no finite potential at d = 0
        if (kind != 2) return true;
        if (screening == QMMM_SCREEN_NONE) return true;
        if (screening == QMMM_SCREEN_EXP) return !(a == 0 || b == 0) ? a != 1 : true;
        return a == 0;  // GAUSSIAN, sigma 0 = NONE
    }
};

struct Expect {
    std::vector<ld> ref, norm;
    bool ambiguous = false;  // a point within the band around the singular radius: no prediction
    bool singular = false;   // a point within the radius of a singular source (and not ambiguous)
    bool huge = false;       // a term or sum beyond what a double holds: a refusal is fine
};

// The long-double direct sum; cells on a point with cell_volume > 0 take the uniform-cube self-potential.
Expect reference(const std::vector<Source> &src, const std::vector<double> &p, double cell_volume) {
    Expect e;
    const size_t n = p.size() / 3;
    e.ref.assign(n, 0), e.norm.assign(n, 0);
    const ld pi = 3.141592653589793238462643383279502884L;
    const ld cube = 6 * std::log((1 + std::sqrt(3.0L)) / std::sqrt(2.0L)) - pi / 2;
    for (size_t i = 0; i < n; ++i) {
        for (const Source &s : src) {
            if (s.q == 0) continue;  // a zero charge: no term, and no singularity on it
            const ld d = dist(&p[3 * i], s.xyz);
            const ld d2 = d * d;
            if (d2 >= kBandLo && d2 <= kBandHi) e.ambiguous = true;
            ld t, nt;
            if (d2 < kSingular2) {
                if (s.kind == 0 && cell_volume > 0) {
                    t = s.q * cube / std::cbrt((ld)cell_volume), nt = std::fabs(t);
                } else if (s.singular()) {
                    e.singular = true;
                    continue;
                } else {
                    e.ambiguous = true;  // a finite limit; how it is reached inside the radius is the library's
                    continue;
                }
            } else if (s.kind == 0) {
                t = s.q / d, nt = std::fabs(t);
            } else if (s.kind == 1 || s.screening == QMMM_SCREEN_NONE || (s.screening == QMMM_SCREEN_EXP && (s.a == 0 || s.b == 0)) ||
                       (s.screening == QMMM_SCREEN_GAUSSIAN && s.a == 0)) {
                t = -s.q / d, nt = std::fabs(t);
            } else if (s.screening == QMMM_SCREEN_EXP) {
                const ld ex = s.a * std::exp(-(ld)s.b * d2);
                t = -s.q * (1 - ex) / d, nt = std::fabs((ld)s.q) * (1 + std::fabs(ex)) / d;
            } else {
                const ld x = d / s.a;
                const ld f = x < 1e-8L ? 2 / (std::sqrt(pi) * s.a) * (1 - x * x / 3) : std::erf(x) / d;
                t = -s.q * f, nt = 2 * std::fabs(t);
            }
            e.ref[i] += t, e.norm[i] += nt;
            if (!(nt < 1e300L)) e.huge = true;
        }
        if (!(e.norm[i] < 1e300L)) e.huge = true;
    }
    if (e.ambiguous) e.singular = false;
    return e;
}

void field_options(Provider &in, Mag &m, qmmm_options &o, bool *beyond, std::vector<double> &region) {
    qmmm_options_default(&o);
    static const int32_t kBackends[] = {QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, QMMM_BACKEND_CUDA, 3, -1};
    const int b = in.ConsumeIntegralInRange<int>(0, 5);
    o.backend = kBackends[b];
    if (b >= 4) *beyond = true;
    o.precision = enum_value(in, 0, 2, beyond);
    o.n_threads = threads(in, beyond);
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
        o.device = in.ConsumeIntegralInRange<int>(-2, 0);
        if (o.device < -1) *beyond = true;
    }
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
        o.flags = in.ConsumeIntegralInRange<int>(0, 2);
        if (o.flags > 1) *beyond = true;
    }
    if (in.ConsumeBool()) o.cell_volume = in.ConsumeIntegralInRange<int>(0, 7) ? m.positive() : -m.positive();
    if (o.cell_volume < 0) *beyond = true;
    if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {  // SPLIT: tolerance and region
        o.method = QMMM_METHOD_SPLIT;
        // Valid tolerances stop at 1e-4 and regions at 1 bohr from the centre: tighter or larger ones legitimately
        // build grids of up to 67M values (seconds to minutes and GBs under ASan, beyond a fuzz unit's 10 s and 2 GB;
        // 1e-5 over 4 bohr took 7 s); the unit tests hold SPLIT down to 1e-10. The gradient (forces_calls) builds a
        // grid of its own at a value tolerance ~50x tighter where a cell inside the region dominates the field: 6
        // cells at 1e-4 took 5.3 s to create and 32 s more at the first eval_grad (1.26M values) over +-2 bohr, 1.7 s
        // and 4.4 s (0.34M values) over +-1 bohr (ASan + UBSan, a 2-core machine at load 5).
        static const double kTol[] = {1e-3, 1e-4, 3e-4, 3e-4, 9.99e-12, 1.001e-3, 0.0, 1e-4};
        const int t = in.ConsumeIntegralInRange<int>(0, 7);
        o.tolerance = kTol[t];
        if (t == 4 || t == 5 || t == 6) *beyond = true;
        region.resize(6);
        const double w = in.ConsumeIntegralInRange<int>(0, 3) ? in.ConsumeFloatingPointInRange<double>(0.1, 1.0) : m.positive();
        for (int d = 0; d < 3; ++d) region[d] = -w, region[d + 3] = w;
        if (in.ConsumeIntegralInRange<int>(0, 15) == 0) std::swap(region[0], region[3]), *beyond = true;  // lo > hi
        o.region = region.data();
    } else if (in.ConsumeIntegralInRange<int>(0, 7) == 0) {
        o.method = in.ConsumeBool() ? 2 : -1;
        *beyond = true;
    } else {
        o.tolerance = in.ConsumeBool() ? 0.0 : m.positive();  // DIRECT ignores it (any finite value >= 0)
    }
}

// The forces on the same field and points: qmmm_field_eval_grad (U and dU/dr) and qmmm_field_site_field (phi and E
// at every site from weighted points). Properties: the error model; SUCCESS means every output finite; a point
// beyond the precision's reach or a weight beyond its charge limit is INVALID_ARG; DOUBLE's U from the gradient
// call is the long-double U to 1e-12 of sum |term| (a SPLIT field's: to its tolerance, as eval's) where the reference
// is unambiguous; where DOUBLE eval succeeded the
// gradient call succeeds too or says NONFINITE (dU/dr ~ 1/d^2 can leave double's range where U does not); DOUBLE's
// plain gradient (cells, nuclei and unscreened charges only) agrees with the long-double one to 1e-12 of
// sum |q| / d^2 (where that is within 1e-200 .. 1e300), plus the terms whose q / d^3 is below 1e-290.
void forces_calls(Provider &in, qmmm_field f, const std::vector<Source> &src, const std::vector<double> &p,
                  const Expect &e, int se, const qmmm_options &opt) {
    const int64_t n = static_cast<int64_t>(p.size() / 3);
    std::vector<double> ug(n, std::numeric_limits<double>::quiet_NaN()), g(3 * n, std::numeric_limits<double>::quiet_NaN());
    const int sg = CALL(qmmm_field_eval_grad(f, n, p.data(), ug.data(), g.data()));
    if (!fuzz::coords_in_reach(p.data(), n, opt.precision))
        FUZZ_CHECK(sg == QMMM_ERR_INVALID_ARG, "[limits] eval_grad of a point beyond the precision's reach gave %s",
                   qmmm_status_string(sg));
    if (sg == QMMM_SUCCESS) {
        for (int64_t i = 0; i < n; ++i)
            FUZZ_CHECK(std::isfinite(ug[i]) && std::isfinite(g[3 * i]) && std::isfinite(g[3 * i + 1]) &&
                           std::isfinite(g[3 * i + 2]),
                       "[finite] eval_grad succeeded with u %g, grad (%g, %g, %g) at point %lld", ug[i], g[3 * i],
                       g[3 * i + 1], g[3 * i + 2], (long long)i);
        if (opt.precision == QMMM_PRECISION_DOUBLE && !e.ambiguous && !e.huge)
            for (int64_t i = 0; i < n; ++i) {
                // SPLIT: the split's own gradient call, its U within the tolerance as eval's (forces.md)
                const ld tol = opt.method == QMMM_METHOD_SPLIT ? std::max(1e-12, opt.tolerance) : 1e-12;
                FUZZ_CHECK(std::fabs(ug[i] - e.ref[i]) <= tol * e.norm[i] + 1e-300L,
                           "[reference] eval_grad's U %.17g, long-double reference %.17Lg (sum |term| %.3Lg)", ug[i],
                           e.ref[i], e.norm[i]);
                bool plain = true;
                ld gr[3] = {0, 0, 0}, gn = 0, lost = 0;
                for (const Source &s : src) {
                    const bool screened = s.kind == 2 && s.screening != QMMM_SCREEN_NONE &&
                                          !(s.screening == QMMM_SCREEN_EXP && (s.a == 0 || s.b == 0)) &&
                                          !(s.screening == QMMM_SCREEN_GAUSSIAN && s.a == 0);
                    if (screened) plain = false;
                    if (s.q == 0) continue;
                    const ld d = dist(&p[3 * i], s.xyz);
                    const ld c = s.kind == 0 ? (ld)s.q : -(ld)s.q;  // the term c / d
                    for (int k = 0; k < 3; ++k) gr[k] -= c * ((ld)p[3 * i + k] - s.xyz[k]) / (d * d * d);
                    gn += std::fabs(c) / (d * d);
                    // The kernels form c / d^3 before the offset: below double's normal range it is lost.
                    if (std::fabs(c) / (d * d * d) < 1e-290L) lost += std::fabs(c) / (d * d);
                }
                // Within double's comfortable range only: near 1e-300 the pair terms' products underflow.
                if (plain && gn < 1e300L && gn > 1e-200L && opt.method == QMMM_METHOD_DIRECT && opt.cell_volume == 0)
                    for (int k = 0; k < 3; ++k)
                        FUZZ_CHECK(std::fabs(g[3 * i + k] - gr[k]) <= 1e-12L * gn + lost + 1e-300L,
                                   "[reference] eval_grad's dU/d%c %.17g, long-double reference %.17Lg (sum |q|/d^2 "
                                   "%.3Lg) at point %lld (%.17g, %.17g, %.17g)", "xyz"[k], g[3 * i + k], gr[k], gn,
                                   (long long)i, p[3 * i], p[3 * i + 1], p[3 * i + 2]);
            }
    } else if (se == QMMM_SUCCESS && opt.precision == QMMM_PRECISION_DOUBLE && !e.ambiguous && !e.huge) {
        FUZZ_CHECK(sg == QMMM_ERR_NONFINITE, "[consistency] eval succeeded but eval_grad gave %s: %s",
                   qmmm_status_string(sg), qmmm_error_message());
    }

    // The sites' phi and E from weighted points: weights at and beyond the charge limit.
    Mag wm{in};
    wm.range();
    std::vector<double> w(n);
    bool beyond = false;
    const double wlim = opt.precision == QMMM_PRECISION_DOUBLE ? 1e300 : 1e30;
    for (double &x : w) {
        x = in.ConsumeIntegralInRange<int>(0, 3) ? (in.ConsumeBool() ? -1.0 : wm.any()) : wm.any();
        if (std::fabs(x) > wlim) beyond = true;
    }
    if (!fuzz::coords_in_reach(p.data(), n, opt.precision)) beyond = true;
    int64_t n_sites = 0, n_nuc = 0;
    FUZZ_CHECK(CALL(qmmm_field_sizes(f, &n_sites, &n_nuc)) == QMMM_SUCCESS, "sizes");
    const int64_t m = n_sites + n_nuc;
    std::vector<double> phi(std::max<int64_t>(m, 1), std::numeric_limits<double>::quiet_NaN()),
        ef(3 * std::max<int64_t>(m, 1), std::numeric_limits<double>::quiet_NaN());
    const int ss = CALL(qmmm_field_site_field(f, n, p.data(), w.data(), phi.data(), ef.data()));
    refused(ss, beyond, "qmmm_field_site_field");
    if (ss == QMMM_SUCCESS)
        for (int64_t k = 0; k < m; ++k)
            FUZZ_CHECK(std::isfinite(phi[k]) && std::isfinite(ef[3 * k]) && std::isfinite(ef[3 * k + 1]) &&
                           std::isfinite(ef[3 * k + 2]),
                       "[finite] site_field succeeded with phi %g, E (%g, %g, %g) at site %lld", phi[k], ef[3 * k],
                       ef[3 * k + 1], ef[3 * k + 2], (long long)k);

    // The field gradient at the sites from the same points: refused where site_field's arguments are; screened
    // charges UNSUPPORTED; where site_field succeeded on plain sites, SUCCESS or NONFINITE (its terms go as 1/d^3,
    // the field's as 1/d^2); SUCCESS means every value finite.
    bool screened = false;
    for (const Source &c : src)
        screened = screened || (c.kind == 2 && c.screening != QMMM_SCREEN_NONE &&
                                !(c.screening == QMMM_SCREEN_EXP && (c.a == 0 || c.b == 0)) &&
                                !(c.screening == QMMM_SCREEN_GAUSSIAN && c.a == 0));  // a site, whatever its q
    std::vector<double> eg(6 * std::max<int64_t>(m, 1), std::numeric_limits<double>::quiet_NaN());
    const int sgr = CALL(qmmm_field_site_field_grad(f, n, p.data(), w.data(), eg.data()));
    refused(sgr, beyond, "qmmm_field_site_field_grad");
    if (screened)
        FUZZ_CHECK(sgr == QMMM_ERR_UNSUPPORTED || (beyond && sgr != QMMM_SUCCESS),
                   "[unsupported] site_field_grad on screened charges gave %s", qmmm_status_string(sgr));
    else if (ss == QMMM_SUCCESS)
        FUZZ_CHECK(sgr == QMMM_SUCCESS || sgr == QMMM_ERR_NONFINITE,
                   "[consistency] site_field succeeded but site_field_grad gave %s: %s", qmmm_status_string(sgr),
                   qmmm_error_message());
    if (sgr == QMMM_SUCCESS)
        for (int64_t k = 0; k < 6 * m; ++k)
            FUZZ_CHECK(std::isfinite(eg[k]), "[finite] site_field_grad succeeded with %g at site %lld, component %d",
                       eg[k], (long long)(k / 6), (int)(k % 6));
}

void op_field(Provider &in) {
    Mag m{in};
    const bool charges = in.ConsumeBool();
    bool beyond = false;
    std::vector<Source> src;
    m.range();
    const double centre = in.ConsumeIntegralInRange<int>(0, 3) ? 0.0 : m.any();
    Mag q{in};
    q.range();
    const int64_t nc = small_count(in, 0, 6, &beyond), nn = small_count(in, 0, 3, &beyond);
    const int screening = charges ? enum_value(in, 0, 2, &beyond) : 0;
    Mag sm{in};
    sm.range();
    std::vector<double> cx, cq, sa, sb, nx, nz;
    for (int64_t i = 0; i < std::max<int64_t>(nc, 0); ++i) {
        Source s;
        for (double &x : s.xyz) x = centre + m.any(), cx.push_back(x);
        s.q = q.any(), cq.push_back(s.q);
        s.kind = charges ? 2 : 0;
        if (charges) {
            s.screening = screening;
            s.a = screening == QMMM_SCREEN_EXP ? (in.ConsumeIntegralInRange<int>(0, 3) ? (in.ConsumeBool() ? 1.0 : sm.any()) : 0.0)
                                               : (in.ConsumeIntegralInRange<int>(0, 15) ? sm.positive() : -sm.positive());
            s.b = in.ConsumeIntegralInRange<int>(0, 15) ? sm.positive() : -sm.positive();
            // Now and then a parameter at or just beyond its limit (screening_edge).
            if (in.ConsumeIntegralInRange<int>(0, 7) == 0) s.a = screening_edge(in, screening, true);
            if (in.ConsumeIntegralInRange<int>(0, 7) == 0) s.b = screening_edge(in, screening, false);
            sa.push_back(s.a), sb.push_back(s.b);
        }
        src.push_back(s);
    }
    for (int64_t i = 0; i < std::max<int64_t>(nn, 0); ++i) {
        Source s;
        for (double &x : s.xyz) x = centre + m.any(), nx.push_back(x);
        s.q = std::fabs(q.any()), nz.push_back(s.q);
        s.kind = 1;
        src.push_back(s);
    }
    if (nc <= 0 && nn <= 0) beyond = true;  // no charge and no nucleus: refused
    qmmm_options opt;
    std::vector<double> region;
    field_options(in, m, opt, &beyond, region);
    const double qlim = opt.precision == QMMM_PRECISION_DOUBLE ? 1e300 : 1e30;
    for (const Source &s : src)
        if (std::fabs(s.q) > qlim || !fuzz::coords_in_reach(s.xyz, 1, opt.precision)) beyond = true;
    if (charges && opt.cell_volume != 0) beyond = true;
    for (const Source &c : src)
        if (c.kind == 2 && screening_beyond(screening, c.a, c.b, opt.precision)) beyond = true;
    if (opt.backend == QMMM_BACKEND_CUDA) beyond = true;  // NO_CUDA in this build
    const bool split = opt.method == QMMM_METHOD_SPLIT;
    if (split && opt.precision == QMMM_PRECISION_SINGLE) beyond = true;
    if (split && charges && screening != QMMM_SCREEN_NONE) beyond = true;  // UNSUPPORTED

    if (tracing()) {
        std::fprintf(stderr, "field: %s, precision %d, method %d, screening %d, cell_volume %.17g, backend %d, "
                     "threads %d, device %d, flags %d, tolerance %g, n_charges %lld, n_nuclei %lld, beyond %d\n",
                     charges ? "charges" : "cells/nuclei", opt.precision, opt.method, screening, opt.cell_volume,
                     opt.backend, opt.n_threads, opt.device, opt.flags, opt.tolerance, (long long)nc, (long long)nn,
                     beyond);
        for (const Source &c : src)
            std::fprintf(stderr, "  kind %d at %.17g %.17g %.17g q %.17g a %.17g b %.17g\n", c.kind, c.xyz[0], c.xyz[1],
                         c.xyz[2], c.q, c.a, c.b);
    }
    qmmm_field f = nullptr;
    int s;
    if (charges) {
        const bool stride3 = in.ConsumeBool();
        std::vector<double> x(cq.size()), y(cq.size()), z(cq.size());
        for (size_t i = 0; i < cq.size(); ++i) x[i] = cx[3 * i], y[i] = cx[3 * i + 1], z[i] = cx[3 * i + 2];
        const bool none = cx.empty();  // n_charges <= 0: the arrays may be NULL
        const double *px = none ? nullptr : stride3 ? cx.data() : x.data(),
                     *py = none ? nullptr : stride3 ? cx.data() + 1 : y.data(),
                     *pz = none ? nullptr : stride3 ? cx.data() + 2 : z.data();
        s = CALL(qmmm_field_create_charges(&f, nc, px, py, pz, stride3 ? 3 : 1, cq.data(), screening,
                                           screening ? sa.data() : nullptr,
                                           screening == QMMM_SCREEN_EXP ? sb.data() : nullptr, nn, nx.data(),
                                           nz.data(), &opt));
    } else {
        s = CALL(qmmm_field_create(&f, nc, cx.data(), cq.data(), nn, nx.data(), nz.data(), &opt));
    }
    refused(s, beyond, charges ? "qmmm_field_create_charges" : "qmmm_field_create");
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(f == nullptr, "[error model] a failed create left the handle set");
        return;
    }
    FUZZ_CHECK(f != nullptr, "[error model] create succeeded with a NULL handle");
    int prec = -1;
    FUZZ_CHECK(CALL(qmmm_field_backend(f, nullptr, &prec, nullptr)) == QMMM_SUCCESS, "backend");

    for (int round = 0; round < 3 && in.remaining_bytes() > 0; ++round) {
        const int64_t n = in.ConsumeIntegralInRange<int64_t>(1, 4);
        std::vector<double> p(3 * n);
        Mag pm{in};
        pm.range();
        for (int64_t i = 0; i < n; ++i) {
            const int kind = in.ConsumeIntegralInRange<int>(0, 3);
            const Source *near = src.empty() || kind == 0 ? nullptr : &src[in.ConsumeIntegralInRange<size_t>(0, src.size() - 1)];
            for (int d = 0; d < 3; ++d)
                p[3 * i + d] = !near ? centre + pm.any() : kind == 1 ? near->xyz[d] : near->xyz[d] + pm.any();
        }
        std::vector<double> u(n, std::numeric_limits<double>::quiet_NaN());
        const int se = CALL(qmmm_field_eval(f, n, p.data(), u.data()));
        // Beyond what the field's precision squares (as qmmm_field_backend reports it: CPU SPLIT evaluates MIXED in
        // double, so its points reach as far as DOUBLE's).
        if (!fuzz::coords_in_reach(p.data(), n, prec)) {
            FUZZ_CHECK(se == QMMM_ERR_INVALID_ARG,
                       "[limits] eval of a point beyond the precision's reach gave %s (precision %d, field says %d; "
                       "points %.17g %.17g %.17g ...)",
                       qmmm_status_string(se), opt.precision, prec, p[0], p[1], p[2]);
            double sum = 0;
            const int ss = CALL(qmmm_field_eval_sum(f, n, p.data(), &sum));
            FUZZ_CHECK(ss == QMMM_ERR_INVALID_ARG, "[limits] eval_sum of a point beyond the precision's reach gave %s",
                       qmmm_status_string(ss));
            continue;
        }
        const Expect e = reference(src, p, opt.cell_volume);
        if (se == QMMM_SUCCESS) {
            for (int64_t i = 0; i < n; ++i)
                FUZZ_CHECK(std::isfinite(u[i]), "[finite] eval succeeded with u[%lld] = %g at (%.17g, %.17g, %.17g)",
                           (long long)i, u[i], p[3 * i], p[3 * i + 1], p[3 * i + 2]);
            if (opt.precision == QMMM_PRECISION_DOUBLE && !e.ambiguous && !e.huge)
                for (int64_t i = 0; i < n; ++i) {
                    const ld err = std::fabs(u[i] - e.ref[i]);
                    // SPLIT: the requested normwise tolerance (inside the region; outside, the direct sum).
                    const ld tol = split ? std::max(1e-12, opt.tolerance) : 1e-12;
                    FUZZ_CHECK(err <= tol * e.norm[i] + 1e-300L,
                               "[reference] %s DOUBLE %s: point %lld (%.17g, %.17g, %.17g): u = %.17g, long-double "
                               "reference %.17Lg (sum |term| %.3Lg)",
                               charges ? "charges" : "cells/nuclei", split ? "SPLIT" : "DIRECT", (long long)i,
                               p[3 * i], p[3 * i + 1], p[3 * i + 2], u[i], e.ref[i], e.norm[i]);
                }
            if (opt.precision == QMMM_PRECISION_DOUBLE && !e.ambiguous)
                FUZZ_CHECK(!e.singular, "[refusal] eval succeeded although a point lies on a singular charge");
            ld serial = 0;
            bool sum_finite = true;
            double dsum = 0;
            for (int64_t i = 0; i < n; ++i) serial += u[i], dsum += u[i];
            sum_finite = std::isfinite(dsum);
            double sum = std::numeric_limits<double>::quiet_NaN();
            const int ss = CALL(qmmm_field_eval_sum(f, n, p.data(), &sum));
            if (ss == QMMM_SUCCESS) {
                FUZZ_CHECK(std::isfinite(sum), "[finite] eval_sum succeeded with %g (values sum to %g)", sum, dsum);
                ld abs_sum = 0;
                for (double v : u) abs_sum += std::fabs(v);
                FUZZ_CHECK(std::fabs(sum - serial) <= 1e-14L * abs_sum + 1e-300L,
                           "[consistency] eval_sum %.17g, eval's values sum to %.17Lg", sum, serial);
            } else {
                FUZZ_CHECK(!sum_finite, "[consistency] eval succeeded but eval_sum of the same points gave %s: %s",
                           qmmm_status_string(ss), qmmm_error_message());
            }
        } else if (opt.precision == QMMM_PRECISION_DOUBLE && !e.ambiguous && !e.huge && !e.singular) {
            FUZZ_CHECK(false, "[refusal] DOUBLE %s refused points on no singular charge, every term representable: %s: %s",
                       split ? "SPLIT" : "DIRECT", qmmm_status_string(se), qmmm_error_message());
        }
        forces_calls(in, f, src, p, e, se, opt);
    }
    FUZZ_CHECK(CALL(qmmm_field_destroy(f)) == QMMM_SUCCESS, "[handles] destroy");
}

// ---- DCS ----

void op_dcs(Provider &in) {
    Mag m{in}, q{in}, lm{in};
    m.range(), q.range(), lm.range();
    bool beyond = false;
    const int64_t n = small_count(in, 0, 5, &beyond);
    std::vector<double> xyz(3 * std::max<int64_t>(n, 0)), qs(std::max<int64_t>(n, 0));
    qmmm_dcs_lattice lat;
    bool huge_lattice = false;
    for (int d = 0; d < 3; ++d) {
        lat.origin[d] = in.ConsumeIntegralInRange<int>(0, 3) ? 0.0 : lm.any();
        lat.spacing[d] = in.ConsumeIntegralInRange<int>(0, 15) ? lm.positive() : -lm.positive();
        if (!(lat.spacing[d] > 0)) beyond = true;
        switch (in.ConsumeIntegralInRange<int>(0, 15)) {
            case 0: lat.count[d] = in.ConsumeIntegralInRange<int64_t>(-1, 0), beyond = true; break;
            case 1: lat.count[d] = int64_t{1} << 58, huge_lattice = true; break;  // with others >= 1: > 2^58 total
            default: lat.count[d] = in.ConsumeIntegralInRange<int64_t>(1, 4);
        }
    }
    // 2^58 on an axis: with another count < 1 or > 1 the lattice is refused (INVALID_ARG, or beyond 2^58 points:
    // OUT_OF_MEMORY) before the map is written; exactly 2^58 points would be written, so that case is not called.
    int64_t total = 1, others = 1;
    bool bad_count = false;
    for (int d = 0; d < 3; ++d) {
        if (lat.count[d] < 1) bad_count = true;
        if (lat.count[d] < (int64_t{1} << 58)) others *= std::max<int64_t>(lat.count[d], 1);
        total *= std::max<int64_t>(1, std::min<int64_t>(lat.count[d], 4));
    }
    if (huge_lattice) {
        if (!bad_count && others < 2) return;
        beyond = true;
    }
    for (int64_t a = 0; a < n; ++a) {
        const int kind = in.ConsumeIntegralInRange<int>(0, 3);
        for (int d = 0; d < 3; ++d) {
            const double on = lat.origin[d] + std::min<int64_t>(in.ConsumeIntegralInRange<int64_t>(0, 3), std::max<int64_t>(lat.count[d], 1) - 1) * lat.spacing[d];
            xyz[3 * a + d] = kind == 0 ? on : kind == 1 ? on + m.any() : lat.origin[d] + m.any();
        }
        qs[a] = q.any();
    }
    qmmm_dcs_options o;
    qmmm_dcs_options_default(&o);
    const bool use_opt = in.ConsumeIntegralInRange<int>(0, 7) != 0;
    if (use_opt) {
        static const int32_t kBackends[] = {QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, 3};
        const int b = in.ConsumeIntegralInRange<int>(0, 3);
        o.backend = kBackends[b];
        if (b == 3) beyond = true;
        o.precision = enum_value(in, 0, 2, &beyond);
        o.n_threads = threads(in, &beyond);
        if (in.ConsumeIntegralInRange<int>(0, 15) == 0) o.kernel = 1, beyond = true;
        // One draw for max_device_bytes and on_atom (so the committed inputs decode as before): 2, 3 on_atom
        // OTHERS, 4 one step beyond it, else ERROR.
        switch (in.ConsumeIntegralInRange<int>(0, 7)) {
            case 0: o.max_device_bytes = -m.positive(), beyond = true; break;
            case 1: o.max_device_bytes = m.positive(); break;
            case 2:
            case 3: o.on_atom = QMMM_DCS_ON_ATOM_OTHERS; break;
            case 4: o.on_atom = QMMM_DCS_ON_ATOM_OTHERS + 1, beyond = true; break;
            default: break;
        }
    }
    // The magnitude limits (fuzz_limits.hpp), for a lattice and options that pass the other checks.
    if (!beyond && !huge_lattice &&
        fuzz::dcs_limits(n, xyz.data(), qs.data(), lat, o.precision, o.on_atom) == fuzz::kDcsBeyond)
        beyond = true;
    std::vector<double> map(huge_lattice ? 1 : total, std::numeric_limits<double>::quiet_NaN());
    qmmm_dcs_stats st;
    const int s = CALL(qmmm_dcs_map(n, xyz.data(), qs.data(), &lat, map.data(), use_opt ? &o : nullptr, &st));
    refused(s, beyond, "qmmm_dcs_map");
    if (s != QMMM_SUCCESS) return;
    const char *pname = o.precision == QMMM_PRECISION_DOUBLE ? "DOUBLE" : o.precision == QMMM_PRECISION_SINGLE ? "SINGLE" : "MIXED";
    // Reference and the claimed bound.
    const double u = o.precision == QMMM_PRECISION_DOUBLE ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
    bool float_safe = true;  // every number within float's comfortable range: the claim applies
    for (double v : qs)
        if (v != 0 && (std::fabs(v) < 1e-20 || std::fabs(v) > 1e20)) float_safe = false;
    for (int d = 0; d < 3; ++d)
        if (std::fabs(lat.origin[d]) > 1e15 || lat.spacing[d] > 1e15 || lat.spacing[d] < 1e-15) float_safe = false;
    for (int64_t k = 0; k < total; ++k) {
        const int64_t i = k % lat.count[0], j = (k / lat.count[0]) % lat.count[1], l = k / (lat.count[0] * lat.count[1]);
        const double pt[3] = {lat.origin[0] + i * lat.spacing[0], lat.origin[1] + j * lat.spacing[1],
                              lat.origin[2] + l * lat.spacing[2]};
        FUZZ_CHECK(std::isfinite(map[k]),
                   "[finite] qmmm_dcs_map %s succeeded with map[%lld] = %g at (%.17g, %.17g, %.17g); %lld atoms, "
                   "spacing %g %g %g, first charge %g",
                   pname, (long long)k, map[k], pt[0], pt[1], pt[2], (long long)n, lat.spacing[0], lat.spacing[1],
                   lat.spacing[2], n ? qs[0] : 0.0);
        ld ref = 0, norm = 0, bound = 0;
        bool ok = true;
        // The map's point is origin + (i, j, l) spacing exactly: its distance from offsets in long double (pt, rounded
        // to double, moves by ulp(origin) -- 1.2e-8 of a distance 1e99 from an origin at -2.6e107).
        const ld off[3] = {(ld)i * lat.spacing[0], (ld)j * lat.spacing[1], (ld)l * lat.spacing[2]};
        for (int64_t a = 0; a < n; ++a) {
            ld r2 = 0;
            for (int d = 0; d < 3; ++d) {
                const ld e = off[d] - ((ld)xyz[3 * a + d] - (ld)lat.origin[d]);
                r2 += e * e;
            }
            const ld r = std::sqrt(r2);
            ld l1p = 0, l1a = 0, l1o = 0;
            for (int d = 0; d < 3; ++d)
                l1p += std::fabs((ld)pt[d] - lat.origin[d]), l1a += std::fabs((ld)xyz[3 * a + d] - lat.origin[d]),
                    l1o += std::fabs((ld)lat.origin[d]);
            // The library measures r from the origin in double: on the atom (within 1e-10 bohr) or not is
            // certain only beyond its rounding.
            const ld rounding = 1e-15L * (l1p + l1a + l1o);
            if (o.on_atom == QMMM_DCS_ON_ATOM_OTHERS && r + rounding < 1e-10L) continue;  // left out at this point
            if (r * r <= kBandHi || std::fabs(r - 1e-10L) <= rounding) ok = false;
            const ld t = qs[a] / r;
            ref += t, norm += std::fabs(t);
            bound += std::fabs(t) * u * (8 + (2 * l1p + l1a) / r);
            if (r < 1e-10L || r > 1e15L || l1a > 1e15L) float_safe = false;
        }
        if (!ok || !(norm < 1e300L)) continue;
        bound += 2 * u * std::sqrt((ld)std::max<int64_t>(n, 1)) * norm;
        const ld err = std::fabs(map[k] - ref);
        if (o.precision == QMMM_PRECISION_DOUBLE)  // 1e-12 normwise, plus the header's rounding of each pair term
            FUZZ_CHECK(err <= 1e-12L * norm + 2 * bound + 1e-300L,
                       "[reference] qmmm_dcs_map DOUBLE map[%lld] = %.17g, long-double reference %.17Lg (sum |term| %.3Lg)",
                       (long long)k, map[k], ref, norm);
        else if (float_safe)
            FUZZ_CHECK(err <= 2 * bound + 1e-30L,
                       "[claim] qmmm_dcs_map %s map[%lld] = %.9g, reference %.9Lg: error %.3Lg beyond the header's bound %.3Lg",
                       pname, (long long)k, map[k], ref, err, bound);
    }
    // Ion placement on that map.
    bool ib = false;
    const int64_t n_ions = in.ConsumeIntegralInRange<int>(0, 15) ? in.ConsumeIntegralInRange<int64_t>(0, 3) : -1;
    if (n_ions < 0) ib = true;
    Mag im{in};
    im.range();
    const double ion_charge = in.ConsumeIntegralInRange<int>(0, 15) ? im.any() : 0.0;
    if (ion_charge == 0) ib = true;
    const double da = in.ConsumeIntegralInRange<int>(0, 15) ? (in.ConsumeBool() ? 0.0 : im.positive()) : -im.positive();
    const double di = in.ConsumeIntegralInRange<int>(0, 15) ? (in.ConsumeBool() ? 0.0 : im.positive()) : -im.positive();
    if (da < 0 || di < 0) ib = true;
    std::vector<double> ions(3 * std::max<int64_t>(n_ions, 1), std::numeric_limits<double>::quiet_NaN()),
        energy(std::max<int64_t>(n_ions, 1), std::numeric_limits<double>::quiet_NaN());
    if (tracing()) {
        std::fprintf(stderr, "place_ions: %lld atoms, lattice o %.17g %.17g %.17g h %.17g %.17g %.17g n %lld %lld %lld, "
                     "%lld ions q %.17g dmin %.17g %.17g; map", (long long)n, lat.origin[0], lat.origin[1],
                     lat.origin[2], lat.spacing[0], lat.spacing[1], lat.spacing[2], (long long)lat.count[0],
                     (long long)lat.count[1], (long long)lat.count[2], (long long)n_ions, ion_charge, da, di);
        for (int64_t k = 0; k < std::min<int64_t>(total, 8); ++k) std::fprintf(stderr, " %.17g", map[k]);
        std::fprintf(stderr, "\n");
    }
    const int si = CALL(qmmm_dcs_place_ions(n, xyz.data(), qs.data(), &lat, map.data(), n_ions, ion_charge, da, di,
                                            ions.data(), energy.data()));
    refused(si, ib, "qmmm_dcs_place_ions");
    if (si != QMMM_SUCCESS) return;
    for (int64_t k = 0; k < n_ions; ++k)
        FUZZ_CHECK(std::isfinite(ions[3 * k]) && std::isfinite(ions[3 * k + 1]) && std::isfinite(ions[3 * k + 2]) &&
                       std::isfinite(energy[k]),
                   "[finite] place_ions succeeded with ion %lld at (%g, %g, %g), energy %g (charge %g)", (long long)k,
                   ions[3 * k], ions[3 * k + 1], ions[3 * k + 2], energy[k], ion_charge);
    for (int64_t k = 0; k < total; ++k)
        FUZZ_CHECK(std::isfinite(map[k]), "[finite] place_ions succeeded leaving map[%lld] = %g (ion charge %g)",
                   (long long)k, map[k], ion_charge);
}

// ---- RDF ----

void op_rdf(Provider &in) {
    Mag m{in}, bm{in};
    m.range(), bm.range();
    bool beyond = false;
    const double r_min = in.ConsumeIntegralInRange<int>(0, 3) ? 0.0 : in.ConsumeIntegralInRange<int>(0, 15) ? m.positive() : -m.positive();
    if (r_min < 0) beyond = true;
    double r_max = in.ConsumeIntegralInRange<int>(0, 15) ? r_min + m.positive() : r_min - (in.ConsumeBool() ? 0.0 : m.positive());
    if (!(r_max > r_min) || !std::isfinite(r_max) || !fuzz::rdf_rmax_in_range(r_max)) beyond = true;
    static const int32_t kBins[] = {1, 2, 3, 7, 64, 200, 1 << 24, (1 << 24) + 1, 0, -1, INT32_MIN, INT32_MAX};
    const int bi = in.ConsumeIntegralInRange<int>(0, 11);
    const int32_t n_bins = in.ConsumeIntegralInRange<int>(0, 3) ? in.ConsumeIntegralInRange<int32_t>(1, 16) : kBins[bi];
    if (n_bins < 1 || n_bins > (1 << 24)) beyond = true;
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    static const int32_t kBackends[] = {QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, 3};
    const int b = in.ConsumeIntegralInRange<int>(0, 3);
    o.backend = kBackends[b];
    if (b == 3) beyond = true;
    o.method = enum_value(in, 0, 2, &beyond);
    o.n_threads = threads(in, &beyond);
    if (in.ConsumeIntegralInRange<int>(0, 15) == 0) o.kernel = 1, beyond = true;
    qmmm_rdf h = nullptr;
    if (tracing())
        std::fprintf(stderr, "rdf: r_min %.17g r_max %.17g n_bins %d method %d threads %d\n", r_min, r_max, n_bins,
                     o.method, o.n_threads);
    const int s = CALL(qmmm_rdf_create(&h, r_min, r_max, n_bins, &o));
    refused(s, beyond, "qmmm_rdf_create");
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(h == nullptr, "[error model] a failed rdf_create left the handle set");
        return;
    }
    if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
        const double cut = in.ConsumeIntegralInRange<int>(0, 15) ? m.positive() : -m.positive();
        const int sc = CALL(qmmm_rdf_set_cut(h, cut));
        refused(sc, cut < 0 || cut >= r_max, "qmmm_rdf_set_cut");
    }
    const bool self = in.ConsumeBool();
    const int64_t n1 = in.ConsumeIntegralInRange<int64_t>(1, 4), n2 = self ? n1 : in.ConsumeIntegralInRange<int64_t>(1, 3);
    int ssel;
    if (self) {
        ssel = CALL(qmmm_rdf_set_selection_self(h, n1, nullptr));
        refused(ssel, n1 < 2, "qmmm_rdf_set_selection_self with one atom");
    } else {
        ssel = CALL(qmmm_rdf_set_selections(h, n1, nullptr, nullptr, n2, nullptr, nullptr));
    }
    int64_t frames = 0;
    if (ssel == QMMM_SUCCESS) {
        const int64_t nf = in.ConsumeIntegralInRange<int64_t>(1, 2);
        std::vector<double> box(9 * nf, 0.0), x1(3 * n1 * nf), x2(3 * n2 * nf);
        for (int64_t k = 0; k < nf; ++k) {
            double *bx = &box[9 * k];
            for (int d = 0; d < 3; ++d) bx[4 * d] = in.ConsumeIntegralInRange<int>(0, 15) ? bm.positive() : bm.any();
            if (in.ConsumeIntegralInRange<int>(0, 3) == 0)
                for (int c : {3, 6, 7}) bx[c] = bm.any();
        }
        Mag xm{in};
        xm.range();
        for (auto *v : {&x1, &x2})
            for (double &x : *v) x = in.ConsumeBool() ? xm.any() : box[0] * in.ConsumeFloatingPointInRange<double>(-1, 2);
        for (double &x : x1) if (!std::isfinite(x)) x = 0;
        for (double &x : x2) if (!std::isfinite(x)) x = 0;
        const bool batch = in.ConsumeBool();
        if (tracing()) {
            std::fprintf(stderr, "rdf: %lld frame(s), n1 %lld n2 %lld%s; box", (long long)nf, (long long)n1,
                         (long long)n2, self ? " (self)" : "");
            for (double v : box) std::fprintf(stderr, " %.17g", v);
            std::fprintf(stderr, "\n  xyz1");
            for (double v : x1) std::fprintf(stderr, " %.17g", v);
            std::fprintf(stderr, "\n  xyz2");
            for (double v : x2) std::fprintf(stderr, " %.17g", v);
            std::fprintf(stderr, "\n");
        }
        const int sf = batch ? CALL(qmmm_rdf_add_frames(h, nf, x1.data(), self ? nullptr : x2.data(), box.data()))
                             : CALL(qmmm_rdf_add_frame(h, x1.data(), self ? nullptr : x2.data(), box.data()));
        if (sf == QMMM_SUCCESS) frames = batch ? nf : 1;
        for (int64_t k = 0; k < nf; ++k) {
            double limit = -1;
            const int sl = CALL(qmmm_rdf_box_limit(&box[9 * k], &limit));
            if (sl == QMMM_SUCCESS)
                FUZZ_CHECK(std::isfinite(limit) && limit > 0, "[finite] box_limit succeeded with %g", limit);
            if (sf == QMMM_SUCCESS && sl == QMMM_SUCCESS && (batch || k == 0))
                FUZZ_CHECK(r_max <= limit * (1 + 1e-9), "[limits] a frame was accepted with r_max %.17g beyond the box limit %.17g",
                           r_max, limit);
        }
    }
    const bool arrays = n_bins <= 4096;
    std::vector<double> r(arrays ? n_bins : 0), g(r.size()), nc(r.size());
    std::vector<int64_t> hist(r.size());
    int64_t got_frames = -1;
    double vol = -1;
    FUZZ_CHECK(CALL(qmmm_rdf_results(h, arrays ? r.data() : nullptr, arrays ? g.data() : nullptr,
                                     arrays ? nc.data() : nullptr, arrays ? hist.data() : nullptr, &got_frames, &vol)) ==
                   QMMM_SUCCESS,
               "[error model] results");
    FUZZ_CHECK(got_frames == frames && std::isfinite(vol) && vol >= 0, "[finite] results: %lld frames (added %lld), volume %g",
               (long long)got_frames, (long long)frames, vol);
    double prev_r = -HUGE_VAL, prev_n = 0;
    for (int32_t k = 0; k < (arrays ? n_bins : 0); ++k) {
        FUZZ_CHECK(std::isfinite(r[k]) && r[k] >= prev_r && std::isfinite(g[k]) && g[k] >= 0 && std::isfinite(nc[k]) &&
                       nc[k] >= prev_n && hist[k] >= 0,
                   "[finite] rdf bin %d of [%.17g, %.17g) / %d: r %g g %g n %g hist %lld", k, r_min, r_max, n_bins, r[k],
                   g[k], nc[k], (long long)hist[k]);
        prev_r = r[k], prev_n = nc[k];
    }
    FUZZ_CHECK(CALL(qmmm_rdf_destroy(h)) == QMMM_SUCCESS, "[handles] rdf destroy");
}

}  // namespace

// LeakSanitizer's check at exit reports libomp's 1,440-byte block per worker thread (2,880 bytes after 10 minutes,
// over 1,286 inputs: the RDF and DCS calls' teams of two), as fuzz_tool_cli's: malloc called from libomp.so.5+0x22fe8
// (___kmp_allocate_align) with no frame of the library above it (the worker allocates it for itself), and still
// there after omp_pause_resource_all(omp_pause_hard) at exit. libomp's own, so the rule of fuzz_tool_cli: leaks whose
// stack passes through libomp are not reported in this target (the library's own leaks outside parallel regions
// still are; fuzz_capi keeps the full check).
extern "C" const char *__lsan_default_suppressions() { return "leak:libomp.so.5\n"; }

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    for (int op = 0; op < 4 && in.remaining_bytes() > 0; ++op) {
        switch (in.ConsumeIntegralInRange<int>(0, 2)) {
            case 0: op_field(in); break;
            case 1: op_dcs(in); break;
            default: op_rdf(in); break;
        }
    }
    return 0;
}
