// test_field_forces.cpp -- the forces: the gradient at points (qmmm_field_eval_grad and its async and summing forms)
// and the field at the sites (qmmm_field_site_field, the site accumulator), against long-double references written
// from the physical formulas, central differences of U, Newton's third law between the two calls, and bit-for-bit
// determinism. Built twice: test_field_forces (backend CPU) and test_field_forces_gpu (backend CUDA,
// QMMM_TEST_CUDA; it also compares CUDA with the CPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::kBackend;

// The gradient's and the site field's claims per component, relative to sum |c|/d^2 (forces.md): DOUBLE and MIXED
// evaluate in double (MIXED's gradient of cells anywhere on the CPU excepted: u_claim, grad_claim), SINGLE in float
// terms.
// SINGLE: float terms (~1e-6) plus the rounding of the coordinates' offsets to float, 3 2^-24 |offset| / d for the
// nearest pair, which dominates the scale near a site (measured here up to 2.3e-6).
double claim(int precision) { return precision == QMMM_PRECISION_SINGLE ? 1e-5 : 1e-13; }
// The gradient call's claims (forces.md): MIXED's cells anywhere take the value kernels' float terms (U to the value's
// 1e-8 of sum |c|/d, the gradient to 2e-8 of sum |c|/d^2); elsewhere MIXED is DOUBLE's, within the same bounds.
// The potential at the centre of a uniformly charged cube of side 1 and charge 1: 6 ln((1 + sqrt 3) / sqrt 2) - pi / 2.
const long double kCubeSelf = 6 * logl((1 + sqrtl(3.0L)) / sqrtl(2.0L)) - 3.14159265358979323846264338327950288L / 2;
double u_claim(int precision) { return precision == QMMM_PRECISION_MIXED ? 1e-8 : claim(precision); }
double grad_claim(int precision) { return precision == QMMM_PRECISION_MIXED ? 2e-8 : claim(precision); }

// One source in the caller's terms: kind 0 a density cell (U += q/d), 1 an MM charge (U -= q g(d), screening and
// a, b as qmmm_field_create_charges takes them), 2 a nucleus (U -= Z/d).
struct Sys {
    bool charges = false;
    int screening = QMMM_SCREEN_NONE;
    std::vector<double> xyz, q, a, b, nuc_xyz, nuc_z;  // cells or charges; nuclei
    int64_t n() const { return static_cast<int64_t>(q.size()); }
    int64_t sites() const { return n() + static_cast<int64_t>(nuc_z.size()); }
};

Sys cells_system(int64_t m, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-10, 10), pop(1e-6, 1e-2);
    Sys s;
    for (int64_t i = 0; i < m; ++i) s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g)), s.q.push_back(pop(g));
    s.nuc_xyz = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4, 3.0, -2.0, 1.0};
    s.nuc_z = {8, 1, 6};
    return s;
}

// Charges in a box, every third screened (EXP: every sixth with a = 1), two nuclei.
Sys charges_system(int64_t m, int screening, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-8, 8), chg(-0.8, 0.8), amp(0.2, 0.9), ex(0.3, 2.0);
    Sys s;
    s.charges = true, s.screening = screening;
    for (int64_t i = 0; i < m; ++i) {
        s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g)), s.xyz.push_back(pos(g)), s.q.push_back(chg(g));
        const bool scr = screening != QMMM_SCREEN_NONE && i % 3 == 0;
        s.a.push_back(scr ? (screening == QMMM_SCREEN_EXP ? (i % 6 == 0 ? 1.0 : amp(g)) : ex(g)) : 0.0);
        s.b.push_back(scr ? ex(g) : 0.0);
    }
    s.nuc_xyz = {0.5, 0.2, -0.3, -1.4, 0.9, 0.4};
    s.nuc_z = {8, 1};
    return s;
}

qmmm_field make(const Sys &s, int precision, int threads = 0, double cell_volume = 0) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision, o.n_threads = threads, o.cell_volume = cell_volume;
    qmmm_field f = nullptr;
    int st;
    if (s.charges)
        st = qmmm_field_create_charges(&f, s.n(), s.xyz.data(), s.xyz.data() + 1, s.xyz.data() + 2, 3, s.q.data(),
                                       s.screening, s.a.data(), s.b.data(), static_cast<int64_t>(s.nuc_z.size()),
                                       s.nuc_xyz.data(), s.nuc_z.data(), &o);
    else
        st = qmmm_field_create(&f, s.n(), s.xyz.data(), s.q.data(), static_cast<int64_t>(s.nuc_z.size()),
                               s.nuc_xyz.data(), s.nuc_z.data(), &o);
    EXPECT_EQ(st, QMMM_SUCCESS) << qmmm_error_message();
    return f;
}

// Site k of the caller's order: position, U-convention coefficient c (U += c g), kernel g and g'(d) in long double.
struct Site {
    long double x, y, z, c;
    int kind;  // 0 plain, 1 EXP, 2 GAUSSIAN
    long double a, b;
    bool self;  // a density cell (the cube's self potential applies on its centre)
};

std::vector<Site> sites_of(const Sys &s) {
    std::vector<Site> v;
    for (int64_t m = 0; m < s.n(); ++m) {
        Site t{s.xyz[3 * m], s.xyz[3 * m + 1], s.xyz[3 * m + 2], s.charges ? -(long double)s.q[m] : s.q[m], 0, 0, 0, !s.charges};
        if (s.charges && s.screening == QMMM_SCREEN_EXP && s.a[m] != 0 && s.b[m] != 0) t.kind = 1, t.a = s.a[m], t.b = s.b[m];
        if (s.charges && s.screening == QMMM_SCREEN_GAUSSIAN && s.a[m] != 0) t.kind = 2, t.a = s.a[m];
        v.push_back(t);
    }
    for (size_t b = 0; b < s.nuc_z.size(); ++b)
        v.push_back({s.nuc_xyz[3 * b], s.nuc_xyz[3 * b + 1], s.nuc_xyz[3 * b + 2], -(long double)s.nuc_z[b], 0, 0, 0, false});
    return v;
}

// g(d) and g'(d) of a site, from the definitions (d > 0).
void kernel(const Site &t, long double d, long double *g, long double *gp) {
    if (t.kind == 1) {
        const long double e = expl(-t.b * d * d);
        *g = (1 - t.a * e) / d, *gp = -(1 - t.a * e) / (d * d) + 2 * t.a * t.b * e;
    } else if (t.kind == 2) {
        const long double s = 1 / t.a, pi = 3.14159265358979323846264338327950288L;
        *g = erfl(s * d) / d, *gp = 2 * s / sqrtl(pi) * expl(-s * s * d * d) / d - erfl(s * d) / (d * d);
    } else {
        *g = 1 / d, *gp = -1 / (d * d);
    }
}

// U, dU/dr and the scales sum |c g| and sum |c g'| at p.
void ref_grad(const std::vector<Site> &st, const double *p, long double out[4], long double *su, long double *sg) {
    for (int k = 0; k < 4; ++k) out[k] = 0;
    *su = *sg = 0;
    for (const Site &t : st) {
        const long double dx = p[0] - t.x, dy = p[1] - t.y, dz = p[2] - t.z, d = sqrtl(dx * dx + dy * dy + dz * dz);
        long double g, gp;
        if (d == 0) {  // on a screened charge: EXP with a = 1 (g -> b d) or GAUSSIAN (g -> 2 s / sqrt(pi)); no gradient
            g = t.kind == 1 ? 0 : 2 / (t.a * sqrtl(3.14159265358979323846264338327950288L));
            *su += fabsl(t.c * g), *sg += fabsl(t.c * (t.kind == 1 ? t.b : 0));
            out[0] += t.c * g;
            continue;
        }
        kernel(t, d, &g, &gp);
        out[0] += t.c * g, out[1] += t.c * gp * dx / d, out[2] += t.c * gp * dy / d, out[3] += t.c * gp * dz / d;
        *su += fabsl(t.c * g), *sg += fabsl(t.c * gp);
    }
}

