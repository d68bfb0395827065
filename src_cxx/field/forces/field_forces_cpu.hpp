// field_forces_cpu.hpp -- the CPU kernels of the forces (field_grad_cpu.cpp: the gradient at points;
// field_site_field_cpu.cpp: the field at the sites; field_site_grad_cpu.cpp: its gradient), on the sources in the
// working type T (double for DOUBLE and MIXED, float for SINGLE: offsets from the centre of the sites' box, as the
// value path's local origin).
#pragma once
#include <cstdint>
#include <vector>

namespace qmmm {

// A row of the gradient's row layout (lattice cells, field_grad_cpu.cpp): plain sites [first, end), within one chunk of
// kFieldChunk, that share the two coordinates (v, w) across the rows' axis and whose charges have one sign, sgn (+-1).
// lim: 1e29 x the smallest non-zero |charge| of the row (inf for a row of zero charges); a site within the singular
// radius makes sgn x the row's sum of c/d^3 at least ten times that (or inf, or NaN where the point is on a site of
// charge 0).
template <class T>
struct ForceRow {
    T v, w, sgn, lim;
    int64_t first, end;
};

template <class T>
struct ForceSourcesCpu {
    static constexpr T kPre = sizeof(T) == 4 ? T(0.125) : T(1);
    int64_t n_plain = 0, n_self = 0, n_screened = 0;
    int kind = 0;
    // c: the plain sites' charges times kPre, and the loops' points carry their weights times kPre (float: 1/8, the
    // scale the AVX-512 pair term takes, so that it spends no multiply on it; a power of two: exact)
    std::vector<T> x, y, z, c, sx, sy, sz, sc, sa, sb, cut2;
    T self_inv_r = 0;
    double origin[3] = {0, 0, 0};  // subtracted from every point (in double) before it is rounded to T
    int n_threads = 0;
    // The row layout where the plain sites come in rows (lattice cells) and the AVX-512 loops run: row_axis (0..2) the
    // axis rows run along, -1 without; chunk c of kFieldChunk sites has rows[chunk_rows[c] .. chunk_rows[c + 1]).
    int row_axis = -1;
    std::vector<ForceRow<T>> rows;
    std::vector<int64_t> chunk_rows;
};

// Each point's U and dU/dr: u[i], g[3i..3i+2]. Returns true when every output is finite.
template <class T>
bool force_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, double *u, double *g);

// The site accumulator's running sums in the kernels' order (the plain sites, then the screened ones at n_plain), one
// array each for phi, Ex, Ey, Ez: a call reads in and writes out[q][k] = in[q][k] + weight * value, the product
// rounded before the sum (the bits of the caller adding weight times the plain call's values). out is other storage
// than in (the accumulator's spare copy), so a call that fails leaves the sums in `in` as they were.
struct SiteAccum {
    const double *in[4];
    double *out[4];
    double weight;
};

// Each site's potential and field from n points with weights w: plain sites into phi_p[k], e_p[3k..], screened ones
// into phi_s[k], e_s[3k..]; with acc, into the accumulator's arrays instead (the outputs are not written). Returns
// true when every value is finite.
template <class T>
bool force_sites_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *phi_p,
                     double *e_p, double *phi_s, double *e_s, const SiteAccum *acc = nullptr);

// Each plain site's field gradient from n points with weights w: egrad[6k..6k+5] (xx xy xz yy yz zz), k in the plain
// sites' order (field_site_grad_cpu.cpp). Returns true when every output is finite.
template <class T>
bool force_sites_grad_cpu(const ForceSourcesCpu<T> &s, int64_t n, const double *xyz, const double *w, double *egrad);

}  // namespace qmmm
