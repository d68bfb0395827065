// rdf_prepare.cpp -- one frame made ready for counting: box geometry, fixed-point fractional coordinates,
// the method (cell list or brute force) and, for the cell list, atoms sorted by cell (a counting sort).
#include <algorithm>
#include <cmath>
#include <string>

#include "error.hpp"
#include "rdf_backend.hpp"

namespace qmmm::rdf {
namespace {

void cross(const double *u, const double *v, double *w) {
    w[0] = u[1] * v[2] - u[2] * v[1];
    w[1] = u[2] * v[0] - u[0] * v[2];
    w[2] = u[0] * v[1] - u[1] * v[0];
}
double dot(const double *u, const double *v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; }

std::string num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

// Fixed-point fractional coordinates of n atoms (3n doubles) with their keys.
void to_fixed(const double *xyz, int64_t n, const double frac[9], const std::vector<int32_t> &key, Atom *out) {
    constexpr double two32 = 4294967296.0;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        uint32_t u[3];
        for (int d = 0; d < 3; ++d) {
            double s = dot(frac + 3 * d, xyz + 3 * i);
            s -= std::floor(s);
            // s * 2^32 may round up to 2^32 for s just below 1: wrapping it to 0 is the same point.
            u[d] = static_cast<uint32_t>(static_cast<uint64_t>(s * two32));
        }
        out[i] = Atom{u[0], u[1], u[2], key[i]};
    }
}

int32_t cell_of(const Atom &a, const int32_t nc[3]) {
    const auto c = [](uint32_t u, int32_t n) { return static_cast<int32_t>((uint64_t{u} * uint64_t(n)) >> 32); };
    return c(a.x, nc[0]) + nc[0] * (c(a.y, nc[1]) + nc[1] * c(a.z, nc[2]));
}

// Stable counting sort of atoms by cell; start gets n_cells + 1 offsets, cells (if given) each atom's cell.
// The cell of every atom is found in parallel; counting and scattering are one pass each.
void sort_by_cell(std::vector<Atom> &a, const int32_t nc[3], std::vector<int32_t> &start, std::vector<int32_t> *cells,
                  int32_t &max_cell, std::vector<Atom> &sorted, std::vector<int32_t> &c) {
    const int64_t n_cells = int64_t{nc[0]} * nc[1] * nc[2];
    const int64_t n = static_cast<int64_t>(a.size());
    c.resize(n);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) c[i] = cell_of(a[i], nc);
    start.assign(n_cells + 1, 0);
    for (int32_t x : c) ++start[x + 1];
    max_cell = 0;
    for (int64_t k = 0; k < n_cells; ++k) {
        max_cell = std::max(max_cell, start[k + 1]);
        start[k + 1] += start[k];
    }
    std::vector<int32_t> pos(start.begin(), start.end() - 1);
    sorted.resize(n);
    if (cells) cells->resize(n);
    for (int64_t i = 0; i < n; ++i) {
        const int32_t p = pos[c[i]]++;
        sorted[p] = a[i];
        if (cells) (*cells)[p] = c[i];
    }
    a.swap(sorted);
}

}  // namespace

void make_geom(const double *box, double r_min, double r_max, int32_t n_bins, Geom &g, double &volume, double &limit,
               double frac[9], double widths[3]) {
    for (int i = 0; i < 9; ++i)
        if (!std::isfinite(box[i]))
            throw Error(QMMM_ERR_NONFINITE, "box[" + std::to_string(i) + "] is not finite");
    const double *a = box, *b = box + 3, *c = box + 6;
    double bc[3], ca[3], ab[3];
    cross(b, c, bc);
    cross(c, a, ca);
    cross(a, b, ab);
    const double v = dot(a, bc);
    const double la = std::sqrt(dot(a, a)), lb = std::sqrt(dot(b, b)), lc = std::sqrt(dot(c, c));
    if (!(std::fabs(v) > 1e-12 * la * lb * lc) || la == 0 || lb == 0 || lc == 0)
        throw Error(QMMM_ERR_INVALID_ARG, "box: the cell vectors a, b, c span no volume (V = " + num(v) + ")");
    volume = std::fabs(v);
    widths[0] = volume / std::sqrt(dot(bc, bc));
    widths[1] = volume / std::sqrt(dot(ca, ca));
    widths[2] = volume / std::sqrt(dot(ab, ab));
    limit = 0.5 * std::min({widths[0], widths[1], widths[2]});
    // Rows of M^-1 (M has a, b, c as columns): fractional coordinates s = M^-1 r.
    for (int d = 0; d < 3; ++d) frac[d] = bc[d] / v, frac[3 + d] = ca[d] / v, frac[6 + d] = ab[d] / v;
    // The same cell rotated to lower-triangular form; distances are invariant.
    const double bx = dot(b, a) / la, by = std::sqrt(std::max(0.0, dot(b, b) - bx * bx));
    const double cx = dot(c, a) / la, cy = (dot(b, c) - bx * cx) / by;
    const double cz = std::sqrt(std::max(0.0, dot(c, c) - cx * cx - cy * cy));
    const double s = 1.0 / 4294967296.0;
    g.hxx = float(la * s), g.hyx = float(bx * s), g.hyy = float(by * s);
    g.hzx = float(cx * s), g.hzy = float(cy * s), g.hzz = float(cz * s);
    g.triclinic = (g.hyx != 0.f || g.hzx != 0.f || g.hzy != 0.f) ? 1 : 0;
    const float fmin = float(r_min), fmax = float(r_max);
    g.rmin = fmin;
    g.rmin2 = fmin * fmin;
    g.rmax2 = fmax * fmax;
    g.inv_dr = float(n_bins / (r_max - r_min));
    g.n_bins = n_bins;
}