std::vector<double> random_points(int64_t n, unsigned seed, double half = 9) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> pos(-half, half);
    std::vector<double> p(3 * n);
    for (double &v : p) v = pos(g);
    return p;
}

// Every precision against the long-double reference, for cells and for each screening of charges.
void check_grad_reference(const Sys &s, int precision, int64_t n_points) {
    qmmm_field f = make(s, precision);
    const std::vector<double> p = random_points(n_points, 7);
    std::vector<double> u(n_points), g(3 * n_points);
    ASSERT_EQ(qmmm_field_eval_grad(f, n_points, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const std::vector<Site> st = sites_of(s);
    double worst_u = 0, worst_g = 0;
    for (int64_t i = 0; i < n_points; ++i) {
        long double r[4], su, sg;
        ref_grad(st, &p[3 * i], r, &su, &sg);
        worst_u = std::max(worst_u, double(fabsl(u[i] - r[0]) / su));
        for (int k = 0; k < 3; ++k) worst_g = std::max(worst_g, double(fabsl(g[3 * i + k] - r[k + 1]) / sg));
    }
    EXPECT_LE(worst_u, u_claim(precision)) << "precision " << precision;
    EXPECT_LE(worst_g, grad_claim(precision)) << "precision " << precision;
    std::printf("grad vs long double, precision %d, %lld sources: u %.2e, grad %.2e\n", precision,
                static_cast<long long>(s.sites()), worst_u, worst_g);
    qmmm_field_destroy(f);
}

TEST(ForcesGrad, CellsMatchLongDoubleEveryPrecision) {
    REQUIRE_BACKEND();
    const Sys s = cells_system(3000, 1);
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) check_grad_reference(s, p, 64);
}

// Cells of a 23 x 17 x 29 lattice (spacing 0.45 bohr) in a cube file's order (z fastest) or x fastest: the CUDA
// backend sums the gradient by rows there (rows of 29 or 23 cells, cut at its tiles' bounds, over three slices of its
// grid). Random points, points 1e-3 bohr from a cell and points on cell centres or 5e-11 bohr from one (cell_volume
// set: the self term, the careful form) share blocks; on a centre, U is qmmm_field_eval's in DOUBLE and the gradient the other sites'. SINGLE
// next to a cell: the claim plus the rounding of both offsets (<= 12 bohr each) to float over the distance, 3 2^-24
// x 24 / d (forces.md).
TEST(ForcesGrad, LatticeCellsMatchLongDoubleEveryPrecision) {
    REQUIRE_BACKEND();
    const int nx = 23, ny = 17, nz = 29;
    const double h = 0.45;
    // Variants: z fastest, x fastest, and z fastest with cells of both signs and every seventh empty (the rows' cuts
    // at sign changes, and rows of zero charges).
    for (int variant : {0, 1, 2}) {
        const bool z_fastest = variant != 1;
        Sys s = cells_system(0, 5);
        std::mt19937_64 gen(6);
        std::uniform_real_distribution<double> pop(1e-6, 1e-2);
        auto put = [&](int i, int j, int k) {
            const int64_t m = s.n();
            const double q = variant == 2 ? (m % 7 == 0 ? 0.0 : (m / 5) % 3 == 0 ? -pop(gen) : pop(gen)) : pop(gen);
            s.xyz.insert(s.xyz.end(), {-5 + h * i, -4 + h * j, -6 + h * k}), s.q.push_back(q);
        };
        for (int a = 0; a < (z_fastest ? nx : nz); ++a)
            for (int j = 0; j < ny; ++j)
                for (int c = 0; c < (z_fastest ? nz : nx); ++c) z_fastest ? put(a, j, c) : put(c, j, a);
        const std::vector<Site> st = sites_of(s);
        std::vector<double> p = random_points(160, 8, 8);
        std::vector<int64_t> on;  // the cells some points sit on
        // Cell 777 is empty in variant 2 (777 = 7 x 111), cell 9001 negative.
        for (int64_t m : {int64_t(0), int64_t(777), int64_t(5000), int64_t(9001), s.n() - 1}) {
            on.push_back(m);
            p.insert(p.end(), {s.xyz[3 * m] + (m == 5000 ? 5e-11 : 0.0), s.xyz[3 * m + 1], s.xyz[3 * m + 2]});
            p.insert(p.end(), {s.xyz[3 * m] + 1e-3, s.xyz[3 * m + 1] - 1e-3, s.xyz[3 * m + 2]});
        }
        const int64_t n = static_cast<int64_t>(p.size()) / 3;
        std::vector<double> ue(n);
        qmmm_field fd = make(s, QMMM_PRECISION_DOUBLE, 0, h * h * h);
        ASSERT_EQ(qmmm_field_eval(fd, n, p.data(), ue.data()), QMMM_SUCCESS) << qmmm_error_message();
        qmmm_field_destroy(fd);
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            qmmm_field f = make(s, prec, 0, h * h * h);
            std::vector<double> u(n), g(3 * n);
            ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
            double worst_u = 0, worst_g = 0;  // errors over each point's claim
            for (int64_t i = 0; i < n; ++i) {
                const int64_t o = i >= 160 && (i - 160) % 2 == 0 ? on[(i - 160) / 2] : -1;
                std::vector<Site> rest = st;
                if (o >= 0) rest.erase(rest.begin() + o);
                long double r[4], su, sg;
                ref_grad(rest, &p[3 * i], r, &su, &sg);
                long double d2 = 1e30L;
                for (const Site &t : rest) {
                    const long double dx = p[3 * i] - t.x, dy = p[3 * i + 1] - t.y, dz = p[3 * i + 2] - t.z;
                    d2 = std::min(d2, dx * dx + dy * dy + dz * dz);
                }
                const double near = prec == QMMM_PRECISION_SINGLE ? 72 * 0x1p-24 / double(sqrtl(d2)) : 0;
                // on a centre: against DOUBLE's eval, relative to sum |c|/d with the cell's self term
                const double self = o >= 0 ? std::fabs(s.q[o]) * kCubeSelf / h : 0.0;
                const double du = o >= 0 ? std::fabs(u[i] - ue[i]) / double(su + self) : double(fabsl(u[i] - r[0]) / su);
                worst_u = std::max(worst_u, du / (u_claim(prec) + near));
                for (int k = 0; k < 3; ++k)
                    worst_g = std::max(worst_g, double(fabsl(g[3 * i + k] - r[k + 1]) / sg) / (grad_claim(prec) + near));
            }
            const char *name = variant == 0 ? "z fastest" : variant == 1 ? "x fastest" : "z fastest, signs and zeros";
            EXPECT_LE(worst_u, 1.0) << "precision " << prec << ", " << name;
            EXPECT_LE(worst_g, 1.0) << "precision " << prec << ", " << name;
            std::printf("lattice grad vs long double, precision %d, %s: u %.2f, grad %.2f of the claim\n", prec, name,
                        worst_u, worst_g);
            qmmm_field_destroy(f);
            // The same bits on one thread and in batches of 1, 6 and the rest (a point's sums depend on no other
            // point, the careful form's points included).
            qmmm_field f1 = make(s, prec, 1, h * h * h);
            std::vector<double> u1(n), g1(3 * n);
            const int64_t cut[4] = {0, 1, 7, n};
            for (int b = 0; b < 3; ++b)
                ASSERT_EQ(qmmm_field_eval_grad(f1, cut[b + 1] - cut[b], &p[3 * cut[b]], &u1[cut[b]], &g1[3 * cut[b]]),
                          QMMM_SUCCESS) << qmmm_error_message();
            EXPECT_EQ(0, std::memcmp(u.data(), u1.data(), n * 8)) << "precision " << prec << ", " << name;
            EXPECT_EQ(0, std::memcmp(g.data(), g1.data(), 3 * n * 8)) << "precision " << prec << ", " << name;
            qmmm_field_destroy(f1);
        }
    }
}

