// test_field_gpu_rows.cpp -- the row layout of the CUDA throughput path, every precision (cells of a cube's lattice, where a
// row's dy^2 + dz^2 is shared by its cells). References: the long-double sum of field_reference.hpp, and the
// tile layout of the same handle settings (QMMM_CUDA_ROWS=0), which must differ in bits but not beyond the claim.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "field_claims.hpp"
#include "field_reference.hpp"
#include "gpu_test.hpp"
#include "qmmm_accel.h"

using qmmm_test::System;

namespace {

// A CUDA handle of precision prec (cell volume dv) with QMMM_CUDA_ROWS set to rows ("" = unset: the backend decides).
std::vector<double> eval_cuda(int prec, const System &s, double dv, const char *rows, const std::vector<double> &pts) {
    if (*rows) setenv("QMMM_CUDA_ROWS", rows, 1);
    else unsetenv("QMMM_CUDA_ROWS");
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CUDA, o.precision = prec, o.cell_volume = dv;  // dv: points on cells
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(), s.nuc_xyz.data(),
                                s.nuc_z.data(), &o),
              QMMM_SUCCESS)
        << qmmm_error_message();
    unsetenv("QMMM_CUDA_ROWS");
    std::vector<double> u(pts.size() / 3, NAN);
    if (f) {
        EXPECT_EQ(qmmm_field_eval(f, static_cast<int64_t>(u.size()), pts.data(), u.data()), QMMM_SUCCESS)
            << qmmm_error_message();
        qmmm_field_destroy(f);
    }
    return u;
}

// Points: random in and around the blob, then points on cell centres and 1e-3 bohr from cells.
std::vector<double> points(const System &s, int64_t n, uint64_t seed) {
    auto p = qmmm_test::random_points(n, seed, 12.0);
    for (int64_t m : {int64_t{0}, s.n_cells() / 3, s.n_cells() - 1}) {
        p.insert(p.end(), &s.cell_xyz[3 * m], &s.cell_xyz[3 * m] + 3);
        p.insert(p.end(), {s.cell_xyz[3 * m] + 1e-3, s.cell_xyz[3 * m + 1], s.cell_xyz[3 * m + 2] - 1e-3});
    }
    return p;
}

// Points (of pts) outside the claim of precision prec against the long-double reference.
int64_t outside_claim(int prec, const System &s, double dv, const std::vector<double> &pts, const std::vector<double> &u,
                      double *worst) {
    int64_t bad = 0;
    *worst = 0;
    for (size_t p = 0; p < u.size(); ++p) {
        double scale = 0;
        const double ref = qmmm_test::reference_u(s, &pts[3 * p], dv, &scale);
        const double e = std::fabs(u[p] - ref) / scale;
        *worst = std::max(*worst, e);
        bad += !qmmm_claims::within(prec, e, s, &pts[3 * p]);
    }
    return bad;
}

}  // namespace

