// test_pol_solver.cpp -- the induced-dipole solver against independent references: the two-site closed form, and a
// dense direct solve in long double (the 3P x 3P matrix alpha^-1 - T built element by element, Gaussian elimination
// with partial pivoting) on small random systems with exclusions, tensor and isotropic sites, non-polarizable sites,
// charges, dipoles and Thole damping; bitwise determinism across thread counts; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using LD = long double;

struct Handle {
    qmmm_pol p = nullptr;
    ~Handle() {
        if (p) qmmm_pol_destroy(p);
    }
};

// A random system: molecules of 3 sites (a "water": centre and two sites 1.8 bohr away) on a jittered grid with
// 5.5 bohr spacing; each site excludes its molecule. Site kinds cycle: tensor, isotropic, non-polarizable.
struct System {
    int64_t n = 0;
    std::vector<double> xyz, q, dip, alpha6;  // alpha6: 6 per site (0 = not polarizable)
    std::vector<int64_t> excl;                // width 2
};

System make_system(int n_mol, unsigned seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    System s;
    s.n = 3 * n_mol;
    const int side = static_cast<int>(std::ceil(std::cbrt(n_mol)));
    for (int m = 0; m < n_mol; ++m) {
        const double c[3] = {5.5 * (m % side) + 0.4 * u(g), 5.5 * ((m / side) % side) + 0.4 * u(g),
                             5.5 * (m / side / side) + 0.4 * u(g)};
        for (int a = 0; a < 3; ++a) {
            double dir[3] = {u(g), u(g), u(g)};
            const double len = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
            for (int d = 0; d < 3; ++d) s.xyz.push_back(c[d] + (a == 0 ? 0.0 : 1.8 * dir[d] / len));
            s.q.push_back(a == 0 ? -0.8 : 0.4);
            for (int d = 0; d < 3; ++d) s.dip.push_back(0.2 * u(g));
            const int64_t i = 3 * m + a;
            const int kind = static_cast<int>(i % 3);
            if (kind == 0) {
                // A = L L^T + 2 I: symmetric positive definite, anisotropic.
                double l[6] = {u(g), u(g), u(g), u(g), u(g), u(g)};  // lower: l00 l10 l11 l20 l21 l22
                const double L[3][3] = {{l[0], 0, 0}, {l[1], l[2], 0}, {l[3], l[4], l[5]}};
                double A[3][3];
                for (int r = 0; r < 3; ++r)
                    for (int cc = 0; cc < 3; ++cc) {
                        A[r][cc] = (r == cc ? 2.0 : 0.0);
                        for (int k = 0; k < 3; ++k) A[r][cc] += L[r][k] * L[cc][k];
                    }
                const double t[6] = {A[0][0], A[0][1], A[0][2], A[1][1], A[1][2], A[2][2]};
                s.alpha6.insert(s.alpha6.end(), t, t + 6);
            } else if (kind == 1) {
                const double a0 = 1.5 + u(g);
                const double t[6] = {a0, 0, 0, a0, 0, a0};
                s.alpha6.insert(s.alpha6.end(), t, t + 6);
            } else {
                s.alpha6.insert(s.alpha6.end(), 6, 0.0);
            }
            for (int b = 0; b < 3; ++b)
                if (b != a) s.excl.push_back(3 * m + b);
        }
    }
    return s;
}

bool polarizable(const System &s, int64_t i) {
    for (int d = 0; d < 6; ++d)
        if (s.alpha6[6 * i + d] != 0) return true;
    return false;
}

bool excluded(const System &s, int64_t i, int64_t j) { return i / 3 == j / 3; }

// Thole factors of CPPE/PElib's exponential model, long double.
void thole_ld(LD v, LD &fe, LD &ft) {
    const LD ev = std::exp(-v);
    fe = 1 - (1 + v + v * v / 2) * ev;
    ft = fe - v * v * v / 6 * ev;
}

LD abar(const System &s, int64_t i) {
    return (LD(s.alpha6[6 * i]) + LD(s.alpha6[6 * i + 3]) + LD(s.alpha6[6 * i + 5])) / 3;
}