TEST(ForcesGrad, ScreenedChargesMatchLongDoubleEveryPrecision) {
    REQUIRE_BACKEND();
    for (int scr : {QMMM_SCREEN_NONE, QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN}) {
        const Sys s = charges_system(700, scr, 2 + scr);
        for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
            check_grad_reference(s, p, 48);
    }
    // 1,334 screened charges: several chunks, each with near and far ones.
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE})
        check_grad_reference(charges_system(4000, QMMM_SCREEN_GAUSSIAN, 9), p, 48);
}

// Central differences of U (qmmm_field_eval, DOUBLE; step 1e-4 bohr: truncation ~h^2 U''' / 6) at random points, on
// top of an EXP charge with a = 1 (a cone: its own term drops out of a central difference, and the gradient's is 0
// there), 1e-3 bohr from a Gaussian charge and from a cell, 0.3 bohr from a cell.
// MIXED's gradient of cells anywhere on the CPU, from the value kernels' float terms (CUDA's is DOUBLE's): water 2's
// density cube at water 1's electron positions (a few core cells hold most of sum q^2: MIXED sums them in double) and a
// field of a few dominant cells (points near and on them, cell_volume set), against DOUBLE's gradient: every component
// within grad_claim of sum |q|/d^2, and the mean error over the points (what an average over a walk sees) far below it;
// U within the value's claim, and on the CPU bit for bit qmmm_field_eval's.
TEST(ForcesGrad, MixedOnRealAndDominatedDensities) {
    REQUIRE_BACKEND();
    for (int which : {0, 1}) {
        double dv = 0.008;
        qmmm_test::System s = which == 0 ? qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv)
                                         : qmmm_test::dominated_system(6000, 17);
        ASSERT_GT(s.n_cells(), 0) << qmmm_error_message();
        if (which == 0) {  // the cube's cells in a random order: no rows (a lattice's gradient takes DOUBLE's rows)
            std::vector<int64_t> order(static_cast<size_t>(s.n_cells()));
            for (size_t m = 0; m < order.size(); ++m) order[m] = static_cast<int64_t>(m);
            std::shuffle(order.begin(), order.end(), std::mt19937_64(12));
            qmmm_test::System t = s;
            for (size_t m = 0; m < order.size(); ++m) {
                t.cell_q[m] = s.cell_q[order[m]];
                for (int k = 0; k < 3; ++k) t.cell_xyz[3 * m + k] = s.cell_xyz[3 * order[m] + k];
            }
            s = t;
        }
        const std::vector<double> p =
            which == 0 ? qmmm_test::water1_electron_points(4096, 11) : qmmm_test::dominated_points(s, 18);
        const int64_t n = static_cast<int64_t>(p.size() / 3);
        auto field = [&](int prec) {
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = kBackend, o.precision = prec, o.cell_volume = dv;
            qmmm_field f = nullptr;
            EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                        s.nuc_xyz.data(), s.nuc_z.data(), &o), QMMM_SUCCESS) << qmmm_error_message();
            return f;
        };
        qmmm_field fd = field(QMMM_PRECISION_DOUBLE), fm = field(QMMM_PRECISION_MIXED);
        std::vector<double> ud(n), gd(3 * n), um(n), gm(3 * n), ue(n);
        ASSERT_EQ(qmmm_field_eval_grad(fd, n, p.data(), ud.data(), gd.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval_grad(fm, n, p.data(), um.data(), gm.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(fm, n, p.data(), ue.data()), QMMM_SUCCESS) << qmmm_error_message();
        if (kBackend == QMMM_BACKEND_CPU) EXPECT_EQ(0, std::memcmp(um.data(), ue.data(), 8 * n)) << which;
        double worst_u = 0, worst_g = 0, mean_sg = 0;
        long double mean[3] = {0, 0, 0};
        const int64_t checked = std::min<int64_t>(n, 1024);
        for (int64_t i = 0; i < n; ++i) {
            for (int k = 0; k < 3; ++k) mean[k] += (long double)gm[3 * i + k] - gd[3 * i + k];
            if (i >= checked) continue;
            long double su = 0, sg = 0;  // sum |q|/d and sum |q|/d^2 (a cell on the point: its self term, no d^2)
            auto add = [&](const double *r, double q) {
                const long double dx = p[3 * i] - r[0], dy = p[3 * i + 1] - r[1], dz = p[3 * i + 2] - r[2];
                const long double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 < 1e-20L) {
                    su += fabsl(q * kCubeSelf / cbrtl(dv));
                    return;
                }
                su += fabsl(q) / sqrtl(d2), sg += fabsl(q) / d2;
            };
            for (int64_t m = 0; m < s.n_cells(); ++m) add(&s.cell_xyz[3 * m], s.cell_q[m]);
            for (int64_t b = 0; b < s.n_nuclei(); ++b) add(&s.nuc_xyz[3 * b], s.nuc_z[b]);
            worst_u = std::max(worst_u, std::fabs(um[i] - ud[i]) / double(su));
            for (int k = 0; k < 3; ++k) worst_g = std::max(worst_g, std::fabs(gm[3 * i + k] - gd[3 * i + k]) / double(sg));
            mean_sg += double(sg) / double(checked);
        }
        double worst_mean = 0;
        for (int k = 0; k < 3; ++k) worst_mean = std::max(worst_mean, std::fabs(double(mean[k] / n)) / mean_sg);
        const char *name = which == 0 ? "water 2's cube (cells shuffled) at water 1's electrons" : "dominant cells";
        EXPECT_LE(worst_u, u_claim(QMMM_PRECISION_MIXED)) << name;
        EXPECT_LE(worst_g, grad_claim(QMMM_PRECISION_MIXED)) << name;
        EXPECT_LE(worst_mean, 0.1 * grad_claim(QMMM_PRECISION_MIXED)) << name;
        std::printf("MIXED gradient, %s (%lld cells, %lld points): u %.2e, grad %.2e, mean grad error %.2e of the "
                    "mean sum |q|/d^2\n", name, static_cast<long long>(s.n_cells()), static_cast<long long>(n), worst_u,
                    worst_g, worst_mean);
        // A point beyond the float kernels' range (1e17 bohr; MIXED reaches 1e18) in the batch: the engine sums it, and
        // every other point keeps its bits.
        std::vector<double> pf(p.begin(), p.begin() + 3 * 5);
        pf.insert(pf.begin() + 6, {5e17, -1.0, 2.0});
        std::vector<double> uf(6), gf(18), ufd(1), gfd(3);
        ASSERT_EQ(qmmm_field_eval_grad(fm, 6, pf.data(), uf.data(), gf.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval_grad(fd, 1, &pf[6], ufd.data(), gfd.data()), QMMM_SUCCESS) << qmmm_error_message();
        for (int i = 0, j = 0; i < 6; ++i) {
            if (i == 2) {
                EXPECT_NEAR(uf[2], ufd[0], 1e-13 * std::fabs(ufd[0])) << name;
                for (int k = 0; k < 3; ++k) EXPECT_NEAR(gf[6 + k], gfd[k], 1e-13 * std::fabs(gfd[k]) + 1e-300) << name;
                continue;
            }
            EXPECT_EQ(0, std::memcmp(&uf[i], &um[j], 8)) << name << " point " << j;
            EXPECT_EQ(0, std::memcmp(&gf[3 * i], &gm[3 * j], 24)) << name << " point " << j;
            ++j;
        }
        qmmm_field_destroy(fd), qmmm_field_destroy(fm);
    }
}