// Lattice cells take the layout the tuning table names by default: rows in SINGLE and DOUBLE (the default's bits are
// those of QMMM_CUDA_ROWS=1, and differ from the tile layout's), tiles in MIXED (measured faster there: 1,040 vs
// 1,011 G pairs/s at 8,192 points); every value within the precision's claim in both layouts, points on cell centres
// included; bits independent of the batch, as on every throughput path.
TEST(FieldCudaRows, LatticeCellsTakeTheTunedLayoutWithinTheClaim) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const double h = 0.175, dv = h * h * h;
    const System s = qmmm_test::lattice_system(48, 40, 36, h, 5);
    ASSERT_GT(s.n_cells(), 20000);
    const auto pts = points(s, 600, 6);
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE}) {
        const auto by_default = eval_cuda(prec, s, dv, "", pts), rows = eval_cuda(prec, s, dv, "1", pts),
                   tiles = eval_cuda(prec, s, dv, "0", pts);
        const auto &tuned = prec == QMMM_PRECISION_MIXED ? tiles : rows;
        EXPECT_EQ(std::memcmp(by_default.data(), tuned.data(), tuned.size() * sizeof(double)), 0)
            << "default is not the tuned layout, precision " << prec;
        int64_t differ = 0;
        for (size_t p = 0; p < rows.size(); ++p) differ += std::memcmp(&rows[p], &tiles[p], sizeof(double)) != 0;
        // Sums in another order round to the same value for many points (in SINGLE a third differed on the H100).
        EXPECT_GT(differ, static_cast<int64_t>(rows.size() / 10)) << "rows and tiles gave the same bits, precision " << prec;
        double w_rows = 0, w_tiles = 0;
        EXPECT_EQ(outside_claim(prec, s, dv, pts, rows, &w_rows), 0) << "rows: max normwise error " << w_rows;
        EXPECT_EQ(outside_claim(prec, s, dv, pts, tiles, &w_tiles), 0) << "tiles: max normwise error " << w_tiles;
        std::printf("lattice M = %lld, precision %d: max normwise error rows %.3e, tiles %.3e, %lld of %zu points differ\n",
                    (long long)s.n_cells(), prec, w_rows, w_tiles, (long long)differ, rows.size());
        // A prefix of another size: the same bits per point (the throughput path from 9 points on).
        const std::vector<double> head(pts.begin(), pts.begin() + 3 * 100);
        const auto hu = eval_cuda(prec, s, dv, "", head);
        EXPECT_EQ(std::memcmp(hu.data(), tuned.data(), hu.size() * sizeof(double)), 0) << "precision " << prec;
        // The check can fail: a value off by 100 times the claim leaves it.
        double scale = 0, w = 0;
        qmmm_test::reference_u(s, &pts[21], dv, &scale);
        const std::vector<double> p7(pts.begin() + 21, pts.begin() + 24), bent{rows[7] + 100 * qmmm_claims::bound(prec) * scale};
        EXPECT_EQ(outside_claim(prec, s, dv, p7, bent, &w), 1) << w;
    }
}

// Rows forced on cells in general position (every row one cell: the layout's worst case) and on charges of both
// signs (every quarter on the careful sum) stay within the claim.
TEST(FieldCudaRows, ForcedRowsOnRandomCellsAndMixedSigns) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    System s = qmmm_test::random_system(20011, 4, 91);
    const auto pts = points(s, 300, 92);
    System t = qmmm_test::lattice_system(30, 30, 30, 0.2, 93);
    for (size_t m = 0; m < t.cell_q.size(); m += 7) t.cell_q[m] = -t.cell_q[m];
    const auto qts = points(t, 300, 94);
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE}) {
        double w = 0;
        EXPECT_EQ(outside_claim(prec, s, 0.01, pts, eval_cuda(prec, s, 0.01, "1", pts), &w), 0)
            << "random cells, precision " << prec << ": " << w;
        EXPECT_EQ(outside_claim(prec, t, 0.008, qts, eval_cuda(prec, t, 0.008, "", qts), &w), 0)
            << "mixed signs, precision " << prec << ": " << w;
    }
}