// T_ij (3x3) in long double: the field at i of a unit dipole at j, damped or not.
void tensor_ld(const System &s, int64_t i, int64_t j, bool damp, LD a, LD T[3][3]) {
    LD r[3];
    for (int d = 0; d < 3; ++d) r[d] = LD(s.xyz[3 * i + d]) - LD(s.xyz[3 * j + d]);
    const LD r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], rr = std::sqrt(r2);
    LD fe = 1, ft = 1;
    if (damp) thole_ld(a * rr / std::pow(abar(s, i) * abar(s, j), LD(1) / 6), fe, ft);
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 3; ++y) T[x][y] = (3 * r[x] * r[y] * ft - (x == y ? r2 * fe : 0)) / (r2 * r2 * rr);
}

// The permanent field at site i in long double.
void static_field_ld(const System &s, int64_t i, bool damp, LD a, LD e[3]) {
    e[0] = e[1] = e[2] = 0;
    for (int64_t j = 0; j < s.n; ++j) {
        if (j == i || excluded(s, i, j)) continue;
        LD r[3];
        for (int d = 0; d < 3; ++d) r[d] = LD(s.xyz[3 * i + d]) - LD(s.xyz[3 * j + d]);
        const LD r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], rr = std::sqrt(r2);
        const bool dm = damp && polarizable(s, i) && polarizable(s, j);
        LD fe = 1, ft = 1;
        if (dm) thole_ld(a * rr / std::pow(abar(s, i) * abar(s, j), LD(1) / 6), fe, ft);
        LD T[3][3];
        tensor_ld(s, i, j, dm, a, T);
        for (int d = 0; d < 3; ++d) {
            e[d] += LD(s.q[j]) * r[d] / (r2 * rr) * fe;
            for (int k = 0; k < 3; ++k) e[d] += T[d][k] * LD(s.dip[3 * j + k]);
        }
    }
}

// Gaussian elimination with partial pivoting, long double.
std::vector<LD> solve_dense(std::vector<std::vector<LD>> A, std::vector<LD> b) {
    const size_t n = b.size();
    for (size_t c = 0; c < n; ++c) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; ++r)
            if (std::fabs(A[r][c]) > std::fabs(A[piv][c])) piv = r;
        std::swap(A[c], A[piv]);
        std::swap(b[c], b[piv]);
        for (size_t r = c + 1; r < n; ++r) {
            const LD f = A[r][c] / A[c][c];
            for (size_t k = c; k < n; ++k) A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    std::vector<LD> x(n);
    for (size_t c = n; c-- > 0;) {
        LD sum = b[c];
        for (size_t k = c + 1; k < n; ++k) sum -= A[c][k] * x[k];
        x[c] = sum / A[c][c];
    }
    return x;
}

// The reference: dipoles (3n, 0 at non-polarizable sites) and E_pol parts for field e_ext.
struct Ref {
    std::vector<LD> mu;
    LD e_ext = 0, e_mm = 0;
};

