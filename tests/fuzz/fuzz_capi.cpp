// fuzz_capi.cpp -- the C API with random calls: counts, NULL or real pointers, NaN/Inf/huge/tiny values,
// points on charges, options out of range, live, destroyed and made-up handles. The input drives a short
// program of calls (FuzzedDataProvider) on the field, DCS, RDF, cube-environment and device-choice families.
//
// Invariants checked after every call (the library's error model, README "Errors"):
//   - the status is a documented code, never INTERNAL, CUDA or MPI (no GPU, no MPI here);
//   - a failing call leaves a non-empty qmmm_error_message() (cleared before each call);
//   - a call succeeds exactly when its arguments are valid (predicted here from the headers, including the
//     documented magnitude limits of fuzz_limits.hpp: coordinates, charges, DCS lengths and map bound, RDF r_max),
//     except where the outcome depends on geometry near the 1e-10 bohr singular radius, on rounding at a limit or
//     on room for ions;
//   - results: field values finite, equal to a long-double direct sum (DOUBLE: 1e-12 normwise), the same
//     bits from eval, eval_async + wait and reversed batches; DCS maps finite whenever they succeed, DOUBLE ones
//     within the header's bound of a long-double sum (an atom on a point left out with on_atom OTHERS); ions on lattice points
//     at the requested distances; RDF histograms between the certain and possible pair counts of a
//     double-precision minimum-image reference, N_pairs equal to the reference's;
//   - a refused qmmm_field_site_accum_add leaves the accumulator's sums, summed weight and count as they were;
//   - every handle created is destroyed (ASan's leak checker sees the rest);
//   - the Fortran index base (qmmm_set_index_base, set to 0, 1 or a refused value between calls): no call changes the
//     caller's base; a failing call's message under base 1 is its message under base 0 with every index (a number
//     >= 0) one higher and nothing else changed, and a count it quotes ("n_sites = -1") is the argument under either;
//   - the module-free interface (qmmm_f77_*, called through its C-visible symbols as a Fortran program would: every
//     argument by reference, 4-byte counts, 8-byte handles): the status and message of the C call under base 1,
//     the caller's base restored, made-up handles BAD_HANDLE, QMMM_F77_ERROR_MESSAGE's text the message cut or
//     blank-padded to the length passed.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_common.hpp"
#include "fuzz_limits.hpp"
#include "qmmm_accel.h"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSingular2 = 1e-20;                // (1e-10 bohr)^2, the documented singular radius squared
constexpr double kBandLo = 1e-22, kBandHi = 1e-18;  // d^2 this close to it: the outcome may go either way

using Provider = FuzzedDataProvider;

// ---- the error model ----

void clear_message() { qmmm_mpi_record_error(QMMM_SUCCESS, ""); }

int g_base = 0;  // the index base this program set last (qmmm_set_index_base): no library call may change it

// QMMM_FUZZ_TRACE=1: every call, its status and message on stderr (to read a crash input's story).
bool tracing() {
    static const bool on = std::getenv("QMMM_FUZZ_TRACE") != nullptr;
    return on;
}

int checked(int s, const char *call) {
    if (tracing()) std::fprintf(stderr, "%s -> %s %s\n", call, qmmm_status_string(s), qmmm_error_message());
    FUZZ_CHECK(s >= QMMM_SUCCESS && (s <= QMMM_ERR_NOT_CONVERGED || s == QMMM_ERR_INTERNAL), "%s returned %d", call, s);
    const char *name = qmmm_status_string(s);
    FUZZ_CHECK(name && std::strncmp(name, "QMMM_", 5) == 0, "status %d has no name", s);
    int base = -7;
    FUZZ_CHECK(qmmm_get_index_base(&base) == QMMM_SUCCESS && base == g_base, "%s left the index base %d (set: %d)",
               call, base, g_base);
    if (s != QMMM_SUCCESS) {
        FUZZ_CHECK(qmmm_error_message()[0] != '\0', "%s failed (%s) without a message", call, name);
        FUZZ_CHECK(s != QMMM_ERR_INTERNAL && s != QMMM_ERR_CUDA && s != QMMM_ERR_MPI, "%s: %s: %s", call, name,
                   qmmm_error_message());
    }
    return s;
}
#define CALL(expr) (clear_message(), checked((expr), #expr))

// Success exactly when the arguments were valid (or the outcome was allowed to go either way).
// The library refuses charges beyond what a precision sums without overflow (qmmm_accel_field.h): |q| <= 1e300 for
// DOUBLE, 1e30 for SINGLE and MIXED. NULL or non-finite arrays are judged elsewhere.
bool charges_in_range(const double *a, int64_t n, int precision) {
    if (!a || n <= 0) return true;
    const double lim = precision == QMMM_PRECISION_DOUBLE ? 1e300 : 1e30;
    for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(a[i]) && std::fabs(a[i]) > lim) return false;
    return true;
}

void expect(int s, bool valid, bool either, const char *what) {
    if (either) return;
    if (valid)
        FUZZ_CHECK(s == QMMM_SUCCESS, "%s: valid arguments failed: %s: %s", what, qmmm_status_string(s),
                   qmmm_error_message());
    else
        FUZZ_CHECK(s != QMMM_SUCCESS, "%s: invalid arguments were accepted", what);
}

// ---- numbers as a caller might pass them ----

struct Numbers {
    Provider &in;
    double amax = 0, amin = kInf;  // largest and smallest non-zero magnitude handed out
    bool nonfinite = false;

    void reset() { amax = 0, amin = kInf, nonfinite = false; }
    double note(double v) {
        if (!std::isfinite(v))
            nonfinite = true;
        else if (v != 0)
            amax = std::max(amax, std::fabs(v)), amin = std::min(amin, std::fabs(v));
        return v;
    }
    // Mostly ordinary numbers in [-scale, scale]; sometimes 0, NaN, +-Inf, anything finite, a power of 2.
    double any(double scale) {
        switch (in.ConsumeIntegralInRange<int>(0, 15)) {
            case 0: return note(0.0);
            case 1: return note(kNaN);
            case 2: return note(in.ConsumeBool() ? kInf : -kInf);
            case 3: return note(in.ConsumeFloatingPoint<double>());
            case 4: return note((in.ConsumeBool() ? 1 : -1) * std::ldexp(1.0, in.ConsumeIntegralInRange(-1074, 1023)));
            default: return note(in.ConsumeFloatingPointInRange<double>(-scale, scale));
        }
    }
    double positive(double lo, double hi) {  // a valid spacing or length, or now and then anything
        if (in.ConsumeIntegralInRange<int>(0, 7) == 0) return any(hi);
        return note(in.ConsumeFloatingPointInRange<double>(lo, hi));
    }
    // |values| within [1e-100, 1e100]: no overflow or underflow in double pair terms or sums.
    bool sane() const { return !nonfinite && amax <= 1e100 && amin >= 1e-100; }
    // |values| <= 1e12: float conversions and float pair terms stay finite.
    bool modest() const { return !nonfinite && amax <= 1e12; }
    bool within(double lo, double hi) const { return !nonfinite && amax <= hi && amin >= lo; }
};

// A count: mostly 0..max, sometimes negative or far beyond any array (then only with NULL arrays).
int64_t count(Provider &in, int64_t max) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
        case 0: return -1;
        case 1: return in.ConsumeIntegralInRange<int64_t>(std::numeric_limits<int64_t>::min(), -2);
        case 2: return int64_t{1} << in.ConsumeIntegralInRange(20, 62);
        default: return in.ConsumeIntegralInRange<int64_t>(0, max);
    }
}
bool fits(int64_t n, int64_t max) { return n >= 0 && n <= max; }
// An atom count that needs no array (RDF selections without ids): small, or beyond what the API accepts.
int64_t selection_count(Provider &in, int64_t max) {
    switch (in.ConsumeIntegralInRange<int>(0, 15)) {
        case 0: return in.ConsumeIntegralInRange<int64_t>(-2, 0);
        case 1: return in.ConsumeBool() ? int64_t{INT32_MAX} + 1 : std::numeric_limits<int64_t>::max();
        default: return in.ConsumeIntegralInRange<int64_t>(1, max);
    }
}
bool read_finite(const double *p, int64_t n, size_t stride) {  // what the library reads of an argument
    return !p || n <= 0 || fuzz::all_finite(p, static_cast<size_t>(n) * stride);
}

// An array of n (or nothing when n is out of range); the pointer is NULL now and then.
template <class T>
const T *array_or_null(Provider &in, const std::vector<T> &v, int64_t n, int64_t max) {
    if (!fits(n, max) || in.ConsumeIntegralInRange<int>(0, 11) == 0) return nullptr;
    return v.data();
}

// ---- reference sums ----

long double cube_self_potential() {  // 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2 (README "Singular points")
    const long double pi = 3.141592653589793238462643383279502884L;
    return 6 * std::log((1 + std::sqrt(3.0L)) / std::sqrt(2.0L)) - pi / 2;
}

