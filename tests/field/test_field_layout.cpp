// test_field_layout.cpp -- the host side of the CUDA direct sum's layouts (src_cxx/field/direct/field_layout.hpp),
// built and checked without a GPU: the row layout of lattice cells, of cells with no shared rows and of repeated
// positions against an expectation built here by grouping the cells of each quarter by (z, y); the quarter bounds
// against their closed forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "direct/field_layout.hpp"

namespace {

using qmmm::FieldRows;
using qmmm::kFieldChunk;
using qmmm::kFieldQuarterCells;
using qmmm::kFieldQuarters;

// The expected rows of one quarter: its cells grouped by (z, y), groups in increasing (z, y), each group's cells by
// (x, index).
std::vector<std::vector<int64_t>> expected_rows(const std::vector<double> &xyz, int64_t qb, int64_t qe) {
    std::map<std::pair<double, double>, std::vector<std::pair<double, int64_t>>> groups;
    for (int64_t m = qb; m < qe; ++m) groups[{xyz[3 * m + 2], xyz[3 * m + 1]}].push_back({xyz[3 * m], m});
    std::vector<std::vector<int64_t>> rows;
    for (auto &g : groups) {
        std::sort(g.second.begin(), g.second.end());
        rows.emplace_back();
        for (const auto &c : g.second) rows.back().push_back(c.second);
    }
    return rows;
}

// Checks r against the expectation for n cells at xyz; returns the total number of rows expected.
int64_t check_rows(const FieldRows &r, const std::vector<double> &xyz) {
    const int64_t n = static_cast<int64_t>(xyz.size() / 3);
    const int64_t chunks = (n + kFieldChunk - 1) / kFieldChunk;
    EXPECT_EQ(r.n_chunks, chunks);
    const size_t padded = static_cast<size_t>(chunks * kFieldChunk);
    EXPECT_EQ(r.cell.size(), padded);
    EXPECT_EQ(r.row_first.size(), padded);
    EXPECT_EQ(r.row_end.size(), padded);
    EXPECT_EQ(r.quarter_row_begin.size(), static_cast<size_t>(chunks * kFieldQuarters));
    EXPECT_EQ(r.quarter_rows.size(), static_cast<size_t>(chunks * kFieldQuarters));
    if (::testing::Test::HasFailure()) return 0;
    EXPECT_EQ(std::count(r.cell.begin(), r.cell.end(), -1), static_cast<std::ptrdiff_t>(padded) - n);  // padding
    int64_t total = 0;
    for (int64_t ch = 0; ch < chunks; ++ch) {
        const int64_t b = ch * kFieldChunk;
        int chunk_rows = 0;
        for (int g = 0; g < kFieldQuarters; ++g) {
            const size_t qi = static_cast<size_t>(ch * kFieldQuarters + g);
            const int64_t qb = b + g * kFieldQuarterCells, qe = std::min(n, qb + kFieldQuarterCells);
            const auto want = expected_rows(xyz, qb, std::max(qb, qe));
            EXPECT_EQ(r.quarter_row_begin[qi], chunk_rows) << "chunk " << ch << " quarter " << g;
            EXPECT_EQ(r.quarter_rows[qi], static_cast<int32_t>(want.size())) << "chunk " << ch << " quarter " << g;
            if (r.quarter_rows[qi] != static_cast<int32_t>(want.size())) return 0;
            int64_t slot = g * kFieldQuarterCells;  // chunk-local
            for (size_t k = 0; k < want.size(); ++k) {
                const size_t at = static_cast<size_t>(b + chunk_rows + static_cast<int>(k));
                EXPECT_EQ(r.row_first[at], slot) << "chunk " << ch << " row " << chunk_rows + k;
                EXPECT_EQ(r.row_end[at], slot + static_cast<int64_t>(want[k].size()));
                for (int64_t c : want[k]) EXPECT_EQ(r.cell[static_cast<size_t>(b + slot++)], c) << "slot " << b + slot - 1;
            }
            for (; slot < (g + 1) * kFieldQuarterCells; ++slot) EXPECT_EQ(r.cell[static_cast<size_t>(b + slot)], -1);
            chunk_rows += static_cast<int>(want.size());
        }
        for (int k = chunk_rows; k < kFieldChunk; ++k) {  // beyond the chunk's rows: zero
            EXPECT_EQ(r.row_first[static_cast<size_t>(b + k)], 0);
            EXPECT_EQ(r.row_end[static_cast<size_t>(b + k)], 0);
        }
        total += chunk_rows;
    }
    EXPECT_EQ(r.n_rows, total);
    return total;
}

TEST(FieldLayout, QuartersTileTheChunk) {
    EXPECT_EQ(kFieldQuarters * kFieldQuarterCells, kFieldChunk);
}

// A shuffled 9 x 10 x 30 lattice (2,700 cells: two full chunks and a third with 652 cells, its last quarter short
// of 256 and padded): a quarter of 256 cells in random order holds up to 256 distinct (y, z) rows.
TEST(FieldLayout, RowsOfAShuffledLattice) {
    std::vector<double> xyz;
    for (int i = 0; i < 9; ++i)
        for (int j = 0; j < 10; ++j)
            for (int k = 0; k < 30; ++k) xyz.insert(xyz.end(), {-2.0 + 0.25 * i, 1.5 - 0.25 * j, 0.25 * k - 3.0});
    std::vector<int64_t> perm(xyz.size() / 3);
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(7));
    std::vector<double> shuffled;
    for (int64_t p : perm) shuffled.insert(shuffled.end(), {xyz[3 * p], xyz[3 * p + 1], xyz[3 * p + 2]});
    const FieldRows r = qmmm::field_rows(static_cast<int64_t>(perm.size()), shuffled.data());
    EXPECT_GT(check_rows(r, shuffled), 0);
}

