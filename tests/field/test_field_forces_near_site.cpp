// test_field_forces_near_site.cpp -- the gradient and the site field at points nearer a site than float resolves,
// against long double. Built twice: test_field_forces_near_site (backend CPU) and test_field_forces_near_site_gpu
// (backend CUDA, QMMM_TEST_CUDA): both recompute such a point in double on the host.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_test.hpp"
#include "qmmm_accel.h"

namespace {

using qmmm_test::kBackend;

qmmm_options opts(int precision) {
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = kBackend, o.precision = precision;
    return o;
}

// U at p in long double: cells (q/d) and nuclei (-Z/d).
long double reference(const double *p, int64_t nc, const double *cx, const double *cq, int64_t nn, const double *nx,
                      const double *nz) {
    long double u = 0;
    for (int64_t m = 0; m < nc; ++m) {
        long double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (static_cast<long double>(p[k]) - cx[3 * m + k]) * (static_cast<long double>(p[k]) - cx[3 * m + k]);
        u += cq[m] / std::sqrt(d2);
    }
    for (int64_t b = 0; b < nn; ++b) {
        long double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (static_cast<long double>(p[k]) - nx[3 * b + k]) * (static_cast<long double>(p[k]) - nx[3 * b + k]);
        u -= nz[b] / std::sqrt(d2);
    }
    return u;
}

}  // namespace