double dist2(const double *a, const double *b) {
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

// ---- the field ----

struct Field {
    qmmm_field h = nullptr;
    int64_t nc = 0, nn = 0;
    std::vector<double> cx, cq, nx, nz;
    int precision = QMMM_PRECISION_DOUBLE;
    double cell_volume = 0;
    bool sane = false, modest = false;
    bool pending = false;
    std::vector<double> pend_xyz, pend_u;  // pend_u is written by the library until qmmm_field_wait
};

struct FieldOutcome {
    bool singular = false, ambiguous = false, sane = true;
    std::vector<long double> ref, norm;
};

// What a field evaluation of these points must give: SINGULAR (a point on a nucleus, or on a cell with
// cell_volume 0), or the direct sum.
FieldOutcome predict_field(const Field &f, const std::vector<double> &p) {
    FieldOutcome o;
    const size_t n = p.size() / 3;
    o.ref.assign(n, 0), o.norm.assign(n, 0);
    const long double self = f.cell_volume > 0 ? cube_self_potential() / std::cbrt((long double)f.cell_volume) : 0;
    for (size_t i = 0; i < n; ++i) {
        for (int64_t m = 0; m < f.nc; ++m) {
            const double d2 = dist2(&p[3 * i], &f.cx[3 * m]);
            if (d2 >= kBandLo && d2 <= kBandHi) o.ambiguous = true;
            long double t;
            if (d2 < kSingular2) {
                if (f.cell_volume == 0 && f.cq[m] != 0) o.singular = true;  // a zero charge is no singularity
                t = f.cq[m] * self;
            } else {
                const long double dx = (long double)p[3 * i] - f.cx[3 * m],
                                  dy = (long double)p[3 * i + 1] - f.cx[3 * m + 1],
                                  dz = (long double)p[3 * i + 2] - f.cx[3 * m + 2];
                t = f.cq[m] / std::sqrt(dx * dx + dy * dy + dz * dz);
            }
            o.ref[i] += t, o.norm[i] += std::fabs(t);
        }
        for (int64_t b = 0; b < f.nn; ++b) {
            const double d2 = dist2(&p[3 * i], &f.nx[3 * b]);
            if (d2 >= kBandLo && d2 <= kBandHi) o.ambiguous = true;
            if (d2 < kSingular2) {
                if (f.nz[b] != 0) o.singular = true;  // a zero charge is no singularity: the others' value
                continue;
            }
            const long double dx = (long double)p[3 * i] - f.nx[3 * b],
                              dy = (long double)p[3 * i + 1] - f.nx[3 * b + 1],
                              dz = (long double)p[3 * i + 2] - f.nx[3 * b + 2];
            const long double t = f.nz[b] / std::sqrt(dx * dx + dy * dy + dz * dz);
            o.ref[i] -= t, o.norm[i] += std::fabs(t);
        }
    }
    return o;
}

// Points: anywhere, exactly on a cell or nucleus, or just beside one.
std::vector<double> make_points(Provider &in, Numbers &num, const Field *f, int64_t n) {
    std::vector<double> p(3 * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const int kind = in.ConsumeIntegralInRange<int>(0, 7);
        const double *on = nullptr;
        if (f && kind == 1 && f->nc) on = &f->cx[3 * in.ConsumeIntegralInRange<int64_t>(0, f->nc - 1)];
        if (f && kind == 2 && f->nn) on = &f->nx[3 * in.ConsumeIntegralInRange<int64_t>(0, f->nn - 1)];
        for (int d = 0; d < 3; ++d) {
            if (!on)
                p[3 * i + d] = num.any(8);
            else if (in.ConsumeBool())
                p[3 * i + d] = on[d];
            else
                p[3 * i + d] = num.note(on[d] + in.ConsumeFloatingPointInRange<double>(-1e-9, 1e-9));
        }
    }
    return p;
}

class Api {
public:
    explicit Api(Provider &in) : in_(in), num_{in} {}
    ~Api() { cleanup(); }
    void run();

private:
    // handles: live ones, destroyed ones (stale), and a pointer that was never a handle
    qmmm_field pick_field(Field **live) {
        *live = nullptr;
        switch (in_.ConsumeIntegralInRange<int>(0, 7)) {
            case 0: return nullptr;
            case 1: return reinterpret_cast<qmmm_field>(&fake_);
            case 2:
                if (!stale_fields_.empty())
                    return stale_fields_[in_.ConsumeIntegralInRange<size_t>(0, stale_fields_.size() - 1)];
                return nullptr;
            default:
                if (fields_.empty()) return nullptr;
                *live = &fields_[in_.ConsumeIntegralInRange<size_t>(0, fields_.size() - 1)];
                return (*live)->h;
        }
    }
    qmmm_rdf pick_rdf(bool *live) {
        *live = false;
        switch (in_.ConsumeIntegralInRange<int>(0, 7)) {
            case 0: return nullptr;
            case 1: return reinterpret_cast<qmmm_rdf>(&fake_);
            case 2: return stale_rdf_;
            default: *live = rdf_ != nullptr; return rdf_;
        }
    }

    void field_create();
    void field_eval();
    void field_eval_async();
    void field_wait();
    void field_query();
    void field_destroy();
    void cube_env();
    void dcs_map();
    void dcs_place_ions();
    void rdf_create();
    void rdf_selections();
    void rdf_frames();
    void rdf_results();
    void rdf_destroy();
    void misc();
    void cross_kind();
    void index_messages();
    void f77_misc();
    template <class C, class F>
    void three_ways(const char *call, C c, F f77, const std::vector<std::pair<std::string, long long>> &counts);
    void cleanup();
    void compare_eval(Field &f, const std::vector<double> &p, const std::vector<double> &u, const char *what);
    void check_field_values(const Field &f, const std::vector<double> &p, const std::vector<double> &u,
                            const FieldOutcome &o, bool points_sane, bool points_modest);
    qmmm_options make_options(bool *valid);

    Provider &in_;
    Numbers num_;
    int fake_ = 0;
    std::vector<Field> fields_;
    std::vector<qmmm_field> stale_fields_;
    // RDF state: one handle, its selections as the reference sees them
    qmmm_rdf rdf_ = nullptr, stale_rdf_ = nullptr;
    double r_min_ = 0, r_max_ = 0;
    int32_t n_bins_ = 0;
    bool have_sel_ = false, identical_ = false;
    std::vector<int64_t> key1_, key2_;        // exclusion keys (INT64_MIN: none)
    std::vector<int64_t> hist_lo_, hist_hi_;  // certain and possible counts per bin so far
    bool ref_ok_ = true;                      // every frame so far had a reference
    int method_ = QMMM_RDF_METHOD_AUTO;
    int64_t frames_ = 0;
    // DCS state: the last successful map
    struct Dcs {
        bool ok = false;
        std::vector<double> xyz, q, map;
        qmmm_dcs_lattice lat{};
    } dcs_;
};

qmmm_options Api::make_options(bool *valid) {
    qmmm_options o;
    qmmm_options_default(&o);
    *valid = true;
    const int which = in_.ConsumeIntegralInRange<int>(0, 7);
    if (which == 0) return o;
    static const int kBackends[] = {QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, QMMM_BACKEND_CUDA, -1, 3};
    o.backend = kBackends[in_.ConsumeIntegralInRange<int>(0, 5)];
    o.precision = in_.ConsumeIntegralInRange<int>(-1, 3);
    o.device = in_.ConsumeIntegralInRange<int>(-2, 1);
    o.n_threads = in_.ConsumeIntegralInRange<int>(-1, 2);
    switch (in_.ConsumeIntegralInRange<int>(0, 3)) {
        case 0: o.cell_volume = 0; break;
        case 1: o.cell_volume = in_.ConsumeFloatingPointInRange<double>(1e-3, 2.0); break;
        default: o.cell_volume = num_.any(2.0);
    }
    // reserved[] shrank from 8 to 2 entries when the options grew (sizeof stays 56): take its size from the header.
    constexpr int kReserved = static_cast<int>(sizeof o.reserved / sizeof o.reserved[0]);
    if (in_.ConsumeIntegralInRange<int>(0, 7) == 0)
        o.reserved[in_.ConsumeIntegralInRange<int>(0, kReserved - 1)] = in_.ConsumeIntegral<int32_t>();
    *valid = (o.backend == QMMM_BACKEND_AUTO || o.backend == QMMM_BACKEND_CPU) && o.precision >= 0 &&
             o.precision <= 2 && o.device >= -1 && o.n_threads >= 0 && std::isfinite(o.cell_volume) &&
             o.cell_volume >= 0;
    return o;
}

void Api::field_create() {
    num_.reset();
    const int64_t nc = count(in_, 8), nn = count(in_, 4);
    std::vector<double> cx(fits(nc, 8) ? 3 * nc : 0), cq(fits(nc, 8) ? nc : 0), nx(fits(nn, 4) ? 3 * nn : 0),
        nz(fits(nn, 4) ? nn : 0);
    for (auto &v : cx) v = num_.any(6);
    for (auto &v : cq) v = num_.any(2);
    for (auto &v : nx) v = num_.any(6);
    for (auto &v : nz) v = num_.any(8);
    const double *pcx = array_or_null(in_, cx, nc, 8), *pcq = array_or_null(in_, cq, nc, 8);
    const double *pnx = array_or_null(in_, nx, nn, 4), *pnz = array_or_null(in_, nz, nn, 4);
    bool opt_valid = true;
    const bool use_opt = in_.ConsumeBool();
    qmmm_options opt = make_options(&opt_valid);
    if (!use_opt) opt_valid = true, qmmm_options_default(&opt);
    const bool out_null = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    qmmm_field h = reinterpret_cast<qmmm_field>(&fake_);
    const int s =
        CALL(qmmm_field_create(out_null ? nullptr : &h, nc, pcx, pcq, nn, pnx, pnz, use_opt ? &opt : nullptr));
    const bool valid = !out_null && nc >= 0 && nn >= 0 && (nc == 0 || (pcx && pcq)) && (nn == 0 || (pnx && pnz)) &&
                       read_finite(pcx, nc, 3) && read_finite(pcq, nc, 1) && read_finite(pnx, nn, 3) &&
                       read_finite(pnz, nn, 1) && opt_valid && (nc > 0 || nn > 0) &&  // an empty field is an error
                       charges_in_range(pcq, nc, opt.precision) && charges_in_range(pnz, nn, opt.precision) &&
                       fuzz::coords_in_reach(pcx, nc, opt.precision) && fuzz::coords_in_reach(pnx, nn, opt.precision);
    expect(s, valid, false, "qmmm_field_create");
    if (out_null) FUZZ_CHECK(s == QMMM_ERR_NULL_ARG, "qmmm_field_create(NULL, ...) gave %s", qmmm_status_string(s));
    if (s != QMMM_SUCCESS) {
        if (!out_null) FUZZ_CHECK(h == nullptr, "failed qmmm_field_create left *f set");
        return;
    }
    FUZZ_CHECK(h != nullptr, "qmmm_field_create succeeded with a NULL handle");
    Field f;
    f.h = h, f.nc = nc, f.nn = nn, f.cx = cx, f.cq = cq, f.nx = nx, f.nz = nz;
    f.precision = opt.precision, f.cell_volume = opt.cell_volume;
    f.sane = num_.sane(), f.modest = num_.modest();
    if (fields_.size() < 3)
        fields_.push_back(std::move(f));
    else
        FUZZ_CHECK(CALL(qmmm_field_destroy(h)) == QMMM_SUCCESS, "destroy a new field");
}

void Api::check_field_values(const Field &f, const std::vector<double> &p, const std::vector<double> &u,
                             const FieldOutcome &o, bool points_sane, bool points_modest) {
    const bool dbl = f.precision == QMMM_PRECISION_DOUBLE;
    if ((dbl && f.sane && points_sane) || (f.modest && points_modest))
        for (size_t i = 0; i < u.size(); ++i) FUZZ_CHECK(std::isfinite(u[i]), "u[%zu] = %g", i, u[i]);
    if (!(dbl && f.sane && points_sane && !o.ambiguous)) return;
    for (size_t i = 0; i < u.size(); ++i) {
        const long double err = std::fabs(u[i] - o.ref[i]);
        FUZZ_CHECK(err <= 1e-12L * o.norm[i] + 1e-300L, "point %zu (%.17g %.17g %.17g): u = %.17g, reference %.17Lg", i,
                   p[3 * i], p[3 * i + 1], p[3 * i + 2], u[i], o.ref[i]);
    }
    (void)p;
}

// The same points evaluated again (in reverse order, same count) and asynchronously give the same bits.
void Api::compare_eval(Field &f, const std::vector<double> &p, const std::vector<double> &u, const char *what) {
    const size_t n = u.size();
    std::vector<double> rp(p.size()), ru(n, kNaN);
    for (size_t i = 0; i < n; ++i) std::copy(&p[3 * i], &p[3 * i] + 3, &rp[3 * (n - 1 - i)]);
    FUZZ_CHECK(CALL(qmmm_field_eval(f.h, static_cast<int64_t>(n), rp.data(), ru.data())) == QMMM_SUCCESS,
               "%s: reversed batch failed", what);
    for (size_t i = 0; i < n; ++i)
        FUZZ_CHECK(std::memcmp(&u[i], &ru[n - 1 - i], sizeof(double)) == 0, "%s: point %zu: %.17g, reversed %.17g",
                   what, i, u[i], ru[n - 1 - i]);
}

void Api::field_eval() {
    Field *f = nullptr;
    const qmmm_field h = pick_field(&f);
    num_.reset();
    const int64_t n = count(in_, 6);
    std::vector<double> p = fits(n, 6) ? make_points(in_, num_, f, n) : std::vector<double>();
    std::vector<double> u(fits(n, 6) ? n : 0, kNaN);
    const double *pp = array_or_null(in_, p, n, 6);
    double *pu = const_cast<double *>(array_or_null(in_, u, n, 6));
    const int s = CALL(qmmm_field_eval(h, n, pp, pu));
    if (!f) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "eval on a dead handle gave %s", qmmm_status_string(s));
        return;
    }
    if (f->pending) {
        FUZZ_CHECK(s == QMMM_ERR_BUSY, "eval while pending gave %s", qmmm_status_string(s));
        return;
    }
    const bool args = n == 0 || (n > 0 && pp && pu && !num_.nonfinite);
    if (!args || n == 0) {
        expect(s, args, false, "qmmm_field_eval");
        return;
    }
    if (!fuzz::coords_in_reach(p.data(), n, f->precision)) {  // beyond what the precision squares: refused
        FUZZ_CHECK(s == QMMM_ERR_INVALID_ARG, "eval of a point beyond the precision's reach gave %s",
                   qmmm_status_string(s));
        return;
    }
    const FieldOutcome o = predict_field(*f, p);
    const bool exact = f->precision == QMMM_PRECISION_DOUBLE && f->sane && num_.sane() && !o.ambiguous;
    if (exact)
        FUZZ_CHECK(s == (o.singular ? QMMM_ERR_SINGULAR : QMMM_SUCCESS), "eval gave %s, expected %s: %s",
                   qmmm_status_string(s), o.singular ? "SINGULAR" : "SUCCESS", qmmm_error_message());
    else
        FUZZ_CHECK(s == QMMM_SUCCESS || s == QMMM_ERR_SINGULAR, "eval gave %s", qmmm_status_string(s));
    if (s != QMMM_SUCCESS) return;
    check_field_values(*f, p, u, o, num_.sane(), num_.modest());
    compare_eval(*f, p, u, "eval");
}

void Api::field_eval_async() {
    Field *f = nullptr;
    const qmmm_field h = pick_field(&f);
    num_.reset();
    const int64_t n = count(in_, 6);
    std::vector<double> p = fits(n, 6) ? make_points(in_, num_, f, n) : std::vector<double>();
    const bool points_null = in_.ConsumeIntegralInRange<int>(0, 11) == 0;
    std::vector<double> u_local(fits(n, 6) ? n : 0, kNaN);
    // A pending evaluation writes into the handle's own buffer, which outlives the call.
    const bool can_pend = f && !f->pending;
    std::vector<double> &u = can_pend ? f->pend_u : u_local;
    if (can_pend) u.assign(fits(n, 6) ? n : 0, kNaN);
    std::vector<double> copy = p;  // the library must copy xyz before returning: p is overwritten below
    const int s = CALL(
        qmmm_field_eval_async(h, n, fits(n, 6) && !points_null ? p.data() : nullptr, fits(n, 6) ? u.data() : nullptr));
    std::fill(p.begin(), p.end(), kNaN);
    if (!f) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "eval_async on a dead handle gave %s", qmmm_status_string(s));
        return;
    }
    if (f->pending) {
        FUZZ_CHECK(s == QMMM_ERR_BUSY, "eval_async while pending gave %s", qmmm_status_string(s));
        return;
    }
    const bool args = n == 0 || (fits(n, 6) && n > 0 && !points_null && !num_.nonfinite);
    if (!args || n == 0) {
        expect(s, args, false, "qmmm_field_eval_async");
        return;
    }
    if (!fuzz::coords_in_reach(copy.data(), n, f->precision)) {
        FUZZ_CHECK(s == QMMM_ERR_INVALID_ARG, "eval_async of a point beyond the precision's reach gave %s",
                   qmmm_status_string(s));
        return;
    }
    FUZZ_CHECK(s == QMMM_SUCCESS || s == QMMM_ERR_SINGULAR, "eval_async gave %s", qmmm_status_string(s));
    if (s == QMMM_SUCCESS) f->pending = true, f->pend_xyz = copy;
}