TEST(ForcesGrad, CentralDifferencesOfU) {
    REQUIRE_BACKEND();
    for (int scr : {int(QMMM_SCREEN_EXP), int(QMMM_SCREEN_GAUSSIAN), -1}) {
        const Sys s = scr < 0 ? cells_system(500, 3) : charges_system(300, scr, 11);
        qmmm_field f = make(s, QMMM_PRECISION_DOUBLE, 0, scr < 0 ? 0.001 : 0.0);
        std::vector<double> p = random_points(16, 5);
        // a screened charge (index 0: EXP with a = 1; Gaussian) and cell 0
        p.insert(p.end(), {s.xyz[0], s.xyz[1], s.xyz[2]});
        p.insert(p.end(), {s.xyz[0] + 1e-3, s.xyz[1], s.xyz[2]});
        p.insert(p.end(), {s.xyz[0] + 0.3, s.xyz[1] - 0.1, s.xyz[2]});
        const int64_t n = static_cast<int64_t>(p.size() / 3);
        if (scr < 0) p[3 * 16] += 0.5;  // cells: no point on a centre here (CellSelfTerm has that)
        std::vector<double> u(n), g(3 * n);
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
        const std::vector<Site> st = sites_of(s);
        for (int64_t i = 0; i < n; ++i) {
            long double r[4], su, sg;
            ref_grad(st, &p[3 * i], r, &su, &sg);
            // Richardson's extrapolation of central differences at h and h/2 (error ~h^4 U^(5)), h well inside the
            // distance to the nearest other source (1/100 of it)
            double near = 1e300;
            for (const Site &t : st) {
                const double d = std::sqrt(double((p[3 * i] - t.x) * (p[3 * i] - t.x) + (p[3 * i + 1] - t.y) * (p[3 * i + 1] - t.y) +
                                                  (p[3 * i + 2] - t.z) * (p[3 * i + 2] - t.z)));
                if (d > 0) near = std::min(near, d);
            }
            const double h = std::min(1e-3, near / 100);
            for (int k = 0; k < 3; ++k) {
                double q4[12];
                for (int j = 0; j < 4; ++j) std::memcpy(q4 + 3 * j, &p[3 * i], 24);
                q4[k] += h, q4[3 + k] -= h, q4[6 + k] += h / 2, q4[9 + k] -= h / 2;
                double v[4];
                ASSERT_EQ(qmmm_field_eval(f, 4, q4, v), QMMM_SUCCESS) << qmmm_error_message();
                const double d1 = (v[0] - v[1]) / (2 * h), d2 = (v[2] - v[3]) / h;
                const double fd = (4 * d2 - d1) / 3;
                EXPECT_NEAR(g[3 * i + k], fd, 1e-7 * double(sg)) << "screening " << scr << " point " << i << " axis " << k;
                EXPECT_NEAR(g[3 * i + k], double(r[k + 1]), 1e-13 * double(sg)) << "screening " << scr << " point " << i;
            }
        }
        qmmm_field_destroy(f);
    }
}

// A point on a cell centre with cell_volume set: the cell adds its self potential to u and nothing to the gradient.
// Every precision, on random cells (no rows) of one sign in several chunks, the point on a cell of a later chunk or
// 5e-11 bohr from it: the AVX-512 loops find it by the chunk's value sums (no running minimum), and a miss would not
// be caught by the engine's recomputation of non-finite points where the point is off the centre (a finite 1/d).
TEST(ForcesGrad, CellSelfTerm) {
    REQUIRE_BACKEND();
    const Sys s = cells_system(2500, 4);
    const double vol = 0.008;
    const int64_t cell = 1500;
    Sys rest = s;  // the same field without that cell
    rest.xyz.erase(rest.xyz.begin() + 3 * cell, rest.xyz.begin() + 3 * cell + 3);
    rest.q.erase(rest.q.begin() + cell);
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        qmmm_field f = make(s, prec, 0, vol);
        for (double off : {0.0, 5e-11}) {
            const double p[3] = {s.xyz[3 * cell] + off, s.xyz[3 * cell + 1], s.xyz[3 * cell + 2]};
            double u, g[3], u_eval;
            ASSERT_EQ(qmmm_field_eval_grad(f, 1, p, &u, g), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_eval(f, 1, p, &u_eval), QMMM_SUCCESS);
            long double r[4], su, sg;
            ref_grad(sites_of(rest), p, r, &su, &sg);
            // U against the rest's long double sum plus the cell's self potential q C / h, to the value claims
            // (DOUBLE 5e-15, MIXED 1e-8, SINGLE 2e-6) of sum |term|
            const double self = double(s.q[cell] * kCubeSelf / cbrtl(vol));
            const double tol_u = (prec == QMMM_PRECISION_DOUBLE ? 1e-13 : prec == QMMM_PRECISION_MIXED ? 1e-8 : 1e-5) *
                                 double(su + self);
            EXPECT_NEAR(u, double(r[0]) + self, tol_u) << prec << " " << off;
            EXPECT_NEAR(u_eval, double(r[0]) + self, tol_u) << prec << " " << off;
            for (int k = 0; k < 3; ++k) EXPECT_NEAR(g[k], double(r[k + 1]), grad_claim(prec) * double(sg)) << prec << " " << off;
        }
        qmmm_field_destroy(f);
    }
}