// The gradient and the site field of a SINGLE field near a cell or charge: the term's error grows as float's
// rounding of the offsets over d, as the value's (header: up to about 3 sqrt(3) 2^-23 X / d of q/d^2 above
// 2 sqrt(3) 2^-23 X, within an order of magnitude below it), and a point that float puts on the site is recomputed in
// double (on the host, whichever backend evaluated the call). MIXED is double here. Checked at 1e-2..1e-9 bohr against long double (before: from 1e-8 bohr the site
// field was QMMM_ERR_NONFINITE "overflow", and with cell_volume set the gradient's u was 11.3 and the site's phi
// -23.8, the cube's self-potential, for 5e7 and -1e8, with success; the CUDA kernels kept that self term).
TEST(ForcesNearSite, SingleGradientAndSiteField) {
    REQUIRE_BACKEND();
    const double cx[6] = {1.3, 2.7, -0.4, 3.1, 0.2, 1.9}, cq[2] = {0.5, -0.25}, nx[3] = {-1.2, 0.9, 2.2}, nz[1] = {2};
    const double x[2] = {cx[0], cx[3]}, y[2] = {cx[1], cx[4]}, z[2] = {cx[2], cx[5]}, pq[2] = {-cq[0], -cq[1]};
    const double delta = std::sqrt(3.0) * std::ldexp(1.0, -23) * 3.2;  // X = 3.2: the largest coordinate
    const double dir[3] = {0.6, 0.8, 0.0};
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED}) {
        for (int kind = 0; kind < 3; ++kind) {  // cells; cells with cell_volume; point charges (physical -cq)
            SCOPED_TRACE(testing::Message() << "precision " << prec << ", kind " << kind);
            qmmm_options o = opts(prec);
            if (kind == 1) o.cell_volume = 0.001;
            qmmm_field f = nullptr;
            ASSERT_EQ(kind < 2 ? qmmm_field_create(&f, 2, cx, cq, 1, nx, nz, &o)
                               : qmmm_field_create_charges(&f, 2, x, y, z, 1, pq, QMMM_SCREEN_NONE, nullptr, nullptr,
                                                           1, nx, nz, &o),
                      QMMM_SUCCESS) << qmmm_error_message();
            ASSERT_EQ(qmmm_field_site_accum_reset(f), QMMM_SUCCESS);
            for (int e = 2; e <= 9; ++e) {
                const double d = std::pow(10.0, -e);
                const double p[3] = {cx[0] + d * dir[0], cx[1] + d * dir[1], cx[2]};
                SCOPED_TRACE(testing::Message() << "d = " << d);
                // The reference: dU/dr = -sum c (r - R)/|r - R|^3 (c = cq for cells, -Z for the nucleus), and the
                // field of a point of charge w = -1 at cell 0: w (R - r)/|R - r|^3.
                long double gr[3] = {0, 0, 0}, norm = 0, d0 = 0;
                auto add = [&](const double *s, double c) {
                    long double v[3], d2 = 0;
                    for (int k = 0; k < 3; ++k) v[k] = static_cast<long double>(p[k]) - s[k], d2 += v[k] * v[k];
                    const long double r = std::sqrt(d2);
                    for (int k = 0; k < 3; ++k) gr[k] -= c * v[k] / (d2 * r);
                    norm += std::fabs(c) / d2;
                    return r;
                };
                d0 = add(cx, cq[0]), add(cx + 3, cq[1]), add(nx, -nz[0]);
                const bool on_in_float = static_cast<float>(p[0]) == static_cast<float>(cx[0]) &&
                                         static_cast<float>(p[1]) == static_cast<float>(cx[1]);
                const double near_term = std::fabs(cq[0]) / (d * d);
                double rel;  // the nearest term's error, relative to it
                if (prec == QMMM_PRECISION_MIXED || on_in_float)
                    rel = 1e-13;
                else
                    rel = d > 2 * delta ? 3 * delta / (d - delta) : 10.0;
                const double allowed = near_term * rel + (prec == QMMM_PRECISION_SINGLE ? 1e-5 : 1e-13) * static_cast<double>(norm);
                double u = 0, g[3] = {0, 0, 0};
                ASSERT_EQ(qmmm_field_eval_grad(f, 1, p, &u, g), QMMM_SUCCESS) << qmmm_error_message();
                for (int k = 0; k < 3; ++k)
                    EXPECT_LE(std::fabs(g[k] - static_cast<double>(gr[k])), allowed)
                        << "component " << k << ": " << g[k] << ", reference " << static_cast<double>(gr[k]);
                const long double uref = reference(p, 2, cx, cq, 1, nx, nz);
                EXPECT_LE(std::fabs(u - static_cast<double>(uref)), std::fabs(cq[0]) / d * std::min(rel, 3.5) + 2e-6 * (std::fabs(static_cast<double>(uref)) + 10))
                    << "u = " << u << ", reference " << static_cast<double>(uref);
                const double w = -1;
                double phi[3], ef[9];
                ASSERT_EQ(qmmm_field_site_field(f, 1, p, &w, phi, ef), QMMM_SUCCESS) << qmmm_error_message();
                const double site_rel = prec == QMMM_PRECISION_MIXED || on_in_float ? 1e-13 : rel + 1e-5;
                EXPECT_LE(std::fabs(phi[0] - static_cast<double>(w / d0)), std::min(site_rel, 3.5) / d + 1e-12)
                    << "phi = " << phi[0] << ", reference " << static_cast<double>(w / d0);
                for (int k = 0; k < 3; ++k) {
                    const long double ek = w * (static_cast<long double>(cx[k]) - p[k]) / (d0 * d0 * d0);
                    EXPECT_LE(std::fabs(ef[k] - static_cast<double>(ek)), site_rel / (d * d))
                        << "E_" << k << " = " << ef[k] << ", reference " << static_cast<double>(ek);
                }
                // The accumulator takes the same values (the recomputed ones where float put the point on the site).
                ASSERT_EQ(qmmm_field_site_accum_reset(f), QMMM_SUCCESS);
                ASSERT_EQ(qmmm_field_site_accum_add(f, 1, p, &w, 2.0), QMMM_SUCCESS) << qmmm_error_message();
                double aphi[3], aef[9], wsum = 0;
                int64_t calls = 0;
                ASSERT_EQ(qmmm_field_site_accum_read(f, aphi, aef, &wsum, &calls), QMMM_SUCCESS);
                EXPECT_EQ(aphi[0], 2.0 * phi[0]);
                EXPECT_EQ(aef[0], 2.0 * ef[0]);
                // The field gradient at cell 0, w (delta_ab / d^3 - 3 v_a v_b / d^5), v = R - r; its terms scale as
                // 1/d^3, so the offsets' rounding weighs about twice the field's.
                double eg[18], ag[18];
                ASSERT_EQ(qmmm_field_site_field_grad(f, 1, p, &w, eg), QMMM_SUCCESS) << qmmm_error_message();
                const double grad_rel = prec == QMMM_PRECISION_MIXED || on_in_float ? 1e-13 : 2 * rel + 3e-5;
                const int ab[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
                for (int c = 0; c < 6; ++c) {
                    const long double va = static_cast<long double>(cx[ab[c][0]]) - p[ab[c][0]];
                    const long double vb = static_cast<long double>(cx[ab[c][1]]) - p[ab[c][1]];
                    const long double d3 = d0 * d0 * d0;
                    const long double gk = w * ((ab[c][0] == ab[c][1] ? 1 : 0) / d3 - 3 * va * vb / (d3 * d0 * d0));
                    EXPECT_LE(std::fabs(eg[c] - static_cast<double>(gk)), grad_rel / (d * d * d))
                        << "dE " << c << " = " << eg[c] << ", reference " << static_cast<double>(gk);
                }
                ASSERT_EQ(qmmm_field_site_accum_set_grad(f, 1), QMMM_SUCCESS);
                ASSERT_EQ(qmmm_field_site_accum_add(f, 1, p, &w, 2.0), QMMM_SUCCESS) << qmmm_error_message();
                ASSERT_EQ(qmmm_field_site_accum_read_grad(f, ag), QMMM_SUCCESS);
                for (int c = 0; c < 18; ++c) EXPECT_EQ(ag[c], 2.0 * eg[c]) << c;
                ASSERT_EQ(qmmm_field_site_accum_set_grad(f, 0), QMMM_SUCCESS);
            }
            EXPECT_EQ(qmmm_field_destroy(f), QMMM_SUCCESS);
        }
    }
}