void Api::field_wait() {
    Field *f = nullptr;
    const qmmm_field h = pick_field(&f);
    const int s = CALL(qmmm_field_wait(h));
    if (!f) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "wait on a dead handle gave %s", qmmm_status_string(s));
        return;
    }
    if (!f->pending) {
        FUZZ_CHECK(s == QMMM_SUCCESS, "wait with nothing pending gave %s", qmmm_status_string(s));
        return;
    }
    f->pending = false;
    num_.reset();
    for (double v : f->pend_xyz) num_.note(v);
    const FieldOutcome o = predict_field(*f, f->pend_xyz);
    if (f->precision == QMMM_PRECISION_DOUBLE && f->sane && num_.sane() && !o.ambiguous)
        FUZZ_CHECK(s == (o.singular ? QMMM_ERR_SINGULAR : QMMM_SUCCESS), "wait gave %s", qmmm_status_string(s));
    else
        FUZZ_CHECK(s == QMMM_SUCCESS || s == QMMM_ERR_SINGULAR, "wait gave %s", qmmm_status_string(s));
    if (s != QMMM_SUCCESS) return;
    const std::vector<double> u = f->pend_u;
    check_field_values(*f, f->pend_xyz, u, o, num_.sane(), num_.modest());
    std::vector<double> again(u.size(), kNaN);  // the synchronous path gives the same bits
    FUZZ_CHECK(
        CALL(qmmm_field_eval(f->h, static_cast<int64_t>(u.size()), f->pend_xyz.data(), again.data())) == QMMM_SUCCESS,
        "eval after async");
    FUZZ_CHECK(std::memcmp(u.data(), again.data(), u.size() * sizeof(double)) == 0, "eval_async and eval differ");
}

void Api::field_query() {
    Field *f = nullptr;
    const qmmm_field h = pick_field(&f);
    int backend = -7, precision = -7, device = -7;
    int64_t nc = -7, nn = -7;
    const bool nulls = in_.ConsumeBool();
    int s = CALL(qmmm_field_backend(h, nulls ? nullptr : &backend, &precision, nulls ? nullptr : &device));
    FUZZ_CHECK(s == (f ? QMMM_SUCCESS : QMMM_ERR_BAD_HANDLE), "qmmm_field_backend gave %s", qmmm_status_string(s));
    s = CALL(qmmm_field_sizes(h, &nc, nulls ? nullptr : &nn));
    FUZZ_CHECK(s == (f ? QMMM_SUCCESS : QMMM_ERR_BAD_HANDLE), "qmmm_field_sizes gave %s", qmmm_status_string(s));
    if (!f) return;
    FUZZ_CHECK(precision == f->precision && nc == f->nc, "precision %d (asked %d), n_cells %lld", precision,
               f->precision, static_cast<long long>(nc));
    if (!nulls)
        FUZZ_CHECK(backend == QMMM_BACKEND_CPU && device == -1 && nn == f->nn, "backend %d device %d", backend, device);
}

void Api::field_destroy() {
    Field *f = nullptr;
    const qmmm_field h = pick_field(&f);
    const int s = CALL(qmmm_field_destroy(h));
    FUZZ_CHECK(s == (f ? QMMM_SUCCESS : QMMM_ERR_BAD_HANDLE), "destroy gave %s", qmmm_status_string(s));
    if (!f) return;
    stale_fields_.push_back(h);
    fields_.erase(fields_.begin() + (f - fields_.data()));
}

// Environments: argument errors, and a small cube written from the input, read back into a field.
void Api::cube_env() {
    static fuzz::MemFile file("fuzz_capi_cube");
    num_.reset();
    const int nat = static_cast<int>(in_.ConsumeIntegralInRange<int>(0, 2));
    const int sign = in_.ConsumeBool() ? 1 : -1;  // negative counts: Angstrom
    int n[3];
    double axis[3][3], origin[3];
    for (int d = 0; d < 3; ++d) origin[d] = num_.any(5);
    for (int a = 0; a < 3; ++a) {
        n[a] = in_.ConsumeIntegralInRange<int>(1, 3);
        for (int d = 0; d < 3; ++d)
            axis[a][d] = d == a ? num_.positive(0.05, 1.0) : (in_.ConsumeBool() ? 0.0 : num_.any(0.3));
    }
    std::string text = "fuzz cube\nwritten by fuzz_capi\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%d %.17g %.17g %.17g\n", nat, origin[0], origin[1], origin[2]);
    text += buf;
    for (int a = 0; a < 3; ++a) {
        std::snprintf(buf, sizeof buf, "%d %.17g %.17g %.17g\n", sign * n[a], axis[a][0], axis[a][1], axis[a][2]);
        text += buf;
    }
    for (int i = 0; i < nat; ++i) {
        const double z = in_.ConsumeIntegralInRange<int>(0, 10), c = in_.ConsumeBool() ? 0.0 : num_.any(8);
        std::snprintf(buf, sizeof buf, "%.0f %.17g %.17g %.17g %.17g\n", z, c, num_.any(5), num_.any(5), num_.any(5));
        text += buf;
    }
    for (int i = 0; i < n[0] * n[1] * n[2]; ++i) {
        std::snprintf(buf, sizeof buf, "%.17g%c",
                      in_.ConsumeBool() ? num_.any(1.0) : in_.ConsumeFloatingPointInRange(0.0, 1.0),
                      i % 6 == 5 ? '\n' : ' ');
        text += buf;
    }
    const std::string &path = file.write(reinterpret_cast<const uint8_t *>(text.data()), text.size());

    qmmm_env env = nullptr;
    FUZZ_CHECK(CALL(qmmm_env_create(&env)) == QMMM_SUCCESS && env, "qmmm_env_create");
    static const double kOddThresholds[] = {kNaN, kInf, -kInf, 1e300, 0.0};
    const double threshold = in_.ConsumeBool() ? -1.0
                             : in_.ConsumeIntegralInRange<int>(0, 7)
                                 ? in_.ConsumeFloatingPointInRange<double>(-0.5, 0.5)
                                 : kOddThresholds[in_.ConsumeIntegralInRange<int>(0, 4)];
    const char *p = in_.ConsumeIntegralInRange<int>(0, 7) == 0 ? nullptr : path.c_str();
    int s = CALL(qmmm_env_add_cube(env, p, threshold));
    if (!p) FUZZ_CHECK(s == QMMM_ERR_NULL_ARG, "add_cube(NULL path) gave %s", qmmm_status_string(s));
    if (!std::isfinite(threshold) && p)
        FUZZ_CHECK(s == QMMM_ERR_NONFINITE, "add_cube(threshold %g) gave %s", threshold, qmmm_status_string(s));
    // A cube of moderate finite numbers with independent axes must be read.
    const double det = axis[0][0] * (axis[1][1] * axis[2][2] - axis[1][2] * axis[2][1]) -
                       axis[0][1] * (axis[1][0] * axis[2][2] - axis[1][2] * axis[2][0]) +
                       axis[0][2] * (axis[1][0] * axis[2][1] - axis[1][1] * axis[2][0]);
    const double len = std::hypot(axis[0][0], axis[0][1], axis[0][2]) * std::hypot(axis[1][0], axis[1][1], axis[1][2]) *
                       std::hypot(axis[2][0], axis[2][1], axis[2][2]);
    if (p && std::isfinite(threshold) && num_.within(1e-50, 1e50) && std::fabs(det) > 1e-12 * len)
        FUZZ_CHECK(s == QMMM_SUCCESS, "a valid cube was not read: %s\n%s", qmmm_error_message(), text.c_str());
    int64_t nc = -1, nn = -1;
    double dv = -1;
    FUZZ_CHECK(CALL(qmmm_env_sizes(env, &nc, &nn, &dv)) == QMMM_SUCCESS, "env_sizes");
    if (s != QMMM_SUCCESS)
        FUZZ_CHECK(nc == 0 && nn == 0 && dv == 0, "a failed add_cube changed the environment");
    else
        FUZZ_CHECK(nn == nat && nc <= n[0] * n[1] * n[2] && std::isfinite(dv) && dv > 0,
                   "env: %lld cells %lld nuclei dV %g", static_cast<long long>(nc), static_cast<long long>(nn), dv);
    FUZZ_CHECK(CALL(qmmm_env_copy(env, nullptr, nullptr, nullptr, nullptr)) == QMMM_SUCCESS, "env_copy(NULLs)");
    FUZZ_CHECK(CALL(qmmm_env_sizes(env, nullptr, nullptr, nullptr)) == QMMM_SUCCESS, "env_sizes(NULLs)");

    qmmm_field f = reinterpret_cast<qmmm_field>(&fake_);
    bool opt_valid = true;
    qmmm_options opt = make_options(&opt_valid);
    const bool use_opt = in_.ConsumeBool();
    s = CALL(qmmm_field_create_from_env(&f, env, use_opt ? &opt : nullptr));
    const int env_prec = use_opt ? opt.precision : QMMM_PRECISION_DOUBLE;
    if (s == QMMM_SUCCESS) {
        FUZZ_CHECK(!use_opt || opt_valid, "field from env accepted invalid options");
        Field fl;
        fl.h = f, fl.nc = nc, fl.nn = nn;
        fl.cx.resize(3 * nc), fl.cq.resize(nc), fl.nx.resize(3 * nn), fl.nz.resize(nn);
        FUZZ_CHECK(CALL(qmmm_env_copy(env, fl.cx.data(), fl.cq.data(), fl.nx.data(), fl.nz.data())) == QMMM_SUCCESS,
                   "copy");
        fl.precision = use_opt ? opt.precision : QMMM_PRECISION_DOUBLE;
        fl.cell_volume = use_opt && opt.cell_volume != 0 ? opt.cell_volume : dv;
        Numbers check{in_};
        FUZZ_CHECK(fuzz::coords_in_reach(fl.cx.data(), nc, env_prec) && fuzz::coords_in_reach(fl.nx.data(), nn, env_prec),
                   "field from env accepted coordinates beyond the precision's reach");
        for (const auto *v : {&fl.cx, &fl.cq, &fl.nx, &fl.nz})
            for (double x : *v) check.note(x);
        fl.sane = check.sane(), fl.modest = check.modest();
        if (fields_.size() < 3)
            fields_.push_back(std::move(fl));
        else
            FUZZ_CHECK(CALL(qmmm_field_destroy(f)) == QMMM_SUCCESS, "destroy");
    } else {
        FUZZ_CHECK(f == nullptr, "failed qmmm_field_create_from_env left *f set");
        const size_t mc = static_cast<size_t>(std::max<int64_t>(nc, 0)), mn = static_cast<size_t>(std::max<int64_t>(nn, 0));
        std::vector<double> cx(3 * mc), cq(mc), nx(3 * mn), nz(mn);
        FUZZ_CHECK(CALL(qmmm_env_copy(env, cx.data(), cq.data(), nx.data(), nz.data())) == QMMM_SUCCESS, "env_copy");
        const int prec = env_prec;
        const bool in_range = charges_in_range(cq.data(), nc, prec) && charges_in_range(nz.data(), nn, prec) &&
                              fuzz::coords_in_reach(cx.data(), nc, prec) && fuzz::coords_in_reach(nx.data(), nn, prec);
        FUZZ_CHECK((use_opt && !opt_valid) || (nc == 0 && nn == 0) || !in_range,
                   "field from a valid environment failed: %s", qmmm_error_message());
    }
    FUZZ_CHECK(CALL(qmmm_env_destroy(env)) == QMMM_SUCCESS, "env_destroy");
    FUZZ_CHECK(CALL(qmmm_env_destroy(env)) == QMMM_ERR_BAD_HANDLE, "env destroyed twice");
    FUZZ_CHECK(CALL(qmmm_env_sizes(env, &nc, &nn, &dv)) == QMMM_ERR_BAD_HANDLE, "sizes of a destroyed env");

    // One-call forms with bad arguments.
    const char *paths[2] = {path.c_str(), in_.ConsumeBool() ? nullptr : "/nonexistent/qmmm-fuzz.cube"};
    const int n_files = in_.ConsumeIntegralInRange<int>(-1, 2);
    f = reinterpret_cast<qmmm_field>(&fake_);
    s = CALL(qmmm_field_create_from_cubes(&f, n_files, in_.ConsumeBool() ? paths : nullptr, threshold, nullptr));
    if (s == QMMM_SUCCESS) {
        FUZZ_CHECK(n_files == 1, "create_from_cubes accepted %d files with a bad second path", n_files);
        FUZZ_CHECK(CALL(qmmm_field_destroy(f)) == QMMM_SUCCESS, "destroy");
    } else {
        FUZZ_CHECK(f == nullptr, "failed create_from_cubes left *f set");
    }
    qmmm_env e2 = reinterpret_cast<qmmm_env>(&fake_);
    s = CALL(qmmm_cube_read(&e2, paths[1], threshold));
    FUZZ_CHECK(s != QMMM_SUCCESS && e2 == nullptr, "cube_read of a missing file");
    FUZZ_CHECK(CALL(qmmm_cube_read(nullptr, path.c_str(), 0.0)) == QMMM_ERR_NULL_ARG, "cube_read(NULL)");
    FUZZ_CHECK(CALL(qmmm_env_create(nullptr)) == QMMM_ERR_NULL_ARG, "env_create(NULL)");
    FUZZ_CHECK(CALL(qmmm_field_create_from_env(nullptr, env, nullptr)) == QMMM_ERR_NULL_ARG, "from_env(NULL)");
}

// ---- DCS ----