// The field at the sites against long double: phi_k = sum w g, E_k = -sum w g'(d) (R - r)/d. one_weight: every point
// of the call has the weight -1.3 (the CPU's loops then leave the weight out of the pair terms), else several.
void check_sites_reference(const Sys &s, int precision, int64_t n = 40, bool one_weight = false) {
    qmmm_field f = make(s, precision);
    const std::vector<double> p = random_points(n, 9);
    std::vector<double> w(n);
    for (int64_t i = 0; i < n; ++i) w[i] = one_weight ? -1.3 : i % 5 == 0 ? 1.0 + i % 7 : -1.0;
    const int64_t m = s.sites();
    std::vector<double> phi(m), e(3 * m);
    ASSERT_EQ(qmmm_field_site_field(f, n, p.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS) << qmmm_error_message();
    const std::vector<Site> st = sites_of(s);
    double worst_p = 0, worst_e = 0;
    for (int64_t k = 0; k < m; ++k) {
        long double rp = 0, re[3] = {0, 0, 0}, sp = 0, se = 0;
        for (int64_t i = 0; i < n; ++i) {
            const long double dx = st[k].x - p[3 * i], dy = st[k].y - p[3 * i + 1], dz = st[k].z - p[3 * i + 2];
            const long double d = sqrtl(dx * dx + dy * dy + dz * dz);
            long double g, gp;
            kernel(st[k], d, &g, &gp);
            rp += w[i] * g, sp += fabsl(w[i] * g), se += fabsl(w[i] * gp);
            re[0] -= w[i] * gp * dx / d, re[1] -= w[i] * gp * dy / d, re[2] -= w[i] * gp * dz / d;
        }
        worst_p = std::max(worst_p, double(fabsl(phi[k] - rp) / sp));
        for (int c = 0; c < 3; ++c) worst_e = std::max(worst_e, double(fabsl(e[3 * k + c] - re[c]) / se));
    }
    EXPECT_LE(worst_p, claim(precision));
    EXPECT_LE(worst_e, claim(precision));
    std::printf("site field vs long double, precision %d, %lld sites, %lld points%s: phi %.2e, E %.2e\n", precision,
                static_cast<long long>(m), static_cast<long long>(n), one_weight ? " of one weight" : "", worst_p,
                worst_e);
    qmmm_field_destroy(f);
}

TEST(ForcesSites, MatchLongDoubleEveryKindAndPrecision) {
    REQUIRE_BACKEND();
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
        for (bool one : {false, true}) {
            check_sites_reference(cells_system(2500, 21), p, 40, one);
            for (int scr : {QMMM_SCREEN_NONE, QMMM_SCREEN_EXP, QMMM_SCREEN_GAUSSIAN})
                check_sites_reference(charges_system(600, scr, 30 + scr), p, 40, one);
        }
}

// Points on cell centres (cell_volume set): a cell takes w C / h from a point on it (C = 6 ln((1 + sqrt 3) / sqrt 2) -
// pi / 2, h the cell's edge) and no field; the CPU's loops handle such a point in a careful pass over its vector of
// sites, which here is a whole one (cell 5) and the tile's last, partial one (cell 197); one weight and several.
TEST(ForcesSites, PointsOnCellCentres) {
    REQUIRE_BACKEND();
    const Sys s = cells_system(200, 8);
    const double vol = 0.008;
    qmmm_field f = make(s, QMMM_PRECISION_DOUBLE, 0, vol);
    const long double pi = 3.14159265358979323846264338327950288L;
    const long double self = (6 * logl((1 + sqrtl(3.0L)) / sqrtl(2.0L)) - pi / 2) / cbrtl((long double)vol);
    const int64_t n = 30, m = s.sites();
    std::vector<double> p = random_points(n, 15);
    std::copy(&s.xyz[3 * 5], &s.xyz[3 * 5 + 3], &p[3 * 4]);
    std::copy(&s.xyz[3 * 197], &s.xyz[3 * 197 + 3], &p[3 * 11]);
    const std::vector<Site> st = sites_of(s);
    for (bool one : {false, true}) {
        std::vector<double> w(n), phi(m), e(3 * m);
        for (int64_t i = 0; i < n; ++i) w[i] = one ? -1.3 : i % 5 == 0 ? 1.0 + i % 7 : -1.0;
        ASSERT_EQ(qmmm_field_site_field(f, n, p.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS)
            << qmmm_error_message();
        double worst_p = 0, worst_e = 0;
        for (int64_t k = 0; k < m; ++k) {
            long double rp = 0, re[3] = {0, 0, 0}, sp = 0, se = 0;
            for (int64_t i = 0; i < n; ++i) {
                const long double dx = st[k].x - p[3 * i], dy = st[k].y - p[3 * i + 1], dz = st[k].z - p[3 * i + 2];
                const long double d = sqrtl(dx * dx + dy * dy + dz * dz);
                if (d == 0) {
                    rp += w[i] * self, sp += fabsl(w[i] * self);
                    continue;
                }
                rp += w[i] / d, sp += fabsl(w[i] / d), se += fabsl(w[i] / (d * d));
                re[0] += w[i] * dx / (d * d * d), re[1] += w[i] * dy / (d * d * d), re[2] += w[i] * dz / (d * d * d);
            }
            worst_p = std::max(worst_p, double(fabsl(phi[k] - rp) / sp));
            for (int c = 0; c < 3; ++c) worst_e = std::max(worst_e, double(fabsl(e[3 * k + c] - re[c]) / se));
        }
        EXPECT_LE(worst_p, 1e-13) << one;
        EXPECT_LE(worst_e, 1e-13) << one;
        // the cells the points are on: their self term is there (about 12 hartree a unit weight, far above the rest)
        EXPECT_GT(std::fabs(phi[5]), 0.5 * std::fabs(w[4]) * double(self));
        EXPECT_GT(std::fabs(phi[197]), 0.5 * std::fabs(w[11]) * double(self));
    }
    qmmm_field_destroy(f);
}

// More points than one chunk (1,024): the CPU sums each chunk apart and adds them (a call of one chunk writes its
// sums straight into the outputs instead).
TEST(ForcesSites, SeveralChunksOfPoints) {
    REQUIRE_BACKEND();
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE})
        for (bool one : {false, true}) {
            check_sites_reference(cells_system(700, 22), p, 2500, one);
            check_sites_reference(charges_system(300, QMMM_SCREEN_EXP, 23), p, 1100, one);
        }
}

// A site's sums are 0 + c_1 + c_2 + ... over its chunks of kFieldChunk points, added in chunk order (whatever the
// launch takes side by side): the field of 2,048 points equals, bit for bit, the field of the first 1,024 plus that
// of the others. Cells (in DOUBLE a point of the second chunk on a cell centre: that chunk's careful form) and screened
// charges; one weight and several.
TEST(ForcesSites, ChunksAddInOrder) {
    REQUIRE_BACKEND();
    const int64_t n = 2048, half = 1024;
    for (int p : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE})
        for (int sys = 0; sys < 2; ++sys) {
            const Sys s = sys == 0 ? cells_system(300, 51) : charges_system(200, QMMM_SCREEN_EXP, 52);
            qmmm_field f = make(s, p, 0, sys == 0 ? 0.008 : 0);
            std::vector<double> x = random_points(n, 53);
            // DOUBLE only: SINGLE recomputes a call with a point on a site in double (the engine's rule).
            if (sys == 0 && p == QMMM_PRECISION_DOUBLE)
                std::copy(&s.xyz[3 * 7], &s.xyz[3 * 7 + 3], &x[3 * (half + 100)]);
            const int64_t m = s.sites();
            for (bool one : {false, true}) {
                std::vector<double> w(n);
                for (int64_t i = 0; i < n; ++i) w[i] = one ? -1.0 : i % 9 == 0 ? 2.0 : -1.0;
                std::vector<double> phi(m), e(3 * m), phi_a(m), e_a(3 * m), phi_b(m), e_b(3 * m);
                ASSERT_EQ(qmmm_field_site_field(f, n, x.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS)
                    << qmmm_error_message();
                ASSERT_EQ(qmmm_field_site_field(f, half, x.data(), w.data(), phi_a.data(), e_a.data()), QMMM_SUCCESS);
                ASSERT_EQ(qmmm_field_site_field(f, n - half, x.data() + 3 * half, w.data() + half, phi_b.data(),
                                                e_b.data()),
                          QMMM_SUCCESS);
                int64_t differ = 0;
                for (int64_t k = 0; k < m; ++k) {
                    differ += phi[k] != phi_a[k] + phi_b[k];
                    for (int c = 0; c < 3; ++c) differ += e[3 * k + c] != e_a[3 * k + c] + e_b[3 * k + c];
                }
                EXPECT_EQ(differ, 0) << "precision " << p << " system " << sys << " one weight " << one;
            }
            qmmm_field_destroy(f);
        }
}