Ref reference(const System &s, const std::vector<double> &e_ext, bool damp_ind, bool damp_mul, LD a) {
    std::vector<int64_t> P;
    for (int64_t i = 0; i < s.n; ++i)
        if (polarizable(s, i)) P.push_back(i);
    const size_t m = 3 * P.size();
    std::vector<std::vector<LD>> A(m, std::vector<LD>(m, 0));
    std::vector<LD> b(m), emm(m);
    for (size_t k = 0; k < P.size(); ++k) {
        const int64_t i = P[k];
        // alpha^-1 by elimination on the 3x3 tensor
        std::vector<std::vector<LD>> al(3, std::vector<LD>(3));
        const int idx[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
        for (int x = 0; x < 3; ++x)
            for (int y = 0; y < 3; ++y) al[x][y] = s.alpha6[6 * i + idx[x][y]];
        for (int col = 0; col < 3; ++col) {
            std::vector<LD> unit(3, 0);
            unit[col] = 1;
            std::vector<LD> inv = solve_dense(al, unit);
            for (int x = 0; x < 3; ++x) A[3 * k + x][3 * k + col] = inv[x];
        }
        for (size_t l = 0; l < P.size(); ++l) {
            const int64_t j = P[l];
            if (j == i || excluded(s, i, j)) continue;
            LD T[3][3];
            tensor_ld(s, i, j, damp_ind, a, T);
            for (int x = 0; x < 3; ++x)
                for (int y = 0; y < 3; ++y) A[3 * k + x][3 * l + y] -= T[x][y];
        }
        LD e[3];
        static_field_ld(s, i, damp_mul, a, e);
        for (int d = 0; d < 3; ++d) {
            emm[3 * k + d] = e[d];
            b[3 * k + d] = e[d] + LD(e_ext[3 * i + d]);
        }
    }
    const std::vector<LD> x = solve_dense(A, b);
    Ref r;
    r.mu.assign(3 * s.n, 0);
    for (size_t k = 0; k < P.size(); ++k)
        for (int d = 0; d < 3; ++d) {
            r.mu[3 * P[k] + d] = x[3 * k + d];
            r.e_ext += -x[3 * k + d] * LD(e_ext[3 * P[k] + d]) / 2;
            r.e_mm += -x[3 * k + d] * emm[3 * k + d] / 2;
        }
    return r;
}

qmmm_pol_options options(double tol, bool damp_ind, bool damp_mul, int n_threads = 0) {
    qmmm_pol_options o;
    qmmm_pol_options_default(&o);
    o.tolerance = tol;
    o.damp_induced = damp_ind;
    o.damp_multipole = damp_mul;
    o.n_threads = n_threads;
    return o;
}

int create(Handle &h, const System &s, const qmmm_pol_options &o) {
    return qmmm_pol_create(&h.p, s.n, s.xyz.data(), s.q.data(), s.dip.data(), 6, s.alpha6.data(), 2, s.excl.data(),
                           &o);
}

std::vector<double> random_field(int64_t n, unsigned seed, double scale) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-scale, scale);
    std::vector<double> e(3 * n);
    for (double &x : e) x = u(g);
    return e;
}

}  // namespace

// Two isotropic sites on the z axis in a uniform field: mu = alpha E / (1 - 2 alpha / R^3) along the axis and
// alpha E / (1 + alpha / R^3) across it (each dipole's field at the other: 2 mu / R^3 and -mu / R^3).
TEST(PolSolver, TwoSitesClosedForm) {
    const double R = 4.0, a = 3.0, E = 0.01;
    const double xyz[6] = {0, 0, 0, 0, 0, R}, alpha[2] = {a, a};
    for (int axis : {0, 2}) {
        Handle h;
        qmmm_pol_options o = options(1e-14, false, false);
        ASSERT_EQ(qmmm_pol_create(&h.p, 2, xyz, nullptr, nullptr, 1, alpha, 0, nullptr, &o), QMMM_SUCCESS)
            << qmmm_error_message();
        double e[6] = {0}, mu[6];
        e[axis] = e[3 + axis] = E;
        qmmm_pol_stats st;
        ASSERT_EQ(qmmm_pol_solve(h.p, e, mu, &st), QMMM_SUCCESS) << qmmm_error_message();
        const double expect = axis == 2 ? a * E / (1 - 2 * a / (R * R * R)) : a * E / (1 + a / (R * R * R));
        for (int s = 0; s < 2; ++s)
            for (int d = 0; d < 3; ++d) EXPECT_NEAR(mu[3 * s + d], d == axis ? expect : 0.0, 1e-15);
        EXPECT_NEAR(st.e_pol_ext, -expect * E, 1e-16);  // -1/2 sum mu.E over two sites
        EXPECT_EQ(st.e_pol_mm, 0.0);
        EXPECT_LE(st.residual, 1e-14);
    }
}

