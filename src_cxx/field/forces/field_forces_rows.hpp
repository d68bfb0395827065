// field_forces_rows.hpp -- the gradient's row layout on lattice cells, one builder for the CPU's AVX-512 loops
// (field_grad_cpu.cpp) and the GPU kernels (field_grad_gpu.cu): runs of consecutive plain sites that share the two
// coordinates across one axis and whose charges have one sign, cut at the bounds of groups of sites (the CPU's chunks,
// the GPU's tiles), so that a kernel takes a group's rows with its sites. Plain C++ (tested without a GPU).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace qmmm {

// A row: plain sites [first, end) of one group, which share the coordinates (v, w) across the rows' axis and whose
// charges have one sign, sgn (+-1; 1 for a row of zero charges). lim: 1e29 x the smallest non-zero |charge| of the
// row (inf for a row of zero charges); a site within the singular radius (1e-10 bohr) makes sgn x the row's sum of
// c/d^3 at least ten times that (or inf, or NaN where the point is on a site of charge 0).
template <class T>
struct ForceRow {
    T v, w, sgn, lim;
    int64_t first, end;
};

// The row layout of n plain sites: axis (0..2) the one rows run along, -1 for none; group g (sites [g group, (g + 1)
// group)) has rows[group_rows[g] .. group_rows[g + 1]).
template <class T>
struct ForceRows {
    int axis = -1;
    std::vector<ForceRow<T>> rows;
    std::vector<int64_t> group_rows;
};

// The rows of sites at x, y, z (as the kernels hold them, in T: equal there is what makes a row) with charges q, along
// the axis with the most neighbours that share the other two coordinates. None (axis -1) where rows would average
// fewer than min_row sites (point charges, which share no coordinates).
template <class T>
ForceRows<T> force_rows(const T *x, const T *y, const T *z, const double *q, int64_t n, int64_t group,
                        int64_t min_row) {
    ForceRows<T> out;
    if (n < 2) return out;
    const T *c[3] = {x, y, z};
    int axis = 0;
    int64_t best = -1;
    for (int a = 0; a < 3; ++a) {
        const T *v = c[(a + 1) % 3], *w = c[(a + 2) % 3];
        int64_t same = 0;
        for (int64_t k = 1; k < n; ++k) same += v[k] == v[k - 1] && w[k] == w[k - 1];
        if (same > best) best = same, axis = a;
    }
    // Every site that shares no coordinates with the one before it starts a row: where those alone make rows too
    // short (point charges), none, before a row is built.
    if ((n - best) * min_row > n) return out;
    const T *v = c[(axis + 1) % 3], *w = c[(axis + 2) % 3];
    const T inf = std::numeric_limits<T>::infinity();
    std::vector<ForceRow<T>> &rows = out.rows;
    for (int64_t b = 0; b < n; b += group) {
        out.group_rows.push_back(static_cast<int64_t>(rows.size()));
        for (int64_t k = b; k < std::min(n, b + group); ++k) {
            const T sgn = q[k] > 0 ? T(1) : q[k] < 0 ? T(-1) : T(0);
            ForceRow<T> *r = static_cast<int64_t>(rows.size()) > out.group_rows.back() ? &rows.back() : nullptr;
            if (r && v[k] == r->v && w[k] == r->w && (sgn == 0 || r->sgn == 0 || sgn == r->sgn)) {
                r->end = k + 1;
            } else {
                rows.push_back(ForceRow<T>{v[k], w[k], T(0), inf, k, k + 1});
                r = &rows.back();
            }
            if (sgn != 0) r->sgn = sgn, r->lim = std::min(r->lim, static_cast<T>(1e29 * std::fabs(q[k])));
        }
    }
    for (ForceRow<T> &r : rows)
        if (r.sgn == 0) r.sgn = 1;  // charges 0 only: a point on one of them gives NaN, which lim catches
    out.group_rows.push_back(static_cast<int64_t>(rows.size()));
    if (static_cast<int64_t>(rows.size()) * min_row > n) return ForceRows<T>{};
    out.axis = axis;
    return out;
}

}  // namespace qmmm