// Newton's third law between the calls: sum_k Q_k E_k + sum_i w_i grad_i = 0 (Q_k = -c_k), relative to the sum of
// the magnitudes of its terms.
TEST(ForcesSites, NewtonsThirdLawOnRandomSystems) {
    REQUIRE_BACKEND();
    for (int scr : {-1, int(QMMM_SCREEN_NONE), int(QMMM_SCREEN_EXP), int(QMMM_SCREEN_GAUSSIAN)}) {
        const Sys s = scr < 0 ? cells_system(1500, 40) : charges_system(800, scr, 41 + scr);
        qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
        const int64_t n = 30;
        const std::vector<double> p = random_points(n, 12, 7);
        std::vector<double> w(n, -1.0), u(n), g(3 * n), phi(s.sites()), e(3 * s.sites());
        w[0] = 8, w[1] = 1;
        ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
        ASSERT_EQ(qmmm_field_site_field(f, n, p.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS);
        const std::vector<Site> st = sites_of(s);
        long double tot[3] = {0, 0, 0}, mag = 0;
        for (int64_t k = 0; k < s.sites(); ++k)
            for (int c = 0; c < 3; ++c) tot[c] += -st[k].c * e[3 * k + c], mag += fabsl(st[k].c * e[3 * k + c]);
        for (int64_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c) tot[c] += w[i] * g[3 * i + c], mag += fabsl(w[i] * g[3 * i + c]);
        for (int c = 0; c < 3; ++c) EXPECT_LE(double(fabsl(tot[c]) / mag), 1e-14) << "screening " << scr << " axis " << c;
        // and the energy: sum_k Q_k phi_k = -sum_i w_i u_i
        long double es = 0, eu = 0, em = 0;
        for (int64_t k = 0; k < s.sites(); ++k) es += -st[k].c * phi[k], em += fabsl(st[k].c * phi[k]);
        for (int64_t i = 0; i < n; ++i) eu += w[i] * u[i];
        EXPECT_LE(double(fabsl(es + eu) / em), 1e-14);
        qmmm_field_destroy(f);
    }
}

// The same bits whatever the thread count and the batch: a point's gradient alone and in a batch, a site's field
// with 1 and 3 threads; repeated calls.
TEST(ForcesDeterminism, BitwiseAcrossThreadsAndBatches) {
    REQUIRE_BACKEND();
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE}) {
        const Sys s = charges_system(5000, QMMM_SCREEN_GAUSSIAN, 50);
        const int64_t n = 300;
        const std::vector<double> p = random_points(n, 13);
        std::vector<double> w(n, -1.0);
        std::vector<double> u[3], g[3], phi[3], e[3];
        const int threads[3] = {1, 3, 3};
        for (int r = 0; r < 3; ++r) {
            qmmm_field f = make(s, prec, threads[r]);
            u[r].resize(n), g[r].resize(3 * n), phi[r].resize(s.sites()), e[r].resize(3 * s.sites());
            if (r < 2) {
                ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u[r].data(), g[r].data()), QMMM_SUCCESS);
            } else {  // in batches of 1, 7 and the rest
                const int64_t cut[4] = {0, 1, 8, n};
                for (int b = 0; b < 3; ++b)
                    ASSERT_EQ(qmmm_field_eval_grad(f, cut[b + 1] - cut[b], &p[3 * cut[b]], &u[r][cut[b]], &g[r][3 * cut[b]]),
                              QMMM_SUCCESS);
            }
            ASSERT_EQ(qmmm_field_site_field(f, n, p.data(), w.data(), phi[r].data(), e[r].data()), QMMM_SUCCESS);
            qmmm_field_destroy(f);
        }
        for (int r = 1; r < 3; ++r) {
            EXPECT_EQ(0, std::memcmp(u[0].data(), u[r].data(), n * 8)) << r;
            EXPECT_EQ(0, std::memcmp(g[0].data(), g[r].data(), 3 * n * 8)) << r;
            EXPECT_EQ(0, std::memcmp(phi[0].data(), phi[r].data(), s.sites() * 8)) << r;
            EXPECT_EQ(0, std::memcmp(e[0].data(), e[r].data(), 3 * s.sites() * 8)) << r;
        }
    }
}

// A call of few points on several threads shares the work by (tile of points, chunk of sites) on the CPU, each chunk's
// terms kept apart and added in chunk order: the bits of one thread, which takes the tiles whole. Cells, and charges of
// which a third are screened (their chunks after the plain ones), 22 points (two tiles) and one.
TEST(ForcesDeterminism, FewPointsOnThreadsAsOnOne) {
    REQUIRE_BACKEND();
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED})
        for (int sys : {0, 1}) {
            const Sys s = sys == 0 ? cells_system(20000, 70) : charges_system(20000, QMMM_SCREEN_GAUSSIAN, 71);
            for (int64_t n : {22, 1}) {
                const std::vector<double> p = random_points(n, 72);
                std::vector<double> u[2], g[2];
                for (int r = 0; r < 2; ++r) {
                    qmmm_field f = make(s, prec, r == 0 ? 1 : 3);
                    u[r].resize(n), g[r].resize(3 * n);
                    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u[r].data(), g[r].data()), QMMM_SUCCESS)
                        << qmmm_error_message();
                    qmmm_field_destroy(f);
                }
                EXPECT_EQ(0, std::memcmp(u[0].data(), u[1].data(), n * 8)) << prec << " " << sys << " " << n;
                EXPECT_EQ(0, std::memcmp(g[0].data(), g[1].data(), 3 * n * 8)) << prec << " " << sys << " " << n;
            }
        }
}