// A damped pair: the closed form with T's factors f_E and f_T of v = a R / alpha^(1/3).
TEST(PolSolver, TwoSitesDampedClosedForm) {
    const double R = 2.5, a = 4.0, E = 0.02, thole_a = 2.1304;
    const double xyz[6] = {0, 0, 0, 0, 0, R}, alpha[2] = {a, a};
    Handle h;
    qmmm_pol_options o = options(1e-14, true, false);
    ASSERT_EQ(qmmm_pol_create(&h.p, 2, xyz, nullptr, nullptr, 1, alpha, 0, nullptr, &o), QMMM_SUCCESS);
    const LD v = thole_a * LD(R) / std::cbrt(LD(a));
    LD fe, ft;
    thole_ld(v, fe, ft);
    // along the axis: T_zz = (3 ft - fe) / R^3
    const LD tzz = (3 * ft - fe) / (LD(R) * R * R);
    double e[6] = {0, 0, E, 0, 0, E}, mu[6];
    ASSERT_EQ(qmmm_pol_solve(h.p, e, mu, nullptr), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_NEAR(mu[2], double(a * LD(E) / (1 - a * tzz)), 1e-14);
    EXPECT_NEAR(mu[5], mu[2], 1e-15);
}

// Random systems against the dense long-double solve, with and without damping.
TEST(PolSolver, DenseLongDoubleReference) {
    for (unsigned seed : {1u, 2u, 3u}) {
        for (int mode = 0; mode < 3; ++mode) {
            const bool di = mode >= 1, dm = mode == 2;
            const System s = make_system(9 + 4 * static_cast<int>(seed), seed);
            const std::vector<double> e = random_field(s.n, seed + 100, 0.05);
            const Ref ref = reference(s, e, di, dm, 2.1304L);
            Handle h;
            const qmmm_pol_options o = options(1e-13, di, dm);
            ASSERT_EQ(create(h, s, o), QMMM_SUCCESS) << qmmm_error_message();
            // the permanent field
            std::vector<double> f(3 * s.n);
            ASSERT_EQ(qmmm_pol_static_field(h.p, f.data()), QMMM_SUCCESS);
            for (int64_t i = 0; i < s.n; ++i) {
                LD r[3];
                static_field_ld(s, i, dm, 2.1304L, r);
                for (int d = 0; d < 3; ++d)
                    EXPECT_NEAR(f[3 * i + d], double(r[d]), 1e-14 + 1e-13 * std::fabs(double(r[d])));
            }
            std::vector<double> mu(3 * s.n);
            qmmm_pol_stats st;
            ASSERT_EQ(qmmm_pol_solve(h.p, e.data(), mu.data(), &st), QMMM_SUCCESS) << qmmm_error_message();
            LD mx = 0, err = 0;
            for (int64_t i = 0; i < 3 * s.n; ++i) {
                mx = std::max(mx, std::fabs(ref.mu[i]));
                err = std::max(err, std::fabs(LD(mu[i]) - ref.mu[i]));
            }
            EXPECT_GT(mx, 0.01);
            EXPECT_LE(double(err / mx), 1e-11) << "seed " << seed << " mode " << mode;
            EXPECT_NEAR(st.e_pol_ext, double(ref.e_ext), 1e-11 * std::fabs(double(ref.e_ext)));
            EXPECT_NEAR(st.e_pol_mm, double(ref.e_mm), 1e-11 * std::fabs(double(ref.e_mm)));
            EXPECT_DOUBLE_EQ(st.e_pol, st.e_pol_ext + st.e_pol_mm);
            EXPECT_LE(st.residual, 1e-13);
            EXPECT_GT(st.iterations, 2);
            // The default tolerance, 1e-8 relative residual, gives dipoles to about that relative accuracy.
            Handle h2;
            const qmmm_pol_options o2 = options(1e-8, di, dm);
            ASSERT_EQ(create(h2, s, o2), QMMM_SUCCESS);
            ASSERT_EQ(qmmm_pol_solve(h2.p, e.data(), mu.data(), &st), QMMM_SUCCESS);
            err = 0;
            for (int64_t i = 0; i < 3 * s.n; ++i) err = std::max(err, std::fabs(LD(mu[i]) - ref.mu[i]));
            EXPECT_LE(st.residual, 1e-8);
            EXPECT_LE(double(err / mx), 1e-7);
        }
    }
}

// No external field: the dipoles answer the permanent field alone (e_ext NULL is a zero field).
TEST(PolSolver, NullExternalFieldIsZero) {
    const System s = make_system(8, 7);
    Handle h;
    ASSERT_EQ(create(h, s, options(1e-12, false, false)), QMMM_SUCCESS);
    std::vector<double> mu(3 * s.n), mu0(3 * s.n), zero(3 * s.n, 0.0);
    ASSERT_EQ(qmmm_pol_solve(h.p, nullptr, mu.data(), nullptr), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_pol_solve(h.p, zero.data(), mu0.data(), nullptr), QMMM_SUCCESS);
    EXPECT_EQ(std::memcmp(mu.data(), mu0.data(), mu.size() * sizeof(double)), 0);
    const Ref ref = reference(s, zero, false, false, 2.1304L);
    for (int64_t i = 0; i < 3 * s.n; ++i) EXPECT_NEAR(mu[i], double(ref.mu[i]), 1e-10);
}

// One-sided exclusion lists act as two-sided ones.
TEST(PolSolver, ExclusionsAreSymmetric) {
    System s = make_system(6, 11);
    std::vector<int64_t> one_sided(s.excl.size(), -1);
    for (int64_t i = 0; i < s.n; ++i)
        for (int k = 0; k < 2; ++k)
            if (s.excl[2 * i + k] > i) one_sided[2 * i + k] = s.excl[2 * i + k];
    const std::vector<double> e = random_field(s.n, 5, 0.05);
    Handle a, b;
    const qmmm_pol_options o = options(1e-12, true, true);
    ASSERT_EQ(create(a, s, o), QMMM_SUCCESS);
    s.excl = one_sided;
    ASSERT_EQ(create(b, s, o), QMMM_SUCCESS);
    std::vector<double> ma(3 * s.n), mb(3 * s.n);
    ASSERT_EQ(qmmm_pol_solve(a.p, e.data(), ma.data(), nullptr), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_pol_solve(b.p, e.data(), mb.data(), nullptr), QMMM_SUCCESS);
    EXPECT_EQ(std::memcmp(ma.data(), mb.data(), ma.size() * sizeof(double)), 0);
}

// A start from the caller's dipoles: from the solution it stops at once with the same dipoles; from zero it
// reaches the same solution; a NaN start is refused.
TEST(PolSolver, StartFromMu) {
    const System s = make_system(30, 13);
    const std::vector<double> e = random_field(s.n, 14, 0.05);
    Handle cold, warm;
    ASSERT_EQ(create(cold, s, options(1e-10, false, false)), QMMM_SUCCESS);
    qmmm_pol_options o = options(1e-10, false, false);
    o.start_from_mu = 1;
    ASSERT_EQ(create(warm, s, o), QMMM_SUCCESS);
    std::vector<double> mu(3 * s.n, 0.0), again(3 * s.n), zero_start(3 * s.n, 0.0);
    qmmm_pol_stats st, st2;
    ASSERT_EQ(qmmm_pol_solve(cold.p, e.data(), mu.data(), &st), QMMM_SUCCESS);
    again = mu;
    ASSERT_EQ(qmmm_pol_solve(warm.p, e.data(), again.data(), &st2), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(st2.iterations, 0);
    EXPECT_EQ(std::memcmp(again.data(), mu.data(), mu.size() * sizeof(double)), 0);
    ASSERT_EQ(qmmm_pol_solve(warm.p, e.data(), zero_start.data(), &st2), QMMM_SUCCESS);
    EXPECT_GT(st2.iterations, 2);
    for (int64_t i = 0; i < 3 * s.n; ++i) EXPECT_NEAR(zero_start[i], mu[i], 1e-8 * 0.05);
    again[4] = std::nan("");
    ASSERT_NE(s.alpha6[6 * 1], 0.0);  // site 1 is polarizable: its start is read
    EXPECT_EQ(qmmm_pol_solve(warm.p, e.data(), again.data(), nullptr), QMMM_ERR_NONFINITE);
    o.start_from_mu = 2;
    Handle bad;
    EXPECT_EQ(create(bad, s, o), QMMM_ERR_INVALID_ARG);
}

// qmmm_pol_set_tolerance: the next solves stop at the new tolerance (a tight one's residual below it, a loose one in
// fewer iterations, within its bound of the tight answer), and the bad values are refused with the old one kept.
TEST(PolSolver, SetTolerance) {
    const System s = make_system(30, 15);
    const std::vector<double> e = random_field(s.n, 16, 0.05);
    Handle h;
    ASSERT_EQ(create(h, s, options(1e-3, false, false)), QMMM_SUCCESS);
    std::vector<double> loose(3 * s.n), tight(3 * s.n);
    qmmm_pol_stats sl, st;
    ASSERT_EQ(qmmm_pol_solve(h.p, e.data(), loose.data(), &sl), QMMM_SUCCESS);
    EXPECT_LE(sl.residual, 1e-3);
    ASSERT_EQ(qmmm_pol_set_tolerance(h.p, 1e-12), QMMM_SUCCESS);
    ASSERT_EQ(qmmm_pol_solve(h.p, e.data(), tight.data(), &st), QMMM_SUCCESS);
    EXPECT_LE(st.residual, 1e-12);
    EXPECT_GT(sl.residual, 1e-9);  // the loose solve did stop early
    EXPECT_LT(sl.iterations, st.iterations);
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < 3 * s.n; ++i) diff = std::max(diff, std::fabs(loose[i] - tight[i])), norm = std::max(norm, std::fabs(tight[i]));
    EXPECT_GT(diff, 0.0);
    EXPECT_LT(diff, 1e-1 * norm);
    EXPECT_EQ(qmmm_pol_set_tolerance(h.p, 0.2), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("0.2"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(qmmm_pol_set_tolerance(h.p, 1e-16), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pol_set_tolerance(h.p, std::nan("")), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_pol_set_tolerance(nullptr, 1e-8), QMMM_ERR_BAD_HANDLE);
    std::vector<double> again(3 * s.n);
    ASSERT_EQ(qmmm_pol_solve(h.p, e.data(), again.data(), nullptr), QMMM_SUCCESS);  // still 1e-12: the same bits
    EXPECT_EQ(std::memcmp(again.data(), tight.data(), tight.size() * sizeof(double)), 0);
}

// The same bits for 1, 2, 3 and 4 threads (600 sites: enough pair terms for the library to use them).
TEST(PolSolver, BitwiseAcrossThreadCounts) {
    const System s = make_system(200, 21);
    const std::vector<double> e = random_field(s.n, 22, 0.05);
    std::vector<double> first;
    qmmm_pol_stats st0{};
    for (int nt : {1, 2, 3, 4}) {
        for (bool damp : {false, true}) {
            Handle h;
            ASSERT_EQ(create(h, s, options(1e-8, damp, damp, nt)), QMMM_SUCCESS) << qmmm_error_message();
            std::vector<double> mu(3 * s.n), f(3 * s.n);
            qmmm_pol_stats st;
            ASSERT_EQ(qmmm_pol_solve(h.p, e.data(), mu.data(), &st), QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_pol_static_field(h.p, f.data()), QMMM_SUCCESS);
            mu.insert(mu.end(), f.begin(), f.end());
            if (!damp) {
                if (nt == 1) {
                    first = mu;
                    st0 = st;
                    EXPECT_EQ(st.n_threads, 1);
                } else {
                    EXPECT_EQ(std::memcmp(first.data(), mu.data(), mu.size() * sizeof(double)), 0) << nt << " threads";
                    EXPECT_EQ(st.iterations, st0.iterations);
                    EXPECT_EQ(std::memcmp(&st.e_pol, &st0.e_pol, sizeof(double)), 0);
                    EXPECT_GT(st.n_threads, 1);
                }
            }
        }
    }
}

// Backend CUDA where no GPU is usable: NO_CUDA (a build without it) or NO_DEVICE, with a message, nothing created;
// not the first CUDA call's own error (QMMM_ERR_CUDA "cudaGetDevice failed", as a driverless machine gave).
TEST(PolSolver, CudaWithoutGpu) {
    int count = 0;
    ASSERT_EQ(qmmm_cuda_device_count(&count), QMMM_SUCCESS);
    if (count > 0) QMMM_SKIP("a CUDA device is present; this test covers machines without one");
    const double xyz[6] = {0, 0, 0, 0, 0, 3}, q[2] = {0.5, -0.5}, alpha[2] = {2, 2};
    qmmm_pol_options o;
    ASSERT_EQ(qmmm_pol_options_default(&o), QMMM_SUCCESS);
    o.backend = QMMM_BACKEND_CUDA;
    qmmm_pol p = nullptr;
    const int s = qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, 0, nullptr, &o);
    EXPECT_TRUE(s == QMMM_ERR_NO_CUDA || s == QMMM_ERR_NO_DEVICE) << qmmm_status_string(s) << ": " << qmmm_error_message();
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(qmmm_error_message()).find("CUDA"), std::string::npos) << qmmm_error_message();
}

TEST(PolSolver, BadInput) {
    const double xyz[6] = {0, 0, 0, 0, 0, 3}, alpha[2] = {2, 2}, q[2] = {0.5, -0.5};
    qmmm_pol p = nullptr;
    EXPECT_EQ(qmmm_pol_create(nullptr, 2, xyz, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pol_create(&p, 2, nullptr, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(qmmm_pol_create(&p, 0, xyz, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pol_create(&p, -5, xyz, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 3, alpha, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, 1, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, -1, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    const double nan = std::nan("");
    const double xyz_nan[6] = {0, 0, 0, 0, nan, 3};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz_nan, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_NONFINITE);
    EXPECT_NE(std::string(qmmm_error_message()).find("xyz[4]"), std::string::npos) << qmmm_error_message();
    const double q_inf[2] = {INFINITY, 0};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q_inf, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_NONFINITE);
    const double a_neg[2] = {2, -1};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, a_neg, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    // indefinite tensor: xx xy xz yy yz zz with xy^2 > xx yy
    const double t_bad[12] = {1, 2, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 6, t_bad, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("positive definite"), std::string::npos);
    const int64_t ex_bad[2] = {1, 2};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, 1, ex_bad, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("neither a site"), std::string::npos) << qmmm_error_message();
    const int64_t ex_neg[2] = {-2, -1};
    EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, 1, ex_neg, nullptr), QMMM_ERR_INVALID_ARG);
    // two sites on one spot: refused unless they exclude each other
    const double same[6] = {1, 1, 1, 1, 1, 1};
    EXPECT_EQ(qmmm_pol_create(&p, 2, same, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("same position"), std::string::npos);
    // distinct positions whose squared distance underflows: a field that is not finite, refused at create
    const double near[6] = {0, 0, 0, 0, 0, 1e-200};
    EXPECT_EQ(qmmm_pol_create(&p, 2, near, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("not finite"), std::string::npos) << qmmm_error_message();
    // a finite field whose norm overflows at solve
    Handle big;
    ASSERT_EQ(qmmm_pol_create(&big.p, 2, xyz, nullptr, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_SUCCESS);
    double e_big[6] = {1e300, 1e300, 0, 0, 0, 0}, mu_big[6];
    EXPECT_EQ(qmmm_pol_solve(big.p, e_big, mu_big, nullptr), QMMM_ERR_INVALID_ARG);
    const int64_t ex_pair[2] = {1, 0};
    ASSERT_EQ(qmmm_pol_create(&p, 2, same, q, nullptr, 1, alpha, 1, ex_pair, nullptr), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_pol_destroy(p), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_pol_destroy(p), QMMM_ERR_BAD_HANDLE);
    // options
    qmmm_pol_options o;
    EXPECT_EQ(qmmm_pol_options_default(nullptr), QMMM_ERR_NULL_ARG);
    const struct { void (*set)(qmmm_pol_options &); int status; } bad[] = {
        {[](qmmm_pol_options &x) { x.max_iter = 0; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.tolerance = 0; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.tolerance = NAN; }, QMMM_ERR_NONFINITE},
        {[](qmmm_pol_options &x) { x.damping_induced = -1; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.damp_induced = 2; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.n_threads = -1; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.backend = 3; }, QMMM_ERR_INVALID_ARG},
        {[](qmmm_pol_options &x) { x.device = -2; }, QMMM_ERR_INVALID_ARG}};
    for (const auto &b : bad) {
        qmmm_pol_options_default(&o);
        b.set(o);
        EXPECT_EQ(qmmm_pol_create(&p, 2, xyz, q, nullptr, 1, alpha, 0, nullptr, &o), b.status) << qmmm_error_message();
    }
    // solve
    Handle h;
    ASSERT_EQ(qmmm_pol_create(&h.p, 2, xyz, q, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_SUCCESS);
    double mu[6], e[6] = {0, 0, 0, 0, 0, nan};
    EXPECT_EQ(qmmm_pol_solve(h.p, nullptr, nullptr, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pol_solve(h.p, e, mu, nullptr), QMMM_ERR_NONFINITE);
    EXPECT_EQ(qmmm_pol_solve(nullptr, nullptr, mu, nullptr), QMMM_ERR_BAD_HANDLE);
    EXPECT_EQ(qmmm_pol_static_field(h.p, nullptr), QMMM_ERR_NULL_ARG);
    EXPECT_EQ(qmmm_pol_sizes(nullptr, nullptr, nullptr), QMMM_ERR_BAD_HANDLE);
}

// Damped sites very far apart (v = a r / alpha^(1/3) beyond where v^3 overflows): no coupling, no NaN.
TEST(PolSolver, DampedFarApart) {
    const double xyz[6] = {0, 0, 0, 0, 0, 1e120}, alpha[2] = {2, 2}, q[2] = {1, -1};
    Handle h;
    const qmmm_pol_options o = options(1e-12, true, true);
    ASSERT_EQ(qmmm_pol_create(&h.p, 2, xyz, q, nullptr, 1, alpha, 0, nullptr, &o), QMMM_SUCCESS);
    double e[6] = {0.01, 0, 0, 0, 0.02, 0}, mu[6];
    ASSERT_EQ(qmmm_pol_solve(h.p, e, mu, nullptr), QMMM_SUCCESS) << qmmm_error_message();
    EXPECT_EQ(mu[0], 0.02);
    EXPECT_EQ(mu[4], 0.04);
}

// A polarization catastrophe (two undamped sites closer than (4 alpha^2)^(1/6)) and too few iterations: a status
// and a message, never NaN with success; the last iterate is finite.
TEST(PolSolver, NotConverged) {
    const double xyz[6] = {0, 0, 0, 0, 0, 1.0}, alpha[2] = {5, 5};
    double e[6] = {0, 0, 0.01, 0, 0, 0.01}, mu[6];
    Handle h;
    ASSERT_EQ(qmmm_pol_create(&h.p, 2, xyz, nullptr, nullptr, 1, alpha, 0, nullptr, nullptr), QMMM_SUCCESS);
    qmmm_pol_stats st;
    EXPECT_EQ(qmmm_pol_solve(h.p, e, mu, &st), QMMM_ERR_NOT_CONVERGED);
    EXPECT_NE(std::string(qmmm_error_message()).find("positive definite"), std::string::npos) << qmmm_error_message();
    EXPECT_STREQ(qmmm_status_string(QMMM_ERR_NOT_CONVERGED), "QMMM_ERR_NOT_CONVERGED");
    // Damping removes the catastrophe.
    Handle d;
    qmmm_pol_options o = options(1e-10, true, false);
    ASSERT_EQ(qmmm_pol_create(&d.p, 2, xyz, nullptr, nullptr, 1, alpha, 0, nullptr, &o), QMMM_SUCCESS);
    EXPECT_EQ(qmmm_pol_solve(d.p, e, mu, &st), QMMM_SUCCESS) << qmmm_error_message();
    for (double m : mu) EXPECT_TRUE(std::isfinite(m));
    // max_iter 1 on a system that needs more
    const System s = make_system(20, 3);
    Handle few;
    o = options(1e-12, false, false);
    o.max_iter = 1;
    ASSERT_EQ(create(few, s, o), QMMM_SUCCESS);
    std::vector<double> m(3 * s.n);
    const std::vector<double> ef = random_field(s.n, 9, 0.05);
    EXPECT_EQ(qmmm_pol_solve(few.p, ef.data(), m.data(), &st), QMMM_ERR_NOT_CONVERGED);
    EXPECT_NE(std::string(qmmm_error_message()).find("max_iter"), std::string::npos) << qmmm_error_message();
    EXPECT_EQ(st.iterations, 1);
    EXPECT_GT(st.residual, 1e-12);
    for (double x : m) EXPECT_TRUE(std::isfinite(x));
}