bool dcs_options(Provider &in, qmmm_dcs_options &o, bool *valid, bool *cancel) {
    qmmm_dcs_options_default(&o);
    *valid = true, *cancel = false;
    if (in.ConsumeIntegralInRange<int>(0, 3) == 0) return false;  // NULL
    static const int kBackends[] = {QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, QMMM_BACKEND_CUDA, -1, 3};
    o.backend = kBackends[in.ConsumeIntegralInRange<int>(0, 5)];
    o.precision = in.ConsumeIntegralInRange<int>(-1, 3);
    o.n_threads = in.ConsumeIntegralInRange<int>(-1, 2);
    o.n_devices = in.ConsumeIntegralInRange<int>(-1, QMMM_DCS_MAX_DEVICES + 1);
    for (auto &d : o.devices) d = in.ConsumeIntegralInRange<int>(-1, 2);
    // on_atom from devices[0..1], which a CPU map never reads (so the committed inputs decode as before): mostly
    // ERROR, OTHERS 3 in 16, now and then a value out of range.
    o.on_atom = o.devices[0] != 2 ? QMMM_DCS_ON_ATOM_ERROR : o.devices[1] == 2 ? 2 : QMMM_DCS_ON_ATOM_OTHERS;
    o.kernel = in.ConsumeIntegralInRange<int>(0, 7) == 0 ? in.ConsumeIntegralInRange<int>(-1, 3) : QMMM_DCS_KERNEL_FAST;
    static const double kOddBytes[] = {kNaN, kInf, -1.0, 1e300};
    o.max_device_bytes = in.ConsumeBool()   ? 0.0
                         : in.ConsumeBool() ? 1e9
                                            : kOddBytes[in.ConsumeIntegralInRange<int>(0, 3)];
    switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0:
            o.progress = [](int64_t done, int64_t total, void *) -> int {
                FUZZ_CHECK(done >= 0 && done <= total, "progress %lld of %lld", static_cast<long long>(done),
                           static_cast<long long>(total));
                return 0;
            };
            break;
        case 1:
            o.progress = [](int64_t, int64_t, void *) -> int { return 1; };
            *cancel = true;
            break;
        default: break;
    }
    *valid = (o.backend == QMMM_BACKEND_AUTO || o.backend == QMMM_BACKEND_CPU) && o.precision >= 0 &&
             o.precision <= 2 && o.n_threads >= 0 && o.kernel == QMMM_DCS_KERNEL_FAST &&
             (o.on_atom == QMMM_DCS_ON_ATOM_ERROR || o.on_atom == QMMM_DCS_ON_ATOM_OTHERS) &&
             std::isfinite(o.max_device_bytes) && o.max_device_bytes >= 0;
    return true;
}

// A lattice with 1..4 points per axis, or now and then a bad one.
qmmm_dcs_lattice make_lattice(Provider &in, Numbers &num, bool *valid, bool *small) {
    qmmm_dcs_lattice l;
    *valid = true, *small = true;
    for (int d = 0; d < 3; ++d) {
        l.origin[d] =
            in.ConsumeIntegralInRange<int>(0, 7) ? num.note(in.ConsumeFloatingPointInRange<double>(-4, 4)) : num.any(4);
        l.spacing[d] = num.positive(0.05, 2.0);
        l.count[d] = in.ConsumeIntegralInRange<int>(0, 15) ? in.ConsumeIntegralInRange<int64_t>(1, 4) : count(in, 4);
        *valid =
            *valid && std::isfinite(l.origin[d]) && std::isfinite(l.spacing[d]) && l.spacing[d] > 0 && l.count[d] >= 1;
        *small = *small && l.count[d] >= 1 && l.count[d] <= 4;
    }
    return l;
}

double lattice_point(const qmmm_dcs_lattice &l, int64_t p, int d) {
    const int64_t idx[3] = {p % l.count[0], (p / l.count[0]) % l.count[1], p / (l.count[0] * l.count[1])};
    return l.origin[d] + static_cast<double>(idx[d]) * l.spacing[d];
}

void Api::dcs_map() {
    num_.reset();
    const int64_t n = count(in_, 5);
    std::vector<double> xyz(fits(n, 5) ? 3 * n : 0), q(fits(n, 5) ? n : 0);
    for (auto &v : xyz)
        v = in_.ConsumeIntegralInRange<int>(0, 3) ? num_.note(in_.ConsumeFloatingPointInRange<double>(-5, 5))
                                                  : num_.any(5);
    for (auto &v : q) v = num_.any(2);
    const double *px = array_or_null(in_, xyz, n, 5), *pq = array_or_null(in_, q, n, 5);
    bool lat_valid, small;
    qmmm_dcs_lattice lat = make_lattice(in_, num_, &lat_valid, &small);
    const bool lat_null = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const int64_t total = small ? lat.count[0] * lat.count[1] * lat.count[2] : 0;
    std::vector<double> map(total, kNaN);
    const bool map_null = !small || in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    qmmm_dcs_options opt;
    bool opt_valid, cancel;
    const bool use_opt = dcs_options(in_, opt, &opt_valid, &cancel);
    qmmm_dcs_stats stats{};
    const bool stats_null = in_.ConsumeBool();
    const int s = CALL(qmmm_dcs_map(n, px, pq, lat_null ? nullptr : &lat, map_null ? nullptr : map.data(),
                                    use_opt ? &opt : nullptr, stats_null ? nullptr : &stats));
    const bool args = n >= 0 && (n == 0 || (px && pq)) && read_finite(px, n, 3) && read_finite(pq, n, 1) && !lat_null &&
                      lat_valid && small && !map_null && (!use_opt || opt_valid);
    // Singular lattice points, as documented: within 1e-10 bohr of an atom. The library finds them in its own
    // arithmetic (rounding ~1e-14 of the magnitudes involved), so only clear cases are predicted.
    bool singular = false, ambiguous = false;
    if (args)
        for (int64_t a = 0; a < n; ++a)
            for (int64_t p = 0; p < total; ++p) {
                const double c[3] = {lattice_point(lat, p, 0), lattice_point(lat, p, 1), lattice_point(lat, p, 2)};
                double mag = 0;
                for (int d = 0; d < 3; ++d)
                    mag = std::max({mag, std::fabs(c[d]), std::fabs(xyz[3 * a + d]), std::fabs(lat.origin[d])});
                const double dist = std::sqrt(dist2(c, &xyz[3 * a])), err = 1e-14 * mag;
                if (dist + err < 1e-11)
                    singular = true;
                else if (!(dist - err > 1e-9))
                    ambiguous = true;
            }
    const int precision = use_opt ? opt.precision : QMMM_PRECISION_SINGLE;
    const int on_atom = use_opt ? opt.on_atom : QMMM_DCS_ON_ATOM_ERROR;
    // The documented magnitude limits (fuzz_limits.hpp); a point on an atom is SINGULAR only with on_atom ERROR.
    const fuzz::DcsLimit limit = args ? fuzz::dcs_limits(n, xyz.data(), q.data(), lat, precision, on_atom)
                                      : fuzz::kDcsWithin;
    if (limit == fuzz::kDcsEither) ambiguous = true;
    const bool valid = args && limit != fuzz::kDcsBeyond && !(singular && on_atom == QMMM_DCS_ON_ATOM_ERROR);
    if (tracing())
        std::fprintf(stderr, "  dcs_map: args %d limits %d singular %d ambiguous %d on_atom %d -> valid %d\n", args,
                     static_cast<int>(limit), singular, ambiguous, on_atom, valid);
    expect(s, valid, ambiguous || (use_opt && cancel && n > 0), "qmmm_dcs_map");
    if (use_opt && cancel && n > 0 && valid && !ambiguous)
        FUZZ_CHECK(s == QMMM_ERR_INVALID_ARG, "a cancelling progress callback gave %s", qmmm_status_string(s));
    if (s != QMMM_SUCCESS) return;
    FUZZ_CHECK(args, "qmmm_dcs_map accepted bad arguments");
    if (!stats_null)
        FUZZ_CHECK(stats.backend == QMMM_BACKEND_CPU && stats.seconds >= 0 && stats.n_workers >= 1,
                   "stats: backend %d, %g s, %d workers", stats.backend, stats.seconds, stats.n_workers);
    const bool dbl = precision == QMMM_PRECISION_DOUBLE;
    // Every map that succeeds is finite, whatever the precision (the limits refuse the rest; points near an atom are
    // recomputed in double).
    for (int64_t p = 0; p < total; ++p)
        FUZZ_CHECK(std::isfinite(map[p]), "map[%lld] = %g (precision %d)", static_cast<long long>(p), map[p], precision);
    if (dbl && num_.sane() && !ambiguous)
        for (int64_t p = 0; p < total; ++p) {
            // The header's accuracy: 1e-12 of sum |terms| for the sum, plus each pair term's rounding,
            // u (8 + (2 |p - origin|_1 + |r_a - origin|_1) / r_a) relative (qmmm_accel_dcs.h, "All").
            long double ref = 0, norm = 0, term_bound = 0, l1p = 0;
            for (int d = 0; d < 3; ++d) l1p += std::fabs((long double)lattice_point(lat, p, d) - lat.origin[d]);
            for (int64_t a = 0; a < n; ++a) {
                long double r2 = 0, l1a = 0;
                for (int d = 0; d < 3; ++d) {
                    const long double dd = (long double)lattice_point(lat, p, d) - xyz[3 * a + d];
                    r2 += dd * dd, l1a += std::fabs((long double)xyz[3 * a + d] - lat.origin[d]);
                }
                if (r2 < kSingular2) continue;  // on the atom: left out (on_atom OTHERS; ERROR was SINGULAR)
                const long double r = std::sqrt(r2), t = std::fabs(q[a]) / r;
                ref += q[a] / r, norm += t;
                term_bound += t * 0x1p-53L * (8 + (2 * l1p + l1a) / r);
            }
            FUZZ_CHECK(std::fabs(map[p] - ref) <= 1e-12L * norm + 2 * term_bound + 1e-300L,
                       "map[%lld] = %.17g, reference %.17Lg", static_cast<long long>(p), map[p], ref);
        }
    dcs_.ok = true, dcs_.xyz = xyz, dcs_.q = q, dcs_.map = map, dcs_.lat = lat;
}

void Api::dcs_place_ions() {
    num_.reset();
    Dcs d = dcs_;
    if (!d.ok || in_.ConsumeIntegralInRange<int>(0, 3) == 0) {  // a made-up map
        bool lat_valid, small;
        d.lat = make_lattice(in_, num_, &lat_valid, &small);
        if (!small) d.lat.count[0] = d.lat.count[1] = d.lat.count[2] = 1;
        const int64_t n = in_.ConsumeIntegralInRange<int64_t>(0, 3);
        d.xyz.resize(3 * n), d.q.resize(n);
        for (auto &v : d.xyz) v = num_.note(in_.ConsumeFloatingPointInRange<double>(-5, 5));
        for (auto &v : d.q) v = num_.any(2);
        d.map.resize(d.lat.count[0] * d.lat.count[1] * d.lat.count[2]);
        for (auto &v : d.map)
            v = in_.ConsumeIntegralInRange<int>(0, 7) ? num_.note(in_.ConsumeFloatingPointInRange<double>(-3, 3))
                                                      : num_.any(3);
    } else {
        for (const auto *v : {&d.xyz, &d.q, &d.map})
            for (double x : *v) num_.note(x);
        for (int k = 0; k < 3; ++k) num_.note(d.lat.origin[k]), num_.note(d.lat.spacing[k]);
    }
    const int64_t n_atoms = static_cast<int64_t>(d.q.size());
    const int64_t total = d.lat.count[0] * d.lat.count[1] * d.lat.count[2];
    const int64_t n_ions = count(in_, 4);
    std::vector<double> ion_xyz(fits(n_ions, 4) ? 3 * n_ions : 0, kNaN), energy(fits(n_ions, 4) ? n_ions : 0, kNaN);
    double *pix = const_cast<double *>(array_or_null(in_, ion_xyz, n_ions, 4));
    double *pen = in_.ConsumeBool() ? nullptr : energy.data();
    if (!fits(n_ions, 4)) pen = nullptr;
    const double charge = in_.ConsumeIntegralInRange<int>(0, 3) ? (in_.ConsumeBool() ? 1.0 : -1.0) : num_.any(2);
    const double dmin_atoms =
        in_.ConsumeIntegralInRange<int>(0, 3) ? in_.ConsumeFloatingPointInRange<double>(0, 3) : num_.any(3);
    const double dmin_ions =
        in_.ConsumeIntegralInRange<int>(0, 3) ? in_.ConsumeFloatingPointInRange<double>(0, 3) : num_.any(3);
    num_.note(charge), num_.note(dmin_atoms), num_.note(dmin_ions);
    bool lat_valid = true;
    for (int k = 0; k < 3; ++k)
        lat_valid =
            lat_valid && std::isfinite(d.lat.origin[k]) && std::isfinite(d.lat.spacing[k]) && d.lat.spacing[k] > 0;
    const bool map_null = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const std::vector<double> map_before = d.map;
    const int s = CALL(qmmm_dcs_place_ions(n_atoms, d.xyz.data(), d.q.data(), &d.lat, map_null ? nullptr : d.map.data(),
                                           n_ions, charge, dmin_atoms, dmin_ions, pix, pen));
    if (tracing()) {
        std::fprintf(stderr,
                     "  place_ions: %lld atoms, lattice o %.17g %.17g %.17g h %.17g %.17g %.17g n %lld %lld %lld, "
                     "%lld ions q %.17g dmin %.17g %.17g -> %s\n",
                     (long long)n_atoms, d.lat.origin[0], d.lat.origin[1], d.lat.origin[2], d.lat.spacing[0],
                     d.lat.spacing[1], d.lat.spacing[2], (long long)d.lat.count[0], (long long)d.lat.count[1],
                     (long long)d.lat.count[2], (long long)n_ions, charge, dmin_atoms, dmin_ions,
                     qmmm_status_string(s));
        for (int64_t k = 0; s == QMMM_SUCCESS && k < n_ions; ++k)
            std::fprintf(stderr, "  ion %lld: %.17g %.17g %.17g\n", (long long)k, ion_xyz[3 * k], ion_xyz[3 * k + 1],
                         ion_xyz[3 * k + 2]);
    }
    const bool valid = lat_valid && !map_null && fits(n_ions, 4) && (n_ions == 0 || pix) && std::isfinite(charge) &&
                       charge != 0 && std::isfinite(dmin_atoms) && dmin_atoms >= 0 && std::isfinite(dmin_ions) &&
                       dmin_ions >= 0 && fuzz::all_finite(d.xyz.data(), d.xyz.size()) &&
                       fuzz::all_finite(d.q.data(), d.q.size()) &&
                       fuzz::all_finite(map_before.data(), map_before.size());
    if (!valid) {
        FUZZ_CHECK(s != QMMM_SUCCESS, "place_ions accepted invalid arguments");
        return;
    }
    FUZZ_CHECK(s == QMMM_SUCCESS || s == QMMM_ERR_INVALID_ARG, "place_ions gave %s", qmmm_status_string(s));
    if (s != QMMM_SUCCESS) return;
    // Every ion on a lattice point; with moderate numbers (lattice points distinct in double) also on a point no
    // earlier ion took, at the requested distances.
    const bool moderate = num_.within(1e-6, 1e6);
    std::vector<int64_t> taken;
    for (int64_t k = 0; k < n_ions; ++k) {
        const double *c = &ion_xyz[3 * k];
        int64_t at = -1;
        for (int64_t p = 0; p < total && at < 0; ++p)
            if (lattice_point(d.lat, p, 0) == c[0] && lattice_point(d.lat, p, 1) == c[1] &&
                lattice_point(d.lat, p, 2) == c[2])
                at = p;
        FUZZ_CHECK(at >= 0, "ion %lld (%.17g %.17g %.17g) is not on a lattice point", static_cast<long long>(k), c[0],
                   c[1], c[2]);
        taken.push_back(at);
        if (!moderate) continue;
        FUZZ_CHECK(std::find(taken.begin(), taken.end() - 1, at) == taken.end() - 1, "ion %lld on a taken point",
                   static_cast<long long>(k));
        for (int64_t a = 0; a < n_atoms; ++a) {
            const double dx = c[0] - d.xyz[3 * a], dy = c[1] - d.xyz[3 * a + 1], dz = c[2] - d.xyz[3 * a + 2];
            FUZZ_CHECK(!(dx * dx + dy * dy + dz * dz < dmin_atoms * dmin_atoms), "ion %lld too close to atom %lld",
                       static_cast<long long>(k), static_cast<long long>(a));
        }
        for (int64_t j = 0; j < k; ++j) {
            const double dx = c[0] - ion_xyz[3 * j], dy = c[1] - ion_xyz[3 * j + 1], dz = c[2] - ion_xyz[3 * j + 2];
            FUZZ_CHECK(!(dx * dx + dy * dy + dz * dz < dmin_ions * dmin_ions), "ion %lld too close to ion %lld",
                       static_cast<long long>(k), static_cast<long long>(j));
        }
        if (pen) FUZZ_CHECK(std::isfinite(energy[k]), "ion energy %g", energy[k]);
    }
    if (moderate && n_ions > 0 && pen)
        FUZZ_CHECK(energy[0] == charge * map_before[taken[0]], "first ion's energy %.17g is not q * map", energy[0]);
}