// The async and summing forms give the plain form's bits; the accumulator sums weight * the plain form's values in
// call order.
TEST(ForcesForms, AsyncSumAndAccumulatorEqualThePlainCall) {
    REQUIRE_BACKEND();
    const Sys s = cells_system(4000, 60);
    qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
    const int64_t n = 50, m = s.sites();
    const std::vector<double> p = random_points(n, 14);
    std::vector<double> u(n), g(3 * n), ua(n), ga(3 * n), gs(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_eval_grad_async(f, n, p.data(), ua.data(), ga.data()), QMMM_SUCCESS);
    double tmp;
    EXPECT_EQ(qmmm_field_eval(f, 1, p.data(), &tmp), QMMM_ERR_BUSY);
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, p.data(), &tmp, ga.data()), QMMM_ERR_BUSY);
    ASSERT_EQ(qmmm_field_wait(f), QMMM_SUCCESS) << qmmm_error_message();
    double sum = -1;
    ASSERT_EQ(qmmm_field_eval_grad_sum(f, n, p.data(), &sum, gs.data()), QMMM_SUCCESS);
    EXPECT_EQ(0, std::memcmp(u.data(), ua.data(), n * 8));
    EXPECT_EQ(0, std::memcmp(g.data(), ga.data(), 3 * n * 8));
    EXPECT_EQ(0, std::memcmp(g.data(), gs.data(), 3 * n * 8));
    double ref = 0;
    for (double v : u) ref += v;
    EXPECT_EQ(sum, ref);

    // accumulator: three calls with weights, against the host's own sums of the plain call's values
    std::vector<double> acc_p(m, 0.0), acc_e(3 * m, 0.0), phi(m), e(3 * m);
    const double weights[3] = {1.0, 0.5, 2.25};
    ASSERT_EQ(qmmm_field_site_accum_reset(f), QMMM_SUCCESS);
    for (int c = 0; c < 3; ++c) {
        std::vector<double> pc = random_points(n, 100 + c), w(n, -1.0);
        ASSERT_EQ(qmmm_field_site_field(f, n, pc.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS);
        for (int64_t k = 0; k < m; ++k) {
            acc_p[k] += weights[c] * phi[k];
            for (int j = 0; j < 3; ++j) acc_e[3 * k + j] += weights[c] * e[3 * k + j];
        }
        ASSERT_EQ(qmmm_field_site_accum_add(f, n, pc.data(), w.data(), weights[c]), QMMM_SUCCESS) << qmmm_error_message();
    }
    // a failing call (a point on a nucleus) leaves the sums as they were
    std::vector<double> bad = {s.nuc_xyz[0], s.nuc_xyz[1], s.nuc_xyz[2]};
    const double wb = -1;
    EXPECT_EQ(qmmm_field_site_accum_add(f, 1, bad.data(), &wb, 1.0), QMMM_ERR_SINGULAR);
    double wsum = 0;
    int64_t calls = 0;
    ASSERT_EQ(qmmm_field_site_accum_read(f, phi.data(), e.data(), &wsum, &calls), QMMM_SUCCESS);
    EXPECT_EQ(wsum, 3.75);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(0, std::memcmp(phi.data(), acc_p.data(), m * 8));
    EXPECT_EQ(0, std::memcmp(e.data(), acc_e.data(), 3 * m * 8));
    ASSERT_EQ(qmmm_field_site_accum_reset(f), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_field_site_accum_read(f, phi.data(), e.data(), &wsum, &calls), QMMM_SUCCESS);
    EXPECT_EQ(wsum, 0.0);
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(phi[0], 0.0);
    // destroy with a gradient pending: it waits for it (and writes nothing into the arrays of finished calls)
    std::vector<double> u_late(n, -7.0), g_late(3 * n), u_done = u;
    ASSERT_EQ(qmmm_field_eval(f, n, p.data(), u.data()), QMMM_SUCCESS);
    u_done = u;
    ASSERT_EQ(qmmm_field_eval_grad_async(f, n, p.data(), u_late.data(), g_late.data()), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(0, std::memcmp(u.data(), u_done.data(), n * 8));
}

// The accumulator's sums are weight * the plain call's values, bit for bit, on every path of the CPU's loops: one chunk
// of points and several, density cells and charges (screened ones kept in their own order), SINGLE and DOUBLE, one
// thread and three; a failing call between them leaves the sums as they were.
TEST(ForcesForms, AccumulatorEqualsThePlainCallOnEveryPath) {
    REQUIRE_BACKEND();
    for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE})
        for (int sys = 0; sys < 2; ++sys)
            for (int threads : {1, 3}) {
                const Sys s = sys == 0 ? cells_system(700, 61) : charges_system(900, QMMM_SCREEN_GAUSSIAN, 62);
                qmmm_field f = make(s, prec, threads);
                const int64_t m = s.sites();
                std::vector<double> acc_p(m, 0.0), acc_e(3 * m, 0.0), phi(m), e(3 * m);
                const int64_t counts[3] = {37, 1500, 5};
                const double weights[3] = {0.75, -1.5, 3.0};
                ASSERT_EQ(qmmm_field_site_accum_reset(f), QMMM_SUCCESS);
                for (int c = 0; c < 3; ++c) {
                    const int64_t n = counts[c];
                    const std::vector<double> pc = random_points(n, 200 + c);
                    std::vector<double> w(n);
                    for (int64_t i = 0; i < n; ++i) w[i] = c == 1 || i % 4 != 0 ? -1.0 : 2.5;  // call 1: one weight
                    ASSERT_EQ(qmmm_field_site_field(f, n, pc.data(), w.data(), phi.data(), e.data()), QMMM_SUCCESS);
                    for (int64_t k = 0; k < m; ++k) {
                        acc_p[k] += weights[c] * phi[k];
                        for (int j = 0; j < 3; ++j) acc_e[3 * k + j] += weights[c] * e[3 * k + j];
                    }
                    ASSERT_EQ(qmmm_field_site_accum_add(f, n, pc.data(), w.data(), weights[c]), QMMM_SUCCESS)
                        << qmmm_error_message();
                    if (c == 0) {  // a point on a nucleus among others
                        std::vector<double> bad = random_points(40, 300);
                        std::copy(s.nuc_xyz.begin(), s.nuc_xyz.begin() + 3, bad.begin() + 3 * 17);
                        const std::vector<double> wb(40, -1.0);
                        EXPECT_EQ(qmmm_field_site_accum_add(f, 40, bad.data(), wb.data(), 1.0), QMMM_ERR_SINGULAR);
                    }
                }
                double wsum = 0;
                int64_t calls = 0;
                ASSERT_EQ(qmmm_field_site_accum_read(f, phi.data(), e.data(), &wsum, &calls), QMMM_SUCCESS);
                EXPECT_EQ(calls, 3);
                EXPECT_EQ(0, std::memcmp(phi.data(), acc_p.data(), m * 8)) << prec << " " << sys << " " << threads;
                EXPECT_EQ(0, std::memcmp(e.data(), acc_e.data(), 3 * m * 8)) << prec << " " << sys << " " << threads;
                EXPECT_NE(acc_p[m - 1], 0.0);
                qmmm_field_destroy(f);
            }
}

// A SPLIT field's gradient is within its tolerance per component (the split's own gradient on the CPU,
// test_field_split_grad.cpp; the direct sum on CUDA).
TEST(ForcesGrad, SplitFieldWithinItsTolerance) {
    REQUIRE_BACKEND();
    const Sys s = cells_system(800, 70);
    qmmm_options o;
    qmmm_options_default(&o);
    const double region[6] = {-3, -3, -3, 3, 3, 3};
    o.backend = kBackend, o.method = QMMM_METHOD_SPLIT, o.region = region, o.tolerance = 1e-5;
    qmmm_field f = nullptr;
    ASSERT_EQ(qmmm_field_create(&f, s.n(), s.xyz.data(), s.q.data(), 3, s.nuc_xyz.data(), s.nuc_z.data(), &o),
              QMMM_SUCCESS) << qmmm_error_message();
    const int64_t n = 20;
    const std::vector<double> p = random_points(n, 15, 2.9);
    std::vector<double> u(n), g(3 * n);
    ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
    const std::vector<Site> st = sites_of(s);
    for (int64_t i = 0; i < n; ++i) {
        long double r[4], su, sg;
        ref_grad(st, &p[3 * i], r, &su, &sg);
        for (int k = 0; k < 3; ++k) EXPECT_LE(double(fabsl(g[3 * i + k] - r[k + 1]) / sg), o.tolerance);
    }
    qmmm_field_destroy(f);
}

TEST(ForcesErrors, BadInput) {
    REQUIRE_BACKEND();
    const Sys s = charges_system(50, QMMM_SCREEN_EXP, 80);
    qmmm_field f = make(s, QMMM_PRECISION_DOUBLE);
    double p[3] = {1, 2, 3}, u, g[3], w = -1, phi[52], e[3 * 52], sum;
    EXPECT_EQ(qmmm_field_eval_grad(nullptr, 1, p, &u, g), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_field_eval_grad(f, -1, p, &u, g), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, nullptr, &u, g), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, p, &u, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, p, nullptr, g), QMMM_SUCCESS);  // u may be NULL
    EXPECT_EQ(qmmm_field_eval_grad_sum(f, 1, p, nullptr, g), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_field(f, 1, p, nullptr, phi, e), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_field(f, 1, p, &w, nullptr, e), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_field_site_accum_read(f, phi, nullptr, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    double nanp[3] = {1, NAN, 3}, nanw = NAN, big = 1e301;
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, nanp, &u, g), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_field_site_field(f, 1, p, &nanw, phi, e), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_field_site_field(f, 1, p, &big, phi, e), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_field_site_accum_add(f, 1, p, &w, NAN), QMMM_ERR_NONFINITE);
    // on a nucleus, on an unscreened charge (index 1), on an EXP charge with a != 1 (index 3): SINGULAR, named
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, s.nuc_xyz.data() + 3, &u, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "nucleus 1"), nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_grad_sum(f, 1, &s.xyz[3], &sum, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "charge 1"), nullptr) << qmmm_error_message();
    ASSERT_NE(s.a[3], 1.0);
    EXPECT_EQ(qmmm_field_site_field(f, 1, &s.xyz[9], &w, phi, e), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "charge 3"), nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_eval_grad_async(f, 1, &s.xyz[3], &u, g), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_field_wait(f), QMMM_ERR_SINGULAR);
    // on the EXP charge with a = 1 (index 0) and on a Gaussian one: finite
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, &s.xyz[0], &u, g), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_TRUE(std::isfinite(u) && std::isfinite(g[0]) && std::isfinite(g[1]) && std::isfinite(g[2]));
    EXPECT_EQ(qmmm_field_site_field(f, 1, &s.xyz[0], &w, phi, e), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(e[0], 0.0);
    qmmm_field_destroy(f);
    // a density cell without a cell volume
    const Sys c = cells_system(10, 81);
    f = make(c, QMMM_PRECISION_DOUBLE);
    EXPECT_EQ(qmmm_field_eval_grad(f, 1, &c.xyz[6], &u, g), QMMM_ERR_SINGULAR);
    EXPECT_NE(std::strstr(qmmm_error_message(), "density cell 2"), nullptr) << qmmm_error_message();
    EXPECT_EQ(qmmm_field_site_field(f, 1, &c.xyz[6], &w, phi, e), QMMM_ERR_SINGULAR);
    qmmm_field_destroy(f);
}