void prepare_frame(Frame &f, const double *box, double r_min, double r_max, int32_t n_bins, int method,
                   const double *xyz1, const std::vector<int32_t> &key1, const double *xyz2,
                   const std::vector<int32_t> &key2, bool identical, double &volume) {
    double frac[9], w[3], limit;
    make_geom(box, r_min, r_max, n_bins, f.g, volume, limit, frac, w);
    if (r_max > limit)
        throw Error(QMMM_ERR_INVALID_ARG, "r_max = " + num(r_max) + " exceeds what this box allows: " + num(limit) +
                                              " (half its smallest perpendicular width)");
    const int64_t n1 = static_cast<int64_t>(key1.size()), n2 = static_cast<int64_t>(key2.size());
    f.identical = identical;
    f.a1.resize(n1);
    to_fixed(xyz1, n1, frac, key1, f.a1.data());
    f.a2.clear();
    if (!identical) {
        f.a2.resize(n2);
        to_fixed(xyz2, n2, frac, key2, f.a2.data());
    }
    const int64_t n_search = identical ? n1 : n2;

    // Cells at least r_max/2 wide (a little more, so float rounding at r_max never needs a third ring):
    // every pair closer than r_max is then within 2 cells along each axis.
    const double r_eff = r_max * (1 + 1e-4);
    int32_t nc[3];
    bool fits = true;
    for (int d = 0; d < 3; ++d) {
        const double n = std::floor(2 * w[d] / r_eff);
        nc[d] = static_cast<int32_t>(std::min(n, 1024.0));
        fits = fits && nc[d] >= 5;
    }
    if (method == QMMM_RDF_METHOD_CELLS && !fits)
        throw Error(QMMM_ERR_INVALID_ARG, "method CELLS needs every perpendicular width of the box >= 2.5 r_max = " +
                                              num(2.5 * r_max) + "; this box's smallest is " +
                                              num(std::min({w[0], w[1], w[2]})) + " (use AUTO or BRUTE)");
    f.method = (method == QMMM_RDF_METHOD_BRUTE || !fits) ? QMMM_RDF_METHOD_BRUTE : QMMM_RDF_METHOD_CELLS;
    if (f.method == QMMM_RDF_METHOD_BRUTE) {
        f.cell1.clear(), f.start.clear(), f.stencil.clear();
        f.nc[0] = f.nc[1] = f.nc[2] = 1;
        f.pairs_visited = identical ? 0.5 * double(n1) * double(n1 - 1) : double(n1) * double(n2);
        return;
    }
    // Far more cells than atoms only costs empty-cell visits: coarsen (cells stay >= r_max/2 wide).
    const double cap = 2.0 * double(n_search) + 1000.0;
    const double n_cells = double(nc[0]) * nc[1] * nc[2];
    if (n_cells > cap) {
        const double s = std::cbrt(n_cells / cap);
        for (int d = 0; d < 3; ++d) nc[d] = std::max(5, static_cast<int32_t>(nc[d] / s));
    }
    int32_t m[3];
    for (int d = 0; d < 3; ++d) {
        m[d] = static_cast<int32_t>(std::ceil(r_eff * nc[d] / w[d]));
        if (2 * m[d] + 1 > nc[d]) throw Error(QMMM_ERR_INTERNAL, "cell stencil wraps the box");
        f.nc[d] = nc[d];
    }
    f.stencil.clear();
    for (int dz = -m[2]; dz <= m[2]; ++dz)
        for (int dy = -m[1]; dy <= m[1]; ++dy)
            for (int dx = -m[0]; dx <= m[0]; ++dx) {
                const bool positive = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
                if (identical ? positive : true) f.stencil.insert(f.stencil.end(), {dx, dy, dz});
            }
    if (identical) {
        sort_by_cell(f.a1, f.nc, f.start, &f.cell1, f.max_cell, f.scratch, f.scratch_cells);
    } else {
        int32_t max1;
        sort_by_cell(f.a1, f.nc, f.scratch_start, &f.cell1, max1, f.scratch, f.scratch_cells);
        sort_by_cell(f.a2, f.nc, f.start, nullptr, f.max_cell, f.scratch, f.scratch_cells);
    }
    const double per_cell = double(n_search) / (double(f.nc[0]) * f.nc[1] * f.nc[2]);
    f.pairs_visited = double(n1) * (double(f.stencil.size() / 3) * per_cell + (identical ? 0.5 * per_cell : 0.0));
}

}  // namespace qmmm::rdf