// ---- RDF ----

void Api::rdf_create() {
    num_.reset();
    double r_min = in_.ConsumeIntegralInRange<int>(0, 3) ? 0.0 : num_.any(2);
    double r_max =
        in_.ConsumeIntegralInRange<int>(0, 3) ? in_.ConsumeFloatingPointInRange<double>(0.1, 6) : num_.any(6);
    int32_t n_bins = in_.ConsumeIntegralInRange<int>(0, 15)
                         ? in_.ConsumeIntegralInRange<int32_t>(1, 64)
                         : (in_.ConsumeBool() ? in_.ConsumeIntegral<int32_t>() : (1 << 24) + 1);
    qmmm_rdf_options o;
    qmmm_rdf_options_default(&o);
    const bool use_opt = in_.ConsumeBool();
    if (use_opt) {
        static const int kBackends[] = {
            QMMM_BACKEND_CPU, QMMM_BACKEND_AUTO, QMMM_BACKEND_CPU, QMMM_BACKEND_CUDA, -1, 3};
        o.backend = kBackends[in_.ConsumeIntegralInRange<int>(0, 5)];
        o.n_threads = in_.ConsumeIntegralInRange<int>(-1, 2);
        o.method = in_.ConsumeIntegralInRange<int>(-1, 3);
        o.kernel =
            in_.ConsumeIntegralInRange<int>(0, 7) ? QMMM_RDF_KERNEL_FAST : in_.ConsumeIntegralInRange<int>(-1, 2);
        o.n_devices = in_.ConsumeIntegralInRange<int>(-1, QMMM_RDF_MAX_DEVICES + 1);
    }
    qmmm_rdf h = reinterpret_cast<qmmm_rdf>(&fake_);
    const bool out_null = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const int s = CALL(qmmm_rdf_create(out_null ? nullptr : &h, r_min, r_max, n_bins, use_opt ? &o : nullptr));
    const bool valid = !out_null && std::isfinite(r_min) && std::isfinite(r_max) && r_min >= 0 && r_max > r_min &&
                       fuzz::rdf_rmax_in_range(r_max) && n_bins >= 1 && n_bins <= (1 << 24) &&
                       (o.backend == QMMM_BACKEND_AUTO || o.backend == QMMM_BACKEND_CPU) && o.n_threads >= 0 &&
                       o.method >= 0 && o.method <= 2 && o.kernel == QMMM_RDF_KERNEL_FAST;
    expect(s, valid, false, "qmmm_rdf_create");
    if (s != QMMM_SUCCESS) {
        if (!out_null) FUZZ_CHECK(h == nullptr, "failed qmmm_rdf_create left *h set");
        return;
    }
    if (rdf_) {  // one at a time: the new one replaces the old
        FUZZ_CHECK(CALL(qmmm_rdf_destroy(rdf_)) == QMMM_SUCCESS, "destroy");
        stale_rdf_ = rdf_;
    }
    rdf_ = h, r_min_ = r_min, r_max_ = r_max, n_bins_ = n_bins, have_sel_ = false, frames_ = 0, ref_ok_ = true;
    method_ = o.method;
    hist_lo_.assign(n_bins, 0), hist_hi_.assign(n_bins, 0);
}

void Api::rdf_selections() {
    bool live;
    const qmmm_rdf h = pick_rdf(&live);
    std::vector<int64_t> mol_of(8);  // molecule ids follow atom ids, as in any real system
    for (auto &m : mol_of) m = in_.ConsumeIntegralInRange<int64_t>(-2, 3);
    int s;
    bool valid, identical;
    std::vector<int64_t> k1, k2;
    constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
    if (in_.ConsumeBool()) {
        const int64_t n = selection_count(in_, 6);
        std::vector<int64_t> mol(fits(n, 6) ? n : 0);
        for (auto &m : mol) m = mol_of[in_.ConsumeIntegralInRange<int>(0, 7)];
        const int64_t *pm = in_.ConsumeBool() && fits(n, 6) ? mol.data() : nullptr;
        s = CALL(qmmm_rdf_set_selection_self(h, n, pm));
        valid = live && n >= 1 && fits(n, 6), identical = true;
        for (int64_t i = 0; i < (valid ? n : 0); ++i) k1.push_back(pm ? mol[i] : i);
    } else {
        const int64_t n1 = selection_count(in_, 6), n2 = selection_count(in_, 6);
        std::vector<int64_t> id1(fits(n1, 6) ? n1 : 0), id2(fits(n2, 6) ? n2 : 0), m1(id1.size()), m2(id2.size());
        for (auto &v : id1) v = in_.ConsumeIntegralInRange<int64_t>(0, 7);
        if (in_.ConsumeBool() && n1 == n2)
            id2 = id1;  // identical selections
        else
            for (auto &v : id2) v = in_.ConsumeIntegralInRange<int64_t>(0, 7);
        for (size_t i = 0; i < id1.size(); ++i) m1[i] = mol_of[id1[i]];
        for (size_t i = 0; i < id2.size(); ++i) m2[i] = mol_of[id2[i]];
        const int ids = in_.ConsumeIntegralInRange<int>(0, 3), mols = in_.ConsumeIntegralInRange<int>(0, 3);
        // 0: both NULL, 1: both given, 2-3: one NULL (an error)
        const int64_t *p1 = ids >= 1 && ids != 3 && fits(n1, 6) ? id1.data() : nullptr;
        const int64_t *p2 = ids >= 1 && ids != 2 && fits(n2, 6) ? id2.data() : nullptr;
        const int64_t *q1 = mols >= 1 && mols != 3 && fits(n1, 6) ? m1.data() : nullptr;
        const int64_t *q2 = mols >= 1 && mols != 2 && fits(n2, 6) ? m2.data() : nullptr;
        s = CALL(qmmm_rdf_set_selections(h, n1, p1, q1, n2, p2, q2));
        valid = live && n1 >= 1 && n2 >= 1 && fits(n1, 6) && fits(n2, 6) && !p1 == !p2 && !q1 == !q2;
        identical = p1 && p2 && n1 == n2 && id1 == id2;
        if (valid) {
            for (int64_t i = 0; i < n1; ++i) k1.push_back(q1 ? m1[i] : p1 ? id1[i] : kNone);
            if (!identical)
                for (int64_t i = 0; i < n2; ++i) k2.push_back(q2 ? m2[i] : p2 ? id2[i] : kNone + 1);
        }
    }
    if (!live) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "selections on a dead handle gave %s", qmmm_status_string(s));
        return;
    }
    // Every pair excluded is an error too: count the pairs.
    double pairs = 0;
    if (valid) {
        if (identical) {
            for (size_t i = 0; i < k1.size(); ++i)
                for (size_t j = i + 1; j < k1.size(); ++j) pairs += k1[i] != k1[j];
        } else {
            for (int64_t a : k1)
                for (int64_t b : k2) pairs += a != b;
        }
    }
    expect(s, valid && pairs > 0, false, "rdf selections");
    have_sel_ = false;  // a failed call clears the selections too (set_selections resets have_sel first)
    if (s != QMMM_SUCCESS) return;
    have_sel_ = true, identical_ = identical, key1_ = k1, key2_ = k2, frames_ = 0, ref_ok_ = true;
    std::fill(hist_lo_.begin(), hist_lo_.end(), 0), std::fill(hist_hi_.begin(), hist_hi_.end(), 0);
}

// A box: a cube, a triclinic cell, or anything.
void make_box(Provider &in, Numbers &num, double *box) {
    const int kind = in.ConsumeIntegralInRange<int>(0, 7);
    std::fill(box, box + 9, 0.0);
    if (kind <= 3) {
        const double l = num.note(in.ConsumeFloatingPointInRange<double>(2, 20));
        box[0] = box[4] = box[8] = l;
    } else if (kind <= 5) {
        box[0] = num.note(in.ConsumeFloatingPointInRange<double>(2, 20));
        box[4] = num.note(in.ConsumeFloatingPointInRange<double>(2, 20));
        box[8] = num.note(in.ConsumeFloatingPointInRange<double>(2, 20));
        box[3] = num.note(in.ConsumeFloatingPointInRange<double>(-0.5, 0.5) * box[0]);
        box[6] = num.note(in.ConsumeFloatingPointInRange<double>(-0.5, 0.5) * box[0]);
        box[7] = num.note(in.ConsumeFloatingPointInRange<double>(-0.5, 0.5) * box[4]);
    } else {
        for (int i = 0; i < 9; ++i) box[i] = num.any(10);
    }
}