// MIXED's rows on a real density cube (water 2's, the cells of MixedErrorsAverageOutOnWaterDimer) and water 1's
// electrons: errors that average out over points and stay within the claim, on the row and the tile layout, against
// the CPU double (the mean error is what a VMC energy sees).
TEST(FieldCudaRows, MixedRowsAverageOutOnWaterDimer) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    double dv = 0;
    const System s = qmmm_test::water2_environment(QMMM_SOURCE_DIR, &dv);
    ASSERT_GT(s.n_cells(), 0) << qmmm_error_message();
    const int n = 16384, n1 = 1024;
    const auto pts = qmmm_test::water1_electron_points(n, 12);
    std::vector<double> ref(n, NAN);
    {
        qmmm_options o;
        qmmm_options_default(&o);
        o.backend = QMMM_BACKEND_CPU, o.precision = QMMM_PRECISION_DOUBLE, o.cell_volume = dv;
        qmmm_field f = nullptr;
        ASSERT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), s.n_nuclei(),
                                    s.nuc_xyz.data(), s.nuc_z.data(), &o),
                  QMMM_SUCCESS)
            << qmmm_error_message();
        ASSERT_EQ(qmmm_field_eval(f, n, pts.data(), ref.data()), QMMM_SUCCESS) << qmmm_error_message();
        qmmm_field_destroy(f);
    }
    const auto rows = eval_cuda(QMMM_PRECISION_MIXED, s, dv, "1", pts),
               tiles = eval_cuda(QMMM_PRECISION_MIXED, s, dv, "0", pts),
               by_default = eval_cuda(QMMM_PRECISION_MIXED, s, dv, "", pts);
    // MIXED keeps the tile layout on cube cells by default (the tuning table: measured faster than its rows).
    EXPECT_EQ(std::memcmp(by_default.data(), tiles.data(), tiles.size() * sizeof(double)), 0)
        << "MIXED's default on cube cells is not the tile layout";
    int64_t differ = 0;
    for (int p = 0; p < n; ++p) differ += std::memcmp(&rows[p], &tiles[p], sizeof(double)) != 0;
    EXPECT_GT(differ, n / 10) << "rows and tiles gave the same bits";
    const double mr = qmmm_test::mean_error(rows, ref), mt = qmmm_test::mean_error(tiles, ref);
    const double er = qmmm_test::max_normwise_error(s, pts, rows, ref, dv, n1),
                 et = qmmm_test::max_normwise_error(s, pts, tiles, ref, dv, n1);
    std::printf("water 2's cube, M = %lld, %d points: mean error rows %.3e, tiles %.3e hartree; max normwise error "
                "(first %d) rows %.3e, tiles %.3e; %lld differ\n",
                (long long)s.n_cells(), n, mr, mt, n1, er, et, (long long)differ);
    EXPECT_LT(std::fabs(mr), qmmm_claims::kMixedMeanPerPoint);
    EXPECT_LT(std::fabs(mt), qmmm_claims::kMixedMeanPerPoint);
    EXPECT_LT(er, qmmm_claims::kMixed);
    EXPECT_LT(et, qmmm_claims::kMixed);
}

// The tile-shape knob: "PxG" and the older "P*1000+G" name one shape and give the default's bits (every shape sums a
// point's terms in one order); a shape the build does not have, or a rows value other than 0 and 1, fails the create
// with QMMM_ERR_INVALID_ARG and a message naming the knob.
TEST(FieldCudaRows, TileAndRowsKnobsAreCheckedAndKeepTheBits) {
    QMMM_REQUIRE_GPU_OR_SKIP();
    const System s = qmmm_test::random_system(5003, 3, 17);
    const double dv = 0.01;  // points() puts some on cell centres
    const auto pts = points(s, 700, 18);
    for (int prec : {QMMM_PRECISION_SINGLE, QMMM_PRECISION_MIXED, QMMM_PRECISION_DOUBLE}) {
        const auto by_default = eval_cuda(prec, s, dv, "", pts);
        for (const char *tile : {"4x32", "4032", "8x32", "1x64"}) {
            setenv("QMMM_CUDA_TILE", tile, 1);
            const auto u = eval_cuda(prec, s, dv, "", pts);
            unsetenv("QMMM_CUDA_TILE");
            EXPECT_EQ(std::memcmp(u.data(), by_default.data(), u.size() * sizeof(double)), 0)
                << "QMMM_CUDA_TILE=" << tile << ", precision " << prec;
        }
    }
    qmmm_options o;
    qmmm_options_default(&o);
    o.backend = QMMM_BACKEND_CUDA;
    for (const char *bad_tile : {"3x32", "4x", "9999", "four"}) {
        setenv("QMMM_CUDA_TILE", bad_tile, 1);
        qmmm_field f = nullptr;
        EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), 0, nullptr, nullptr, &o),
                  QMMM_ERR_INVALID_ARG) << bad_tile;
        EXPECT_NE(std::string(qmmm_error_message()).find("QMMM_CUDA_TILE"), std::string::npos) << qmmm_error_message();
        EXPECT_EQ(f, nullptr);
        unsetenv("QMMM_CUDA_TILE");
    }
    setenv("QMMM_CUDA_ROWS", "2", 1);
    qmmm_field f = nullptr;
    EXPECT_EQ(qmmm_field_create(&f, s.n_cells(), s.cell_xyz.data(), s.cell_q.data(), 0, nullptr, nullptr, &o),
              QMMM_ERR_INVALID_ARG);
    EXPECT_NE(std::string(qmmm_error_message()).find("QMMM_CUDA_ROWS"), std::string::npos) << qmmm_error_message();
    unsetenv("QMMM_CUDA_ROWS");
}