#ifdef QMMM_TEST_CUDA
// CUDA against the CPU: gradient and site field, every precision, cells and screened charges.
TEST(ForcesGpu, MatchesTheCpu) {
    REQUIRE_BACKEND();
    for (int scr : {-1, int(QMMM_SCREEN_EXP), int(QMMM_SCREEN_GAUSSIAN)})
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            const Sys s = scr < 0 ? cells_system(20000, 90) : charges_system(5000, scr, 91);
            qmmm_options o;
            qmmm_options_default(&o);
            o.backend = QMMM_BACKEND_CPU, o.precision = QMMM_PRECISION_DOUBLE;
            qmmm_field fc = nullptr, fg = make(s, prec);
            if (s.charges)
                ASSERT_EQ(qmmm_field_create_charges(&fc, s.n(), s.xyz.data(), s.xyz.data() + 1, s.xyz.data() + 2, 3,
                                                    s.q.data(), s.screening, s.a.data(), s.b.data(), 2,
                                                    s.nuc_xyz.data(), s.nuc_z.data(), &o), QMMM_SUCCESS);
            else
                ASSERT_EQ(qmmm_field_create(&fc, s.n(), s.xyz.data(), s.q.data(), 3, s.nuc_xyz.data(), s.nuc_z.data(), &o),
                          QMMM_SUCCESS);
            const int64_t n = 2000, m = s.sites();
            const std::vector<double> p = random_points(n, 92);
            std::vector<double> w(n, -1.0), uc(n), gc(3 * n), ug(n), gg(3 * n), pc(m), ec(3 * m), pg(m), eg(3 * m);
            ASSERT_EQ(qmmm_field_eval_grad(fc, n, p.data(), uc.data(), gc.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_eval_grad(fg, n, p.data(), ug.data(), gg.data()), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_site_field(fc, n, p.data(), w.data(), pc.data(), ec.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_site_field(fg, n, p.data(), w.data(), pg.data(), eg.data()), QMMM_SUCCESS)
                << qmmm_error_message();
            // scales: the largest |grad| and |E| of the CPU (a loose normwise bound: the references above are tight)
            double sg = 0, se = 0;
            for (double v : gc) sg = std::max(sg, std::fabs(v));
            for (double v : ec) se = std::max(se, std::fabs(v));
            const double tol = prec == QMMM_PRECISION_SINGLE ? 1e-4 : 1e-12;
            for (int64_t i = 0; i < 3 * n; ++i) ASSERT_NEAR(gg[i], gc[i], tol * sg) << i;
            for (int64_t k = 0; k < 3 * m; ++k) ASSERT_NEAR(eg[k], ec[k], tol * se) << k;
            // repeated GPU calls: the same bits
            std::vector<double> g2(3 * n), e2(3 * m), p2(m);
            ASSERT_EQ(qmmm_field_eval_grad(fg, n, p.data(), ug.data(), g2.data()), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_field_site_field(fg, n, p.data(), w.data(), p2.data(), e2.data()), QMMM_SUCCESS);
            EXPECT_EQ(0, std::memcmp(gg.data(), g2.data(), 3 * n * 8));
            EXPECT_EQ(0, std::memcmp(eg.data(), e2.data(), 3 * m * 8));
            qmmm_field_destroy(fc), qmmm_field_destroy(fg);
        }
}

// The gradient's two grids give the same bits: a call of few points takes a block per chunk of 256 sites, one whose
// blocks by slices of 4,096 sites fill the GPU (here more than 2,400 blocks, more than any GPU holds at once) takes
// the slices. On random cells, a lattice's rows and point charges with screened ones, for points anywhere, on cell
// centres (the careful form of the centre's slice) and near them: each point alone against the large batch.
TEST(ForcesGpu, ChunksAndSlicesGiveTheSameBits) {
    REQUIRE_BACKEND();
    const double h = 0.45;
    for (int sys : {0, 1, 2}) {
        Sys s = sys == 2 ? charges_system(100000, QMMM_SCREEN_EXP, 96) : cells_system(sys == 1 ? 0 : 100000, 93);
        if (sys == 1)  // z fastest: rows of 29 cells (the row layout), 3 slices
            for (int i = 0; i < 23; ++i)
                for (int j = 0; j < 17; ++j)
                    for (int k = 0; k < 29; ++k)
                        s.xyz.insert(s.xyz.end(), {-5 + h * i, -4 + h * j, -6 + h * k}), s.q.push_back(1e-3 + 1e-5 * k);
        std::vector<double> p;
        for (int64_t m : {int64_t(0), int64_t(4100), s.n() - 1}) {  // on a centre (slices 0, 1 and the last), near one
            if (!s.charges) p.insert(p.end(), {s.xyz[3 * m], s.xyz[3 * m + 1], s.xyz[3 * m + 2]});
            p.insert(p.end(), {s.xyz[3 * m] + 1e-3, s.xyz[3 * m + 1], s.xyz[3 * m + 2] - 1e-3});
        }
        const int64_t special = static_cast<int64_t>(p.size()) / 3;
        // Blocks by slices: points / (3 SINGLE, 2 DOUBLE, 1 rows) / 128 x slices (25 of 10^5 cells, 3 of the lattice,
        // 17 of the 66,667 unscreened charges).
        const std::vector<double> rest = random_points(sys == 1 ? 110000 : sys == 2 ? 60000 : 40000, 94, 6);
        p.insert(p.end(), rest.begin(), rest.end());
        const int64_t n = static_cast<int64_t>(p.size()) / 3;
        for (int prec : {QMMM_PRECISION_DOUBLE, QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
            qmmm_field f = make(s, prec, 0, s.charges ? 0.0 : h * h * h);
            std::vector<double> u(n), g(3 * n);
            ASSERT_EQ(qmmm_field_eval_grad(f, n, p.data(), u.data(), g.data()), QMMM_SUCCESS) << qmmm_error_message();
            for (int64_t i = 0; i < special + 8; ++i) {
                double u1 = NAN, g1[3] = {NAN, NAN, NAN};
                ASSERT_EQ(qmmm_field_eval_grad(f, 1, &p[3 * i], &u1, g1), QMMM_SUCCESS) << qmmm_error_message();
                ASSERT_TRUE(std::isfinite(u1)) << i;
                EXPECT_EQ(0, std::memcmp(&u[i], &u1, 8)) << "system " << sys << " prec " << prec << " point " << i;
                EXPECT_EQ(0, std::memcmp(&g[3 * i], g1, 24)) << "system " << sys << " prec " << prec << " point " << i;
            }
            qmmm_field_destroy(f);
        }
    }
}
#endif

}  // namespace
