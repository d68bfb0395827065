// field_layout.cpp -- the host side of the CUDA direct sum's cell layouts (field_layout.hpp).
#include "direct/field_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qmmm {

namespace {

template <class T>
float quarter_bound(const T *q, int n) {
    double lo = std::numeric_limits<double>::infinity();
    bool pos = false, neg = false;
    for (int i = 0; i < n; ++i) {
        const double v = static_cast<double>(q[i]);
        if (v == 0) continue;
        pos |= v > 0, neg |= v < 0;
        lo = std::min(lo, std::fabs(v));
    }
    if (pos && neg) return 0.0f;
    if (!pos && !neg) return std::numeric_limits<float>::infinity();
    // Never 0 for one sign (0 means "mixed"): a tiny bound only sends more quarters down the careful path.
    return static_cast<float>(std::max(5e9 * lo, 1e-30));
}

}  // namespace

float field_quarter_bound(const double *q, int n) { return quarter_bound(q, n); }
float field_quarter_bound(const float *q, int n) { return quarter_bound(q, n); }

FieldRows field_rows(int64_t n_cells, const double *xyz) {
    FieldRows r;
    r.n_chunks = (n_cells + kFieldChunk - 1) / kFieldChunk;
    const size_t padded = static_cast<size_t>(r.n_chunks * kFieldChunk);
    r.cell.assign(padded, -1);
    r.row_first.assign(padded, 0), r.row_end.assign(padded, 0);
    r.quarter_row_begin.assign(static_cast<size_t>(r.n_chunks * kFieldQuarters), 0);
    r.quarter_rows.assign(static_cast<size_t>(r.n_chunks * kFieldQuarters), 0);
    auto X = [&](int64_t m, int k) { return xyz[3 * m + k]; };
    std::vector<int64_t> idx;
    for (int64_t ch = 0; ch < r.n_chunks; ++ch) {
        const int64_t b = ch * kFieldChunk, e = std::min(n_cells, b + kFieldChunk);
        int32_t row = 0;
        for (int g = 0; g < kFieldQuarters; ++g) {
            const size_t qi = static_cast<size_t>(ch * kFieldQuarters + g);
            r.quarter_row_begin[qi] = row;
            const int64_t qb = b + g * kFieldQuarterCells, qe = std::min(e, qb + kFieldQuarterCells);
            idx.clear();
            for (int64_t m = qb; m < qe; ++m) idx.push_back(m);
            std::sort(idx.begin(), idx.end(), [&](int64_t u, int64_t v) {
                for (int k : {2, 1, 0})
                    if (X(u, k) != X(v, k)) return X(u, k) < X(v, k);
                return u < v;
            });
            for (size_t i = 0; i < idx.size(); ++i) {
                const int64_t m = idx[i], slot = qb + static_cast<int64_t>(i);
                r.cell[static_cast<size_t>(slot)] = m;
                const int32_t local = static_cast<int32_t>(slot - b);
                if (i == 0 || X(m, 1) != X(idx[i - 1], 1) || X(m, 2) != X(idx[i - 1], 2)) {
                    r.row_first[static_cast<size_t>(b + row)] = local;
                    ++row, ++r.quarter_rows[qi], ++r.n_rows;
                }
                r.row_end[static_cast<size_t>(b + row - 1)] = local + 1;
            }
        }
    }
    return r;
}

}  // namespace qmmm