// Cells in lattice order: z outermost, so a quarter of 256 cells with x running fastest (8 a row) holds 32 rows
// of 8 cells: 2,048 cells, 256 rows.
TEST(FieldLayout, RowsOfAnOrderedLatticeHoldWholeRows) {
    std::vector<double> xyz;
    for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 32; ++j)
            for (int i = 0; i < 8; ++i) xyz.insert(xyz.end(), {0.5 * i, 0.5 * j, 0.5 * k});
    const FieldRows r = qmmm::field_rows(2048, xyz.data());
    EXPECT_EQ(check_rows(r, xyz), 256);
    for (int64_t k = 0; k < r.n_rows; ++k) {  // rows of 8 cells in x order: the cells' own order
        const int64_t ch = k / 128, row = k % 128;
        EXPECT_EQ(r.row_end[ch * kFieldChunk + row] - r.row_first[ch * kFieldChunk + row], 8);
    }
    for (int64_t s = 0; s < 2048; ++s) EXPECT_EQ(r.cell[s], s);
}

// Random cells share no (y, z): one row a cell; repeated positions share a row, kept in index order.
TEST(FieldLayout, RandomCellsOneRowEachAndRepeatsInIndexOrder) {
    std::mt19937_64 g(11);
    std::uniform_real_distribution<double> u(-5, 5);
    std::vector<double> xyz;
    for (int m = 0; m < 700; ++m) xyz.insert(xyz.end(), {u(g), u(g), u(g)});
    const FieldRows r = qmmm::field_rows(700, xyz.data());
    EXPECT_EQ(check_rows(r, xyz), 700);

    std::vector<double> rep;
    for (int m = 0; m < 300; ++m) {
        const double x = m % 3, y = (m / 3) % 2;
        rep.insert(rep.end(), {x, y, 1.0});  // 6 distinct positions, 50 cells each
    }
    const FieldRows q = qmmm::field_rows(300, rep.data());
    EXPECT_EQ(check_rows(q, rep), 2 + 2);  // quarter 0 (256 cells) and quarter 1 (44): y = 0 and y = 1 each
}

TEST(FieldLayout, EmptyFieldHasNoChunks) {
    const FieldRows r = qmmm::field_rows(0, nullptr);
    EXPECT_EQ(r.n_chunks, 0);
    EXPECT_EQ(r.n_rows, 0);
    EXPECT_TRUE(r.cell.empty());
}

// QuarterInfo::bound: 5e9 x the smallest non-zero |q| for one sign, 0 for mixed signs, +inf for none, 1e-30 at least.
TEST(FieldLayout, QuarterBounds) {
    const double one_sign[6] = {0, 2, 0.5, 0, 3, 0};
    EXPECT_EQ(qmmm::field_quarter_bound(one_sign, 6), static_cast<float>(5e9 * 0.5));
    const double negative[3] = {-4, -0.25, 0};
    EXPECT_EQ(qmmm::field_quarter_bound(negative, 3), static_cast<float>(5e9 * 0.25));
    const double mixed[3] = {1, 0, -1e-3};
    EXPECT_EQ(qmmm::field_quarter_bound(mixed, 3), 0.0f);
    const double zeros[4] = {0, 0, 0, 0};
    EXPECT_EQ(qmmm::field_quarter_bound(zeros, 4), std::numeric_limits<float>::infinity());
    const double tiny[2] = {1e-50, 0};
    EXPECT_EQ(qmmm::field_quarter_bound(tiny, 2), 1e-30f);
    const float single[3] = {0.125f, 0, 8};
    EXPECT_EQ(qmmm::field_quarter_bound(single, 3), static_cast<float>(5e9 * 0.125));
}

}  // namespace
