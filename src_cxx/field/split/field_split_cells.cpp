// field_split_cells.cpp -- the split's cell list (field_split_build.hpp) and what reads it on the host: the singular
// cells under a point outside the grid.
#include <algorithm>
#include <cmath>
#include <vector>

#include "error.hpp"
#include "split/field_split_build.hpp"

namespace qmmm {

namespace split {

// Cell-list bins: side R_c / 3 (glycine: the chords of a sphere's columns then hold 1.5x the cells within R_c, in
// ~28 ranges; R_c / 2: 1.9x), at most 4 bins per cell (or 2^22 in all) for sparse or spread-out environments.
constexpr double kBinsPerRc = 3.0;
constexpr int64_t kMinBinCap = int64_t{1} << 22;


void build_cells(SplitModel &m, const FieldData &d, double rc) {
    SplitCellsView &c = m.cv;
    c = SplitCellsView{};
    if (d.n_cells == 0) return;
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = d.cell_xyz[k];
    for (int64_t i = 0; i < d.n_cells; ++i)
        for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], d.cell_xyz[3 * i + k]), hi[k] = std::max(hi[k], d.cell_xyz[3 * i + k]);
    const double cap = static_cast<double>(std::max(kMinBinCap, 4 * d.n_cells));
    double bin = rc / kBinsPerRc;
    for (;;) {
        double total = 1;
        for (int k = 0; k < 3; ++k) total *= std::floor((hi[k] - lo[k]) / bin) + 1;
        if (total <= cap) break;
        bin *= std::max(1.01, std::cbrt(total / cap));
    }
    for (int k = 0; k < 3; ++k) c.lo[k] = lo[k], c.nb[k] = static_cast<int32_t>(std::floor((hi[k] - lo[k]) / bin) + 1);
    c.bin = bin, c.inv_bin = 1.0 / bin;
    const int64_t nbins = static_cast<int64_t>(c.nb[0]) * c.nb[1] * c.nb[2];
    std::vector<int64_t> bin_of(static_cast<size_t>(d.n_cells));
    m.start.assign(static_cast<size_t>(nbins + 1), 0);
    for (int64_t i = 0; i < d.n_cells; ++i) {
        int64_t ix[3];
        for (int k = 0; k < 3; ++k)
            ix[k] = std::min<int64_t>(c.nb[k] - 1, static_cast<int64_t>(std::floor((d.cell_xyz[3 * i + k] - lo[k]) * c.inv_bin)));
        bin_of[i] = (ix[2] * c.nb[1] + ix[1]) * c.nb[0] + ix[0];
        ++m.start[bin_of[i] + 1];
    }
    for (int64_t b = 0; b < nbins; ++b) m.start[b + 1] += m.start[b];
    // By bin, then x, then the caller's index: a fixed order, whatever the thread count. A counting sort by bin
    // (stable: index order within a bin), then each bin by x. (With one sort of all cells, the cell list took 0.24 s
    // of the GPU backend's 2.7 s setup for 1.1M cells on the H100's host.)
    std::vector<int64_t> order(static_cast<size_t>(d.n_cells));
    {
        std::vector<int64_t> next(m.start.begin(), m.start.end() - 1);
        for (int64_t i = 0; i < d.n_cells; ++i) order[next[bin_of[i]]++] = i;
    }
    for (int64_t b = 0; b < nbins; ++b)
        if (m.start[b + 1] - m.start[b] > 1)
            std::sort(order.begin() + m.start[b], order.begin() + m.start[b + 1], [&](int64_t i, int64_t j) {
                return d.cell_xyz[3 * i] != d.cell_xyz[3 * j] ? d.cell_xyz[3 * i] < d.cell_xyz[3 * j] : i < j;
            });
    m.x.resize(static_cast<size_t>(d.n_cells)), m.y.resize(m.x.size()), m.z.resize(m.x.size()), m.q.resize(m.x.size());
    for (int64_t j = 0; j < d.n_cells; ++j) {
        const int64_t i = order[j];
        m.x[j] = d.cell_xyz[3 * i], m.y[j] = d.cell_xyz[3 * i + 1], m.z[j] = d.cell_xyz[3 * i + 2], m.q[j] = d.cell_q[i];
    }
    // Padding for vector loads past a range's end (field_split_cpu.cpp): far away, no charge, in no bin.
    for (int i = 0; i < kSplitCellPadding; ++i) m.x.push_back(1e300), m.y.push_back(1e300), m.z.push_back(1e300), m.q.push_back(0.0);
    c.start = m.start.data(), c.x = m.x.data(), c.y = m.y.data(), c.z = m.z.data(), c.q = m.q.data();
}

}  // namespace split

double split_singular_fix(const SplitModel &m, const double *p) {
    double fix = 0;
    const SplitCellsView &c = m.cv;
    split_for_ranges(c, p, kSingularRadius2, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            const double dx = p[0] - c.x[i], dy = p[1] - c.y[i], dz = p[2] - c.z[i];
            if (dx * dx + dy * dy + dz * dz < kSingularRadius2) fix += c.q[i] * (m.self - m.build_self);
        }
    });
    return fix;
}

}  // namespace qmmm
