// test_cube_glycine.cpp -- seed 004's system through the library: the glycine trimer environment
// (fragments 2+3, HF/6-31G* density cube from psi4, data/glycine_trimer) read with its threshold, and
// the field it gives against psi4: the nucleus-environment energy psi4 printed for the very point charges
// it was given, and psi4's analytic electrostatic potential of the same density at 13 points.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace {

const std::string kDir = std::string(QMMM_SOURCE_DIR) + "/data/glycine_trimer/";

nlohmann::json reference() {
    std::ifstream in(kDir + "reference.json");
    return nlohmann::json::parse(in);
}

class Glycine : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        ref_ = reference();
        const std::string file = ref_["environment_cube_used_by_psi4"];
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU;
        ASSERT_EQ(qmmm_cube_read(&env_, (kDir + file).c_str(), ref_["density_threshold"].get<double>()), QMMM_SUCCESS)
            << qmmm_error_message();
        ASSERT_EQ(qmmm_field_create_from_env(&field_, env_, &o), QMMM_SUCCESS) << qmmm_error_message();
    }
    static void TearDownTestSuite() {
        qmmm_field_destroy(field_);
        qmmm_env_destroy(env_);
    }
    static nlohmann::json ref_;
    static qmmm_env env_;
    static qmmm_field field_;
};
nlohmann::json Glycine::ref_;
qmmm_env Glycine::env_ = nullptr;
qmmm_field Glycine::field_ = nullptr;

TEST_F(Glycine, CellsChargeAndNucleiAsPsi4Saw) {
    int64_t nc = 0, nn = 0;
    double dv = 0;
    ASSERT_EQ(qmmm_env_sizes(env_, &nc, &nn, &dv), QMMM_SUCCESS);
    const auto &c = ref_["environment_cubes"][0];
    EXPECT_EQ(nc, c["cells_kept"].get<int64_t>());  // 268,938 (seed 004: 268,782)
    EXPECT_EQ(nn, c["n_nuclei"].get<int64_t>());
    EXPECT_NEAR(dv, c["dV_bohr3"].get<double>(), 1e-15);
    std::vector<double> cx(3 * nc), cq(nc), nx(3 * nn), nz(nn);
    ASSERT_EQ(qmmm_env_copy(env_, cx.data(), cq.data(), nx.data(), nz.data()), QMMM_SUCCESS);
    long double q = 0, z = 0;
    for (double v : cq) q += v;
    for (double v : nz) z += v;
    EXPECT_NEAR((double)q, c["sum_rho_dV_kept"].get<double>(), 1e-9);
    EXPECT_EQ((double)z, c["sum_Z"].get<double>());
    // 84 electrons in fragments 2+3: the grid misses core charge at the cusps and the threshold drops the tail.
    EXPECT_NEAR((double)q, 84.0, 0.25);
}

// psi4 added sum_a Z_a * (charges' potential at R_a) for fragment 1's nuclei: that is -sum_a Z_a U_ES(R_a).
TEST_F(Glycine, NucleusEnvironmentEnergyMatchesPsi4) {
    std::vector<double> pts, z;
    for (const auto &a : ref_["qm_atoms"]) {
        for (int d = 0; d < 3; ++d) pts.push_back(a["xyz_bohr"][d]);
        z.push_back(a["Z"]);
    }
    std::vector<double> u(z.size());
    ASSERT_EQ(qmmm_field_eval(field_, (int64_t)z.size(), pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    double e = 0;
    for (size_t a = 0; a < z.size(); ++a) e -= z[a] * u[a];
    const double psi4 = ref_["nucleus_environment_energy_psi4_printed"];
    std::printf("glycine nucleus-environment energy: library %.13f, psi4 %.13f, diff %.1e hartree\n", e, psi4, e - psi4);
    EXPECT_NEAR(e, psi4, 1e-10 * std::fabs(psi4));
}

// psi4's analytic ESP of the fragments 2+3 HF density and nuclei vs U_ES of the cube's cells (h = 0.175 bohr,
// cells above the threshold). The cell sum is a midpoint quadrature that misses the core charge at the
// heavy-atom cusps (84 - sum q electrons, see data/README.md): its potential at a point a few bohr away is
// at most (84 - sum q) / d_min, with d_min the distance to the nearest environment nucleus, and it has
// the sign of missing electrons. Measured: 2.5e-2 to 7.7e-2 hartree (0.213 e missing); the water-dimer
// test (test_cube_psi4) shows the difference falling with the grid spacing.
TEST_F(Glycine, FieldMatchesPsi4AnalyticEsp) {
    const auto &er = ref_["esp_reference"];
    std::vector<double> pts;
    for (const auto &p : er["points_bohr"])
        for (int d = 0; d < 3; ++d) pts.push_back(p[d]);
    const std::vector<double> esp = er["esp_hartree"].get<std::vector<double>>();
    std::vector<double> u(esp.size());
    ASSERT_EQ(qmmm_field_eval(field_, (int64_t)u.size(), pts.data(), u.data()), QMMM_SUCCESS) << qmmm_error_message();
    int64_t nc = 0, nn = 0;
    double dv = 0;
    qmmm_env_sizes(env_, &nc, &nn, &dv);
    std::vector<double> cx(3 * nc), cq(nc), nx(3 * nn), nz(nn);
    qmmm_env_copy(env_, cx.data(), cq.data(), nx.data(), nz.data());
    long double q = 0;
    for (double v : cq) q += v;
    const double missing = 84.0 - (double)q;
    double worst = 0, worst_rel = 0;
    for (size_t p = 0; p < esp.size(); ++p) {
        double dmin = 1e300;  // nearest environment nucleus
        for (int64_t b = 0; b < nn; ++b)
            dmin = std::min(dmin, std::hypot(pts[3 * p] - nx[3 * b], pts[3 * p + 1] - nx[3 * b + 1], pts[3 * p + 2] - nx[3 * b + 2]));
        const double diff = std::fabs(u[p] + esp[p]);
        worst = std::max(worst, diff);
        worst_rel = std::max(worst_rel, diff / std::fabs(esp[p]));
        std::printf("point %2zu: ESP %+.6f  U_ES %+.6f  |U_ES + ESP| %.2e  (missing charge bound %.2e)\n", p, esp[p],
                    u[p], diff, missing / dmin);
        EXPECT_LT(diff, missing / dmin) << "point " << p;
        EXPECT_LT(u[p] + esp[p], 0.0) << "point " << p << ": missing electrons make U_ES more negative, not less";
    }
    std::printf("glycine: max |U_ES + ESP| = %.2e hartree (max rel %.2e), %.3f e missing from the grid\n", worst,
                worst_rel, missing);
}

}  // namespace