// The reference: each pair's minimum-image distance in double; a pair within tol of a bin edge may land on
// either side, so it raises the possible count of both bins but the certain count of neither.
void reference_counts(const double *box, const std::vector<double> &x1, const std::vector<double> &x2,
                      const std::vector<int64_t> &k1, const std::vector<int64_t> &k2, bool identical, double r_min,
                      double r_max, int32_t n_bins, std::vector<int64_t> &lo, std::vector<int64_t> &hi) {
    const double *a = box, *b = box + 3, *c = box + 6;
    const double bc[3] = {b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]};
    const double ca[3] = {c[1] * a[2] - c[2] * a[1], c[2] * a[0] - c[0] * a[2], c[0] * a[1] - c[1] * a[0]};
    const double ab[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    const double v = a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2];
    double edge = 0;
    for (int i = 0; i < 9; ++i) edge = std::max(edge, std::fabs(box[i]));
    const double tol = 1e-5 * (edge + r_max), dr = (r_max - r_min) / n_bins;
    const auto pair = [&](const double *p, const double *q) {
        const double d[3] = {q[0] - p[0], q[1] - p[1], q[2] - p[2]};
        double s[3] = {(bc[0] * d[0] + bc[1] * d[1] + bc[2] * d[2]) / v,
                       (ca[0] * d[0] + ca[1] * d[1] + ca[2] * d[2]) / v,
                       (ab[0] * d[0] + ab[1] * d[1] + ab[2] * d[2]) / v};
        for (auto &t : s) t -= std::nearbyint(t);
        double r2 = 0;
        for (int k = 0; k < 3; ++k) {
            const double w = s[0] * a[k] + s[1] * b[k] + s[2] * c[k];
            r2 += w * w;
        }
        const double r = std::sqrt(r2);
        const auto bin = [&](double x) { return static_cast<int64_t>(std::floor((x - r_min) / dr)); };
        if (r >= r_min + tol && r < r_max - tol) {
            const int64_t k = std::min<int64_t>(bin(r), n_bins - 1);
            const int64_t k0 = std::max<int64_t>(0, std::min<int64_t>(bin(r - tol), n_bins - 1));
            const int64_t k1 = std::min<int64_t>(bin(r + tol), n_bins - 1);
            if (k0 == k1) ++lo[k];
            for (int64_t j = k0; j <= k1; ++j) ++hi[j];
        } else if (r > r_min - tol && r < r_max + tol) {  // at r_min or r_max: counted or not
            const int64_t k = std::max<int64_t>(0, std::min<int64_t>(bin(r), n_bins - 1));
            ++hi[k];
        }
    };
    const size_t n1 = k1.size();
    if (identical) {
        for (size_t i = 0; i < n1; ++i)
            for (size_t j = i + 1; j < n1; ++j)
                if (k1[i] != k1[j]) pair(&x1[3 * i], &x1[3 * j]);
    } else {
        for (size_t i = 0; i < n1; ++i)
            for (size_t j = 0; j < k2.size(); ++j)
                if (k1[i] != k2[j]) pair(&x1[3 * i], &x2[3 * j]);
    }
}

// Whether a frame's box is usable: 1 yes, 0 no, -1 too close to a limit to say (the library's own tests:
// volume > 1e-12 |a||b||c|, r_max <= half the smallest perpendicular width, CELLS: every width >= 2.5 r_max).
int box_usable(const double *b, double r_max, int method) {
    for (int i = 0; i < 9; ++i)
        if (std::fabs(b[i]) > 1e100) return -1;  // |a|^2 may overflow in the library's own test
    const double bc[3] = {b[4] * b[8] - b[5] * b[7], b[5] * b[6] - b[3] * b[8], b[3] * b[7] - b[4] * b[6]};
    const double ca[3] = {b[7] * b[2] - b[8] * b[1], b[8] * b[0] - b[6] * b[2], b[6] * b[1] - b[7] * b[0]};
    const double ab[3] = {b[1] * b[5] - b[2] * b[4], b[2] * b[3] - b[0] * b[5], b[0] * b[4] - b[1] * b[3]};
    const double vol = std::fabs(b[0] * bc[0] + b[1] * bc[1] + b[2] * bc[2]);
    const double lengths = std::hypot(b[0], b[1], b[2]) * std::hypot(b[3], b[4], b[5]) * std::hypot(b[6], b[7], b[8]);
    if (!(vol > 1e-10 * lengths)) return vol < 1e-14 * lengths ? 0 : -1;
    const double w = std::min({vol / std::hypot(bc[0], bc[1], bc[2]), vol / std::hypot(ca[0], ca[1], ca[2]),
                               vol / std::hypot(ab[0], ab[1], ab[2])});
    if (!std::isfinite(w)) return -1;
    if (r_max > 0.5 * w * (1 + 1e-9)) return 0;
    if (r_max > 0.5 * w * (1 - 1e-9)) return -1;
    if (method == QMMM_RDF_METHOD_CELLS) {  // the header's rule: every width >= 2.5 r_max
        if (w < 2.5 * r_max * (1 - 1e-9)) return 0;
        if (w < 2.5 * r_max * (1 + 1e-9)) return -1;
    }
    return 1;
}

void Api::rdf_frames() {
    bool live;
    const qmmm_rdf h = pick_rdf(&live);
    num_.reset();
    const bool batch = in_.ConsumeBool();
    const int64_t n_frames =
        batch ? (in_.ConsumeIntegralInRange<int>(0, 7) ? in_.ConsumeIntegralInRange<int64_t>(0, 3) : count(in_, 3)) : 1;
    const int64_t nf = fits(n_frames, 3) ? n_frames : 0;
    const size_t n1 = have_sel_ ? key1_.size() : in_.ConsumeIntegralInRange<size_t>(1, 4);
    const size_t n2 = have_sel_ ? key2_.size() : in_.ConsumeIntegralInRange<size_t>(0, 4);
    std::vector<double> box(9 * nf), x1(3 * n1 * nf), x2(3 * n2 * nf);
    for (int64_t k = 0; k < nf; ++k) make_box(in_, num_, &box[9 * k]);
    const double span = nf ? std::max(std::fabs(box[0]), 1.0) : 1.0;
    for (auto *v : {&x1, &x2})
        for (auto &x : *v)
            x = in_.ConsumeIntegralInRange<int>(0, 7)
                    ? num_.note(in_.ConsumeFloatingPointInRange<double>(-span, 2 * span))
                    : num_.any(50);
    const bool null1 = in_.ConsumeIntegralInRange<int>(0, 15) == 0, null2 = in_.ConsumeIntegralInRange<int>(0, 15) == 0,
               nullb = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const double *p1 = null1 || !nf ? nullptr : x1.data(), *pb = nullb || !nf ? nullptr : box.data();
    const double *p2 = null2 || !nf || (have_sel_ && identical_) ? nullptr : x2.data();
    int64_t before[64];
    const bool track = live && have_sel_ && n_bins_ <= 64;
    if (track)
        FUZZ_CHECK(CALL(qmmm_rdf_results(h, nullptr, nullptr, nullptr, before, nullptr, nullptr)) == QMMM_SUCCESS,
                   "results");
    const int s = batch ? CALL(qmmm_rdf_add_frames(h, n_frames, p1, p2, pb)) : CALL(qmmm_rdf_add_frame(h, p1, p2, pb));
    if (!live) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "frames on a dead handle gave %s", qmmm_status_string(s));
        return;
    }
    if (batch && n_frames == 0) {
        FUZZ_CHECK(s == QMMM_SUCCESS, "zero frames gave %s", qmmm_status_string(s));
        return;
    }
    if (batch && n_frames < 0) {
        FUZZ_CHECK(s == QMMM_ERR_INVALID_ARG, "negative n_frames gave %s", qmmm_status_string(s));
        return;
    }
    if (!have_sel_) {
        FUZZ_CHECK(s != QMMM_SUCCESS, "frames without selections were accepted");
        return;
    }
    // Predict: NULL arrays and non-finite numbers fail; then every frame's box must be usable.
    bool valid = p1 && pb && (identical_ || p2) && fuzz::all_finite(x1.data(), x1.size()) &&
                 fuzz::all_finite(box.data(), box.size()) && (identical_ || fuzz::all_finite(x2.data(), x2.size()));
    bool predictable = true;
    for (int64_t k = 0; k < nf && valid; ++k) {
        const int u = box_usable(&box[9 * k], r_max_, method_);
        if (u == 0) valid = false;
        if (u < 0) predictable = false;
    }
    if (predictable) expect(s, valid, false, "qmmm_rdf_add_frame(s)");
    if (s != QMMM_SUCCESS) {
        if (track) {  // on error nothing is added
            int64_t after[64];
            FUZZ_CHECK(CALL(qmmm_rdf_results(h, nullptr, nullptr, nullptr, after, nullptr, nullptr)) == QMMM_SUCCESS,
                       "results");
            FUZZ_CHECK(std::equal(after, after + n_bins_, before), "a failed add_frame(s) changed the histogram");
        }
        return;
    }
    frames_ += nf;
    // The reference, for coordinates and boxes of moderate size (its tolerance is relative to the box).
    double amax = 0;
    for (const auto *v : {&x1, &box, &x2})
        for (double x : *v) amax = std::max(amax, std::fabs(x));
    if (!(ref_ok_ && amax <= 1e4)) {
        ref_ok_ = false;
        return;
    }
    std::vector<int64_t> lo(n_bins_, 0), hi(n_bins_, 0);
    for (int64_t k = 0; k < nf; ++k)
        reference_counts(&box[9 * k], std::vector<double>(x1.begin() + 3 * n1 * k, x1.begin() + 3 * n1 * (k + 1)),
                         identical_ ? std::vector<double>()
                                    : std::vector<double>(x2.begin() + 3 * n2 * k, x2.begin() + 3 * n2 * (k + 1)),
                         key1_, key2_, identical_, r_min_, r_max_, n_bins_, lo, hi);
    for (int32_t k = 0; k < n_bins_; ++k) hist_lo_[k] += lo[k], hist_hi_[k] += hi[k];
    if (!track) return;
    int64_t hist[64];
    FUZZ_CHECK(CALL(qmmm_rdf_results(h, nullptr, nullptr, nullptr, hist, nullptr, nullptr)) == QMMM_SUCCESS, "results");
    for (int32_t k = 0; k < n_bins_; ++k)
        FUZZ_CHECK(hist[k] - before[k] >= lo[k] && hist[k] - before[k] <= hi[k],
                   "bin %d: %lld pairs added, reference %lld..%lld", k, static_cast<long long>(hist[k] - before[k]),
                   static_cast<long long>(lo[k]), static_cast<long long>(hi[k]));
}

void Api::rdf_results() {
    bool live;
    const qmmm_rdf h = pick_rdf(&live);
    const bool arrays = live && in_.ConsumeBool() && n_bins_ <= 64;
    std::vector<double> r(64, kNaN), g(64, kNaN), nc(64, kNaN);
    std::vector<int64_t> hist(64, -1);
    int64_t frames = -1;
    double vol = -1;
    int s = CALL(qmmm_rdf_results(h, arrays ? r.data() : nullptr, arrays ? g.data() : nullptr,
                                  arrays ? nc.data() : nullptr, arrays ? hist.data() : nullptr, &frames, &vol));
    FUZZ_CHECK(s == (live ? QMMM_SUCCESS : QMMM_ERR_BAD_HANDLE), "results gave %s", qmmm_status_string(s));
    qmmm_rdf_stats st;
    s = CALL(qmmm_rdf_stats_last(h, in_.ConsumeIntegralInRange<int>(0, 7) ? &st : nullptr));
    FUZZ_CHECK(live ? (s == QMMM_SUCCESS || s == QMMM_ERR_NULL_ARG) : s == QMMM_ERR_BAD_HANDLE, "stats gave %s",
               qmmm_status_string(s));
    double box[9], limit = -1;
    Numbers scratch{in_};
    make_box(in_, scratch, box);
    s = CALL(qmmm_rdf_box_limit(in_.ConsumeIntegralInRange<int>(0, 15) ? box : nullptr, &limit));
    if (s == QMMM_SUCCESS) FUZZ_CHECK(std::isfinite(limit) && limit > 0, "box limit %g", limit);
    if (!live) return;
    FUZZ_CHECK(frames == frames_ && std::isfinite(vol) && vol >= 0, "frames %lld (expected %lld), volume %g",
               static_cast<long long>(frames), static_cast<long long>(frames_), vol);
    if (arrays) {
        double prev_r = -kInf, prev_n = 0;
        for (int32_t k = 0; k < n_bins_; ++k) {
            FUZZ_CHECK(r[k] > prev_r && std::isfinite(g[k]) && g[k] >= 0 && std::isfinite(nc[k]) && nc[k] >= prev_n,
                       "bin %d: r %g g %g n %g", k, r[k], g[k], nc[k]);
            FUZZ_CHECK(!ref_ok_ || (hist[k] >= hist_lo_[k] && hist[k] <= hist_hi_[k]),
                       "bin %d: %lld pairs, reference %lld..%lld", k, static_cast<long long>(hist[k]),
                       static_cast<long long>(hist_lo_[k]), static_cast<long long>(hist_hi_[k]));
            prev_r = r[k], prev_n = nc[k];
        }
    }
    if (in_.ConsumeIntegralInRange<int>(0, 3) == 0) {
        FUZZ_CHECK(CALL(qmmm_rdf_reset(h)) == QMMM_SUCCESS, "reset");
        frames_ = 0, ref_ok_ = true;
        std::fill(hist_lo_.begin(), hist_lo_.end(), 0), std::fill(hist_hi_.begin(), hist_hi_.end(), 0);
    }
}

void Api::rdf_destroy() {
    bool live;
    const qmmm_rdf h = pick_rdf(&live);
    const int s = CALL(qmmm_rdf_destroy(h));
    FUZZ_CHECK(s == (live ? QMMM_SUCCESS : QMMM_ERR_BAD_HANDLE), "rdf destroy gave %s", qmmm_status_string(s));
    if (live) stale_rdf_ = rdf_, rdf_ = nullptr, have_sel_ = false;
}

// ---- the Fortran index base and the module-free interface ----

}  // namespace

