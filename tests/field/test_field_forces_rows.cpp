// test_field_forces_rows.cpp -- the gradient's row layout (src_cxx/field/forces/field_forces_rows.hpp), which the CPU's
// AVX-512 loops and the GPU kernels share, checked without a GPU: on lattices with the fastest axis z or x, charges of
// one sign, of both signs and empty cells, and on random sites (no rows). Each layout is checked for what the kernels
// rely on (every site once, in order; a row inside one group; one (v, w) and one sign a row; lim) and for maximal
// rows (two neighbouring rows of a group could not be one).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "forces/field_forces_rows.hpp"

namespace {

struct Sites {
    std::vector<float> x, y, z;
    std::vector<double> q;
    int64_t n() const { return static_cast<int64_t>(q.size()); }
};

// nx x ny x nz cells, the fastest axis z (fast_z) or x; charge(m) for the m-th cell in that order.
template <class F>
Sites lattice(int nx, int ny, int nz, bool fast_z, F charge) {
    Sites s;
    auto put = [&](int i, int j, int k) {
        s.x.push_back(0.5f * i), s.y.push_back(0.5f * j), s.z.push_back(0.5f * k);
        s.q.push_back(charge(s.n()));
    };
    for (int a = 0; a < (fast_z ? nx : nz); ++a)
        for (int j = 0; j < ny; ++j)
            for (int c = 0; c < (fast_z ? nz : nx); ++c) fast_z ? put(a, j, c) : put(c, j, a);
    return s;
}

int sign(double q) { return q > 0 ? 1 : q < 0 ? -1 : 0; }

// What the kernels rely on, and maximal rows.
void check_layout(const Sites &s, const qmmm::ForceRows<float> &r, int64_t group) {
    const float *c[3] = {s.x.data(), s.y.data(), s.z.data()};
    const float *v = c[(r.axis + 1) % 3], *w = c[(r.axis + 2) % 3];
    const int64_t groups = (s.n() + group - 1) / group;
    ASSERT_EQ(static_cast<int64_t>(r.group_rows.size()), groups + 1);
    ASSERT_EQ(r.group_rows.back(), static_cast<int64_t>(r.rows.size()));
    int64_t next = 0;
    for (int64_t g = 0; g < groups; ++g) {
        for (int64_t i = r.group_rows[g]; i < r.group_rows[g + 1]; ++i) {
            const qmmm::ForceRow<float> &row = r.rows[i];
            ASSERT_EQ(row.first, next) << "row " << i;  // every site once, in order
            ASSERT_GT(row.end, row.first);
            ASSERT_EQ(row.first / group, g) << "row " << i;
            ASSERT_EQ((row.end - 1) / group, g) << "row " << i;
            double qmin = INFINITY;
            int sg = 0;
            for (int64_t k = row.first; k < row.end; ++k) {
                EXPECT_EQ(v[k], row.v);
                EXPECT_EQ(w[k], row.w);
                if (sign(s.q[k]) != 0) {
                    EXPECT_TRUE(sg == 0 || sg == sign(s.q[k])) << "row " << i << " mixes signs";
                    sg = sign(s.q[k]), qmin = std::min(qmin, std::fabs(s.q[k]));
                }
            }
            EXPECT_EQ(row.sgn, sg == 0 ? 1.0f : float(sg)) << "row " << i;
            EXPECT_EQ(row.lim, sg == 0 ? std::numeric_limits<float>::infinity() : float(1e29 * qmin)) << "row " << i;
            if (i + 1 < r.group_rows[g + 1]) {  // the next row of the group could not have been this one's
                const int64_t k = row.end;
                const bool same_line = v[k] == row.v && w[k] == row.w;
                const bool sign_ok = sign(s.q[k]) == 0 || sg == 0 || sign(s.q[k]) == sg;
                EXPECT_FALSE(same_line && sign_ok) << "rows " << i << " and " << i + 1 << " could be one";
            }
            next = row.end;
        }
    }
    EXPECT_EQ(next, s.n());
}

TEST(ForcesRows, LatticesOfOneSign) {
    for (bool fast_z : {true, false}) {
        const Sites s = lattice(7, 5, 11, fast_z, [](int64_t m) { return 1e-3 + 1e-6 * static_cast<double>(m % 13); });
        for (int64_t group : {int64_t(16), int64_t(128), int64_t(1024)}) {
            // min_row 2: the x-fastest lines are 7 long, and a group of 16 cuts them further.
            const qmmm::ForceRows<float> r = qmmm::force_rows<float>(s.x.data(), s.y.data(), s.z.data(), s.q.data(),
                                                                    s.n(), group, 2);
            ASSERT_EQ(r.axis, fast_z ? 2 : 0) << "group " << group;
            check_layout(s, r, group);
            // One row a line of the fastest axis, cut where a group ends inside it.
            int64_t lines = 0;
            for (int64_t k = 0; k < s.n(); ++k) lines += k == 0 || k % (fast_z ? 11 : 7) == 0 || k % group == 0;
            EXPECT_EQ(static_cast<int64_t>(r.rows.size()), lines) << "group " << group;
        }
    }
}

TEST(ForcesRows, SignsAndEmptyCells) {
    // Runs of five of one sign, every seventh cell empty; the lines are 12 long.
    const Sites s = lattice(6, 4, 12, true, [](int64_t m) {
        return m % 7 == 0 ? 0.0 : (m / 5) % 2 == 0 ? 2e-3 : -3e-3;
    });
    const qmmm::ForceRows<float> r =
        qmmm::force_rows<float>(s.x.data(), s.y.data(), s.z.data(), s.q.data(), s.n(), 128, 2);
    ASSERT_EQ(r.axis, 2);
    check_layout(s, r, 128);
    // A line of zeros only: sgn 1, lim inf.
    const Sites z = lattice(2, 2, 12, true, [](int64_t m) { return m < 12 ? 0.0 : 1e-3; });
    const qmmm::ForceRows<float> rz =
        qmmm::force_rows<float>(z.x.data(), z.y.data(), z.z.data(), z.q.data(), z.n(), 128, 8);
    ASSERT_EQ(rz.axis, 2);
    check_layout(z, rz, 128);
    EXPECT_EQ(rz.rows[0].end, 12);
    EXPECT_EQ(rz.rows[0].lim, std::numeric_limits<float>::infinity());
}

TEST(ForcesRows, RandomSitesHaveNone) {
    std::mt19937_64 g(3);
    std::uniform_real_distribution<double> pos(-10, 10);
    Sites s;
    for (int m = 0; m < 5000; ++m)
        s.x.push_back(float(pos(g))), s.y.push_back(float(pos(g))), s.z.push_back(float(pos(g))), s.q.push_back(0.1);
    const qmmm::ForceRows<float> r =
        qmmm::force_rows<float>(s.x.data(), s.y.data(), s.z.data(), s.q.data(), s.n(), 1024, 8);
    EXPECT_EQ(r.axis, -1);
    EXPECT_TRUE(r.rows.empty());
    // Too few sites for a row: none either.
    EXPECT_EQ(qmmm::force_rows<float>(s.x.data(), s.y.data(), s.z.data(), s.q.data(), 1, 1024, 8).axis, -1);
}

}  // namespace