// The module-free interface's C-visible symbols (fortran_iface/generated/qmmm_accel_f77.cpp): what a Fortran 77
// caller's CALL QMMM_F77_<NAME>(...) reaches. No header declares them: a Fortran program needs none.
extern "C" {
void qmmm_f77_field_create_(int64_t *f, const int *n_cells, const double *cell_xyz, const double *cell_q,
                            const int *n_nuclei, const double *nuc_xyz, const double *nuc_z, const int *backend,
                            const int *precision, const int *n_threads, int *status);
void qmmm_f77_charges_create_xyz_(int64_t *f, const int *n_charges, const double *xyz, const double *q,
                                  const int *screening, const double *screen_a, const double *screen_b,
                                  const int *n_nuclei, const double *nuc_xyz, const double *nuc_z, const int *backend,
                                  const int *precision, const int *n_threads, int *status);
void qmmm_f77_field_eval_(const int64_t *f, const int *n_points, const double *xyz, double *u, int *status);
void qmmm_f77_field_eval_sum_(const int64_t *f, const int *n_points, const double *xyz, double *sum, int *status);
void qmmm_f77_field_eval_grad_(const int64_t *f, const int *n_points, const double *xyz, double *u, double *grad,
                               int *status);
void qmmm_f77_field_site_field_(const int64_t *f, const int *n_points, const double *xyz, const double *w,
                                double *phi, double *efield, int *status);
void qmmm_f77_site_accum_add_(const int64_t *f, const int *n_points, const double *xyz, const double *w,
                              const double *weight, int *status);
void qmmm_f77_set_dipoles_(const int64_t *f, const int *n_sites, const double *site_xyz, const double *mu, int *status);
void qmmm_f77_update_dipoles_(const int64_t *f, const int *n_sites, const double *mu, int *status);
void qmmm_f77_field_backend_(const int64_t *f, int *backend, int *precision, int *status);
void qmmm_f77_field_destroy_(int64_t *f, int *status);
void qmmm_f77_error_message_(char *text, int *status, size_t text_len);
void qmmm_f77_integer_size_(int32_t *probe, int32_t *status);
}

namespace {

// Sets the base through the API (a value other than 0 or 1 is refused and leaves it).
void set_base(int b) {
    const bool valid = b == 0 || b == 1;
    if (valid) g_base = b;  // what checked() expects the call to leave
    const int s = CALL(qmmm_set_index_base(b));
    FUZZ_CHECK(s == (valid ? QMMM_SUCCESS : QMMM_ERR_INVALID_ARG), "qmmm_set_index_base(%d) gave %s", b,
               qmmm_status_string(s));
}

// The message's words, split at spaces and the punctuation around numbers.
std::vector<std::string> words(const std::string &m) {
    std::vector<std::string> w;
    std::string cur;
    for (char c : m) {
        if (std::isspace(static_cast<unsigned char>(c)) || std::strchr("(),:;[]=", c)) {
            if (!cur.empty()) w.push_back(cur), cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) w.push_back(cur);
    return w;
}
bool integer(const std::string &w, long long *v) {
    if (w.empty()) return false;
    char *end = nullptr;
    errno = 0;
    *v = std::strtoll(w.c_str(), &end, 10);
    return errno == 0 && end && *end == '\0' && (std::isdigit(static_cast<unsigned char>(w[0])) || w[0] == '-');
}

// The message under base 1 is the message under base 0 with every index one higher: the same words but for
// integers, each >= 0 under base 0 and one more under base 1.
void check_base_shift(const std::string &m0, const std::string &m1, const char *call) {
    const std::vector<std::string> a = words(m0), b = words(m1);
    FUZZ_CHECK(a.size() == b.size(), "%s: base 0 '%s', base 1 '%s'", call, m0.c_str(), m1.c_str());
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i]) continue;
        long long x = 0, y = 0;
        FUZZ_CHECK(integer(a[i], &x) && integer(b[i], &y) && x >= 0 && y == x + 1,
                   "%s: '%s' under base 0 became '%s' under base 1 (only indices count from the base): '%s' / '%s'",
                   call, a[i].c_str(), b[i].c_str(), m0.c_str(), m1.c_str());
    }
}

// A count the call was given, quoted as "name = value" in its message, is the value given (never shifted by the
// base: it is no index).
void check_counts(const std::string &m, const std::vector<std::pair<std::string, long long>> &counts, const char *call) {
    for (const auto &c : counts) {
        const std::string key = c.first + " = ";
        for (size_t at = m.find(key); at != std::string::npos; at = m.find(key, at + 1)) {
            if (at > 0 && (std::isalnum(static_cast<unsigned char>(m[at - 1])) || m[at - 1] == '_')) continue;
            const long long v = std::strtoll(m.c_str() + at + key.size(), nullptr, 10);
            FUZZ_CHECK(v == c.second, "%s: the message quotes %s = %lld, the call passed %lld: '%s'", call,
                       c.first.c_str(), v, c.second, m.c_str());
        }
    }
}

// QMMM_F77_ERROR_MESSAGE into a CHARACTER*len: the message cut or blank-padded; nothing past len written.
void check_f77_message(Provider &in, const std::string &expected) {
    const size_t len = in.ConsumeIntegralInRange<size_t>(0, 300);
    std::vector<char> text(len + 8, '#');
    int status = -7;
    qmmm_f77_error_message_(text.data(), &status, len);
    FUZZ_CHECK(status == QMMM_SUCCESS, "f77 error_message status %d", status);
    const size_t k = std::min(len, expected.size());
    FUZZ_CHECK(std::memcmp(text.data(), expected.data(), k) == 0, "f77 error_message text differs");
    for (size_t i = k; i < len; ++i) FUZZ_CHECK(text[i] == ' ', "f77 error_message: not blank-padded at %zu", i);
    for (size_t i = len; i < text.size(); ++i) FUZZ_CHECK(text[i] == '#', "f77 error_message wrote past LEN");
}

// A handle as the module-free interface holds it: INTEGER*8.
int64_t f77_handle(const void *h) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(h)); }

// One failing (or succeeding) call three ways: C under base 0, C under base 1, the module-free form under the
// caller's base (0 or 1, restored after). c(): the C call's status; f77(): the module-free call's status, or -1
// where it has no module-free form for these arguments (a count beyond INTEGER*4). Every call must be free of
// side effects when it fails (each is made to fail, or leaves nothing behind).
template <class C, class F>
void Api::three_ways(const char *call, C c, F f77, const std::vector<std::pair<std::string, long long>> &counts) {
    const int keep = g_base;
    set_base(0);
    const int s0 = CALL(c());
    const std::string m0 = qmmm_error_message();
    set_base(1);
    const int s1 = CALL(c());
    const std::string m1 = qmmm_error_message();
    FUZZ_CHECK(s0 == s1, "%s: %s under base 0, %s under base 1", call, qmmm_status_string(s0), qmmm_status_string(s1));
    check_base_shift(m0, m1, call);
    check_counts(m0, counts, call), check_counts(m1, counts, call);
    set_base(in_.ConsumeBool() ? 1 : 0);
    clear_message();
    const int sf = f77();
    if (sf != -1) {
        checked(sf, call);  // the caller's base is back
        const std::string mf = qmmm_error_message();
        FUZZ_CHECK(sf == s1, "%s: module-free %s, C %s", call, qmmm_status_string(sf), qmmm_status_string(s1));
        FUZZ_CHECK(sf == QMMM_SUCCESS || mf == m1, "%s: module-free message '%s', C under base 1 '%s'", call,
                   mf.c_str(), m1.c_str());
        check_f77_message(in_, mf);
    }
    set_base(keep);
}

// Calls whose failure names an index or quotes a count, on a live field (or on arrays made here): a NaN or a point
// beyond reach at point i, a point on a nucleus, a NaN weight (the site field, or the accumulator's add: its sums
// read the same before and after), negative and mismatched counts, a bad charge at m.
void Api::index_messages() {
    const int what = in_.ConsumeIntegralInRange<int>(0, 7);
    const int n = in_.ConsumeIntegralInRange<int>(1, 5);
    const int i = in_.ConsumeIntegralInRange<int>(0, n - 1), k = in_.ConsumeIntegralInRange<int>(0, 2);
    std::vector<double> p(3 * n), w(n, -1.0), u(n), g(3 * n);
    for (auto &v : p) v = in_.ConsumeFloatingPointInRange<double>(-4, 4);
    const int bad_count = in_.ConsumeBool() ? -in_.ConsumeIntegralInRange<int>(1, 3) : in_.ConsumeIntegralInRange<int>(0, 5);
    if (what >= 5) {  // creation with a bad array entry: nothing is made (a handle that is made is destroyed)
        const int m = i;
        std::vector<double> xyz(3 * n), q(n, 0.5), b(n, 1.0), a(n, 1.0), nuc{0, 0, 9}, z{1.0};
        for (auto &v : xyz) v = in_.ConsumeFloatingPointInRange<double>(-4, 4);
        int64_t hf = 0;
        int status = -7;
        const int one = 1, cpu = QMMM_BACKEND_CPU, prec = in_.ConsumeIntegralInRange<int>(0, 2), thr = 1;
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = cpu, o.precision = prec, o.n_threads = thr;
        const auto drop = [](qmmm_field h) {
            if (h) FUZZ_CHECK(CALL(qmmm_field_destroy(h)) == QMMM_SUCCESS, "destroy");
        };
        const auto drop77 = [](int64_t &h) {
            int st = -7;
            if (!h) return;
            qmmm_f77_field_destroy_(&h, &st);
            FUZZ_CHECK(st == QMMM_SUCCESS && h == 0, "f77 destroy");
        };
        if (what == 5) {  // a NaN or huge cell charge at m
            q[m] = in_.ConsumeBool() ? kNaN : 1e301;
            three_ways("qmmm_field_create",
                       [&] { qmmm_field h = nullptr; const int s = qmmm_field_create(&h, n, xyz.data(), q.data(), 1, nuc.data(), z.data(), &o); drop(h); return s; },
                       [&] { qmmm_f77_field_create_(&hf, &n, xyz.data(), q.data(), &one, nuc.data(), z.data(), &cpu, &prec, &thr, &status); const int s = status; drop77(hf); return s; },
                       {{"n_cells", n}});
        } else if (what == 6) {  // EXP screening with b < 0 or a beyond range at m
            if (in_.ConsumeBool()) b[m] = -in_.ConsumeFloatingPointInRange<double>(1e-3, 10);
            else a[m] = 1e301;
            const int exp_ = QMMM_SCREEN_EXP;
            std::vector<double> x(n), y(n), zz(n);
            for (int j = 0; j < n; ++j) x[j] = xyz[3 * j], y[j] = xyz[3 * j + 1], zz[j] = xyz[3 * j + 2];
            three_ways("qmmm_field_create_charges",
                       [&] { qmmm_field h = nullptr; const int s = qmmm_field_create_charges(&h, n, x.data(), y.data(), zz.data(), 1, q.data(), QMMM_SCREEN_EXP, a.data(), b.data(), 1, nuc.data(), z.data(), &o); drop(h); return s; },
                       [&] { qmmm_f77_charges_create_xyz_(&hf, &n, xyz.data(), q.data(), &exp_, a.data(), b.data(), &one, nuc.data(), z.data(), &cpu, &prec, &thr, &status); const int s = status; drop77(hf); return s; },
                       {{"n_charges", n}});
        } else {  // a negative count
            const int nc = -in_.ConsumeIntegralInRange<int>(1, 3);
            three_ways("qmmm_field_create",
                       [&] { qmmm_field h = nullptr; const int s = qmmm_field_create(&h, nc, xyz.data(), q.data(), 1, nuc.data(), z.data(), &o); drop(h); return s; },
                       [&] { qmmm_f77_field_create_(&hf, &nc, xyz.data(), q.data(), &one, nuc.data(), z.data(), &cpu, &prec, &thr, &status); const int s = status; drop77(hf); return s; },
                       {{"n_cells", nc}});
        }
        return;
    }
    if (fields_.empty()) return;
    Field &f = fields_[in_.ConsumeIntegralInRange<size_t>(0, fields_.size() - 1)];
    if (f.pending) return;
    const int64_t hf = f77_handle(f.h);
    int status = -7;
    switch (what) {
        case 0:  // a NaN, or a coordinate beyond every precision's reach, at point i
            p[3 * i + k] = in_.ConsumeBool() ? kNaN : 1e200;
            three_ways("qmmm_field_eval", [&] { return qmmm_field_eval(f.h, n, p.data(), u.data()); },
                       [&] { qmmm_f77_field_eval_(&hf, &n, p.data(), u.data(), &status); return status; },
                       {{"n_points", n}});
            break;
        case 1:  // point i on a nucleus of the field (SINGULAR where it has charge), or the gradient's NaN
            if (f.nn > 0 && in_.ConsumeBool()) {
                const int64_t b = in_.ConsumeIntegralInRange<int64_t>(0, f.nn - 1);
                std::copy(&f.nx[3 * b], &f.nx[3 * b] + 3, &p[3 * i]);
            } else {
                p[3 * i + k] = kNaN;
            }
            three_ways("qmmm_field_eval_grad", [&] { return qmmm_field_eval_grad(f.h, n, p.data(), u.data(), g.data()); },
                       [&] { qmmm_f77_field_eval_grad_(&hf, &n, p.data(), u.data(), g.data(), &status); return status; },
                       {{"n_points", n}});
            break;
        case 2: {  // a NaN or huge weight at i: the site field, or the accumulator's add, which keeps its sums
            w[i] = in_.ConsumeBool() ? kNaN : 1e301;
            const size_t m = static_cast<size_t>(f.nc + f.nn);
            std::vector<double> phi(m), ef(3 * m);
            // k (a coordinate, unused here) chooses, so the input's bytes go where they went before this branch.
            if (k != 2) {
                three_ways("qmmm_field_site_field",
                           [&] { return qmmm_field_site_field(f.h, n, p.data(), w.data(), phi.data(), ef.data()); },
                           [&] { qmmm_f77_field_site_field_(&hf, &n, p.data(), w.data(), phi.data(), ef.data(), &status); return status; },
                           {{"n_points", n}});
                break;
            }
            std::vector<double> phi0(m), ef0(3 * m);
            double ws0 = -1, ws1 = -2;
            int64_t nc0 = -1, nc1 = -2;
            FUZZ_CHECK(CALL(qmmm_field_site_accum_read(f.h, phi0.data(), ef0.data(), &ws0, &nc0)) == QMMM_SUCCESS,
                       "site_accum_read: %s", qmmm_error_message());
            const double weight = 1.0;
            three_ways("qmmm_field_site_accum_add",
                       [&] { return qmmm_field_site_accum_add(f.h, n, p.data(), w.data(), weight); },
                       [&] { qmmm_f77_site_accum_add_(&hf, &n, p.data(), w.data(), &weight, &status); return status; },
                       {{"n_points", n}});
            FUZZ_CHECK(CALL(qmmm_field_site_accum_read(f.h, phi.data(), ef.data(), &ws1, &nc1)) == QMMM_SUCCESS,
                       "site_accum_read: %s", qmmm_error_message());
            FUZZ_CHECK(std::memcmp(phi.data(), phi0.data(), m * sizeof(double)) == 0 &&
                           std::memcmp(ef.data(), ef0.data(), 3 * m * sizeof(double)) == 0 && ws1 == ws0 && nc1 == nc0,
                       "[nothing lost] a refused site_accum_add changed the accumulator (calls %lld -> %lld)",
                       static_cast<long long>(nc0), static_cast<long long>(nc1));
            break;
        }
        case 3: {  // a negative point count (a sum: n_points quoted)
            const int nn = -in_.ConsumeIntegralInRange<int>(1, 3);
            double sum = 0;
            three_ways("qmmm_field_eval_sum", [&] { return qmmm_field_eval_sum(f.h, nn, p.data(), &sum); },
                       [&] { qmmm_f77_field_eval_sum_(&hf, &nn, p.data(), &sum, &status); return status; },
                       {{"n_points", nn}});
            break;
        }
        default: {  // dipoles: a negative n_sites to set, or a count other than the field's to update
            if (bad_count < 0) {
                three_ways("qmmm_field_set_dipoles", [&] { return qmmm_field_set_dipoles(f.h, bad_count, p.data(), nullptr); },
                           [&] { qmmm_f77_set_dipoles_(&hf, &bad_count, p.data(), p.data(), &status); return status; },
                           {{"n_sites", bad_count}});
            } else {
                std::vector<double> mu(3 * 6, 0.01);
                three_ways("qmmm_field_update_dipoles", [&] { return qmmm_field_update_dipoles(f.h, bad_count, mu.data()); },
                           [&] { qmmm_f77_update_dipoles_(&hf, &bad_count, mu.data(), &status); return status; },
                           {{"n_sites", bad_count}});
            }
        }
    }
}

// The module-free interface with made-up handles (INTEGER*8 values that were never handles, 0, a destroyed one) and
// its integer-size probe: BAD_HANDLE, the handle argument untouched; the probe as documented.
void Api::f77_misc() {
    int64_t h = 0;
    switch (in_.ConsumeIntegralInRange<int>(0, 2)) {
        case 0: h = 0; break;
        case 1: h = in_.ConsumeIntegral<int64_t>(); break;
        default: h = stale_fields_.empty() ? 1 : f77_handle(stale_fields_.back());
    }
    for (const auto &f : fields_)
        if (f77_handle(f.h) == h) return;  // by chance a live one
    const int64_t h0 = h;
    int status = -7, backend = -7, precision = -7, n = 1;
    const double p[3] = {0.5, 0.25, 0.125};
    double u = 0;
    clear_message();
    qmmm_f77_field_eval_(&h, &n, p, &u, &status);
    checked(status, "qmmm_f77_field_eval");
    FUZZ_CHECK(status == QMMM_ERR_BAD_HANDLE, "f77 eval with handle %lld gave %s", (long long)h, qmmm_status_string(status));
    clear_message();
    qmmm_f77_field_backend_(&h, &backend, &precision, &status);
    checked(status, "qmmm_f77_field_backend");
    FUZZ_CHECK(status == QMMM_ERR_BAD_HANDLE, "f77 backend gave %s", qmmm_status_string(status));
    clear_message();
    qmmm_f77_field_destroy_(&h, &status);
    checked(status, "qmmm_f77_field_destroy");
    FUZZ_CHECK(status == QMMM_ERR_BAD_HANDLE && h == h0, "f77 destroy gave %s, handle %lld", qmmm_status_string(status),
               (long long)h);
    check_f77_message(in_, qmmm_error_message());
    // The INTEGER size probe: (1, 2) as 4-byte INTEGERs, as two 8-byte ones, or anything else.
    int32_t probe[4] = {in_.ConsumeIntegral<int32_t>(), in_.ConsumeIntegral<int32_t>(), 2, 0};
    const int kind = in_.ConsumeIntegralInRange<int>(0, 2);
    if (kind == 0) probe[0] = 1, probe[1] = 2;
    if (kind == 1) probe[0] = 1, probe[1] = 0;
    int32_t st[2] = {-7, -7};
    clear_message();
    qmmm_f77_integer_size_(probe, st);
    if (kind == 0) FUZZ_CHECK(st[0] == QMMM_SUCCESS && probe[0] == 4, "integer_size 4: %d %d", st[0], probe[0]);
    else if (kind == 1) FUZZ_CHECK(st[0] == QMMM_ERR_INVALID_ARG && st[1] == 0 && probe[0] == 8 && probe[1] == 0,
                                   "integer_size 8: %d %d", st[0], probe[0]);
    else if (!(probe[0] == 1 && (probe[1] == 2 || probe[1] == 0)))
        FUZZ_CHECK(st[0] == QMMM_ERR_INVALID_ARG && qmmm_error_message()[0], "integer_size garbage: %d", st[0]);
}

// ---- the rest of the library surface ----

// Handles of every kind passed to the other kinds' calls: each is BAD_HANDLE, and every object is still there after.
void Api::cross_kind() {
    qmmm_env env = nullptr;
    FUZZ_CHECK(CALL(qmmm_env_create(&env)) == QMMM_SUCCESS && env, "qmmm_env_create");
    std::vector<const void *> fields, envs{env}, rdfs;
    for (const auto &f : fields_) fields.push_back(f.h);
    for (auto h : stale_fields_) fields.push_back(h);
    if (rdf_) rdfs.push_back(rdf_);
    if (stale_rdf_) rdfs.push_back(stale_rdf_);
    const auto as_field = [](const void *h) { return reinterpret_cast<qmmm_field>(const_cast<void *>(h)); };
    const auto as_env = [](const void *h) { return reinterpret_cast<qmmm_env>(const_cast<void *>(h)); };
    const auto as_rdf = [](const void *h) { return reinterpret_cast<qmmm_rdf>(const_cast<void *>(h)); };
    const double p[3] = {0.5, 0.25, 0.125}, box[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    double u = 0;
    int64_t n = 0;
    const auto bad = [](int s, const char *call) {
        FUZZ_CHECK(s == QMMM_ERR_BAD_HANDLE, "%s with another kind's handle gave %s", call, qmmm_status_string(s));
    };
    for (const auto *others : {&envs, &rdfs})
        for (const void *h : *others) {
            bad(CALL(qmmm_field_eval(as_field(h), 1, p, &u)), "qmmm_field_eval");
            bad(CALL(qmmm_field_wait(as_field(h))), "qmmm_field_wait");
            bad(CALL(qmmm_field_destroy(as_field(h))), "qmmm_field_destroy");
        }
    for (const auto *others : {&fields, &rdfs})
        for (const void *h : *others) {
            bad(CALL(qmmm_env_sizes(as_env(h), &n, nullptr, nullptr)), "qmmm_env_sizes");
            bad(CALL(qmmm_env_add_cube(as_env(h), "/nonexistent.cube", 0.0)), "qmmm_env_add_cube");
            bad(CALL(qmmm_env_destroy(as_env(h))), "qmmm_env_destroy");
        }
    for (const auto *others : {&fields, &envs})
        for (const void *h : *others) {
            bad(CALL(qmmm_rdf_add_frame(as_rdf(h), p, p, box)), "qmmm_rdf_add_frame");
            bad(CALL(qmmm_rdf_reset(as_rdf(h))), "qmmm_rdf_reset");
            bad(CALL(qmmm_rdf_destroy(as_rdf(h))), "qmmm_rdf_destroy");
        }
    n = -1;
    FUZZ_CHECK(CALL(qmmm_env_sizes(env, &n, nullptr, nullptr)) == QMMM_SUCCESS && n == 0, "env_sizes");
    FUZZ_CHECK(CALL(qmmm_env_destroy(env)) == QMMM_SUCCESS, "env_destroy");
    for (const auto &f : fields_)
        FUZZ_CHECK(CALL(qmmm_field_backend(f.h, nullptr, nullptr, nullptr)) == QMMM_SUCCESS, "a field is gone");
    if (rdf_) {
        qmmm_rdf_stats st;
        const int s = CALL(qmmm_rdf_stats_last(rdf_, &st));
        FUZZ_CHECK(s != QMMM_ERR_BAD_HANDLE, "the RDF handle is gone");
    }
}

void Api::misc() {
    switch (in_.ConsumeIntegralInRange<int>(0, 9)) {
        case 5: cross_kind(); break;
        case 7: index_messages(); break;
        case 8: f77_misc(); break;
        case 9: set_base(in_.ConsumeIntegralInRange<int>(-1, 2)); break;
        case 0: {
            FUZZ_CHECK(CALL(qmmm_options_default(nullptr)) == QMMM_ERR_NULL_ARG, "options_default(NULL)");
            FUZZ_CHECK(CALL(qmmm_dcs_options_default(nullptr)) == QMMM_ERR_NULL_ARG, "dcs_options_default(NULL)");
            FUZZ_CHECK(CALL(qmmm_rdf_options_default(nullptr)) == QMMM_ERR_NULL_ARG, "rdf_options_default(NULL)");
            break;
        }
        case 1: {
            const char *name = qmmm_status_string(in_.ConsumeIntegral<int>());
            FUZZ_CHECK(name && name[0], "status string");
            break;
        }
        case 2: {
            int a = -1, b = -1, c = -1;
            const bool null = in_.ConsumeBool();
            const int s = CALL(qmmm_version(&a, null ? nullptr : &b, &c));
            FUZZ_CHECK(s == (null ? QMMM_ERR_NULL_ARG : QMMM_SUCCESS), "qmmm_version gave %s", qmmm_status_string(s));
            FUZZ_CHECK(qmmm_version_string() && qmmm_version_string()[0], "version string");
            break;
        }
        case 3: {
            int n = -1;
            FUZZ_CHECK(CALL(qmmm_cuda_device_count(&n)) == QMMM_SUCCESS && n == 0, "device count %d", n);
            FUZZ_CHECK(CALL(qmmm_cuda_device_count(nullptr)) == QMMM_ERR_NULL_ARG, "device count(NULL)");
            break;
        }
        case 4: {
            const int rank = in_.ConsumeIntegralInRange<int>(-1, 4), size = in_.ConsumeIntegralInRange<int>(-1, 4),
                      ndev = in_.ConsumeIntegralInRange<int>(-1, 4);
            const std::string spec = in_.ConsumeRandomLengthString(16);
            const bool spec_null = in_.ConsumeBool(), out_null = in_.ConsumeIntegralInRange<int>(0, 7) == 0;
            int dev = -7;
            const int s =
                CALL(qmmm_pick_device(rank, size, ndev, spec_null ? nullptr : spec.c_str(), out_null ? nullptr : &dev));
            if (out_null) FUZZ_CHECK(s == QMMM_ERR_NULL_ARG, "pick_device(NULL) gave %s", qmmm_status_string(s));
            if (s == QMMM_SUCCESS)
                FUZZ_CHECK(rank >= 0 && rank < size && ndev >= 0 && (ndev == 0 ? dev == -1 : dev >= 0 && dev < ndev),
                           "pick_device(%d, %d, %d, '%s') = %d", rank, size, ndev, spec.c_str(), dev);
            break;
        }
        default:
            FUZZ_CHECK(CALL(qmmm_dcs_release()) == QMMM_SUCCESS && CALL(qmmm_rdf_release()) == QMMM_SUCCESS, "release");
    }
}

void Api::cleanup() {
    for (auto &f : fields_) FUZZ_CHECK(CALL(qmmm_field_destroy(f.h)) == QMMM_SUCCESS, "final destroy");
    fields_.clear();
    if (rdf_) FUZZ_CHECK(CALL(qmmm_rdf_destroy(rdf_)) == QMMM_SUCCESS, "final rdf destroy");
    rdf_ = nullptr;
}

void Api::run() {
    for (int op = 0; op < 24 && in_.remaining_bytes() > 0; ++op) {
        switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
            case 0:
            case 1: field_create(); break;
            case 2:
            case 3: field_eval(); break;
            case 4: field_eval_async(); break;
            case 5: field_wait(); break;
            case 6: field_query(); break;
            case 7: field_destroy(); break;
            case 8: cube_env(); break;
            case 9: dcs_map(); break;
            case 10: dcs_place_ions(); break;
            case 11: rdf_create(); break;
            case 12: rdf_selections(); break;
            case 13: rdf_frames(); break;
            case 14: in_.ConsumeBool() ? rdf_results() : rdf_destroy(); break;
            default: misc();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    set_base(0);  // each input starts from C's base
    Api api(in);
    api.run();
    return 0;
}
