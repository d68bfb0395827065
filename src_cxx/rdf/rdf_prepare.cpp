// rdf_prepare.cpp -- one frame made ready for counting: box geometry, fixed-point fractional coordinates,
// the method (cell list or brute force) and, for the cell list on the CPU, atoms sorted by cell (a counting
// sort; the GPU sorts its copy itself).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "cpu_threads.hpp"
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

// Fixed-point fractional coordinates of n atoms (3n doubles) with their keys: 32-bit fractions packed as
// 23-bit values and 9-bit rests (rdf_shared.hpp, pack32). Checks the coordinates in the same pass (one read of
// a 24 MB frame instead of two: the host's memory bandwidth bounds a large frame's preparation) and throws,
// naming the first NaN or Inf, if any.
// Plain stores: a frame of the GPU path (page-locked, reused every other frame) mostly stays in the last-level
// cache, from which the copy engine reads it; streaming stores sent it to memory and doubled the preparation.
void to_fixed(const char *name, const double *xyz, int64_t n, const double frac[9], const std::vector<int32_t> &key,
              Atom *out, int nt) {
    constexpr double scale = 4294967296.0;  // 2^32
    int64_t bad = 0;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(+ : bad)
    for (int64_t i = 0; i < n; ++i) {
        uint32_t u[3];
        bad += (std::isfinite(xyz[3 * i]) && std::isfinite(xyz[3 * i + 1]) && std::isfinite(xyz[3 * i + 2])) ? 0 : 1;
        for (int d = 0; d < 3; ++d) {
            double s = dot(frac + 3 * d, xyz + 3 * i);
            if (!std::isfinite(s)) s = 0;  // a bad atom (reported below) must not reach llrint
            s -= std::floor(s);
            // Nearest grid point (error <= 2^-33 of the cell); 2^32 wraps to 0, the same point.
            u[d] = pack32(static_cast<uint32_t>(static_cast<uint64_t>(std::llrint(s * scale)) & 0xFFFFFFFFu));
        }
        out[i] = Atom{u[0], u[1], u[2], key[i]};
    }
    if (!bad) return;
    for (int64_t i = 0; i < 3 * n; ++i)
        if (!std::isfinite(xyz[i]))
            throw Error(QMMM_ERR_NONFINITE, std::string(name) + ": element " + std::to_string(i) + " (atom " +
                                                std::to_string(i / 3) + ") is " + (std::isnan(xyz[i]) ? "NaN" : "Inf"));
}

// Stable counting sort of atoms by cell; start gets n_cells + 1 offsets, cells (if given) each atom's cell.
// In parallel: each thread counts and then scatters one contiguous chunk of the atoms, the chunks' offsets
// within a cell in chunk order, so the order is the serial sort's (a 1M-atom frame spent most of its
// preparation in the serial scatter). Threads are limited so their count arrays stay within ~4 n entries.
void sort_by_cell(AtomVec &a, const int32_t nc[3], std::vector<int32_t> &start, std::vector<int32_t> *cells,
                  int32_t &max_cell, AtomVec &sorted, std::vector<int32_t> &c, int nt) {
    const int64_t n_cells = int64_t{nc[0]} * nc[1] * nc[2];
    const int64_t n = static_cast<int64_t>(a.size());
    const int T = static_cast<int>(std::clamp<int64_t>(std::min<int64_t>(nt, (4 * n) / std::max<int64_t>(n_cells, 1)), 1, nt));
    c.resize(n);
    sorted.resize(n);
    if (cells) cells->resize(n);
    start.assign(n_cells + 1, 0);
    std::vector<int32_t> count(size_t(T) * size_t(n_cells), 0);  // count[t * n_cells + cell], then offsets
    const auto chunk = [&](int t, int64_t &i0, int64_t &i1) { i0 = n * t / T, i1 = n * (t + 1) / T; };
    // T chunks, whatever team OpenMP grants (fewer threads under OMP_THREAD_LIMIT, or when called from inside a
    // caller's parallel region without nesting): thread k takes chunks k, k + team, ... The chunks, not the
    // threads, fix the order, so the result never depends on the team.
#pragma omp parallel num_threads(T)
    {
        const int tid = omp_get_thread_num(), team = omp_get_num_threads();
        for (int t = tid; t < T; t += team) {
            int64_t i0, i1;
            chunk(t, i0, i1);
            int32_t *cnt = count.data() + size_t(t) * size_t(n_cells);
            for (int64_t i = i0; i < i1; ++i) ++cnt[c[i] = cell_of(a[i], nc[0], nc[1], nc[2])];
        }
#pragma omp barrier
#pragma omp for schedule(static)
        for (int64_t k = 0; k < n_cells; ++k) {  // per cell: the chunks' counts become their offsets in the cell
            int32_t s = 0;
            for (int u = 0; u < T; ++u) {
                const int32_t v = count[size_t(u) * size_t(n_cells) + k];
                count[size_t(u) * size_t(n_cells) + k] = s;
                s += v;
            }
            start[k + 1] = s;
        }
#pragma omp single
        {
            max_cell = 0;
            for (int64_t k = 0; k < n_cells; ++k) {
                max_cell = std::max(max_cell, start[k + 1]);
                start[k + 1] += start[k];
            }
        }  // implied barrier
        for (int t = tid; t < T; t += team) {
            int64_t i0, i1;
            chunk(t, i0, i1);
            int32_t *cnt = count.data() + size_t(t) * size_t(n_cells);
            for (int64_t i = i0; i < i1; ++i) {
                const int32_t p = start[c[i]] + cnt[c[i]]++;
                sorted[p] = a[i];
                if (cells) (*cells)[p] = c[i];
            }
        }
    }
    a.swap(sorted);
}

// The bin lookup table for the GPU (see Frame::thr in rdf_backend.hpp): thr[k] = edge_k^2 (float, nearest),
// thr[n_bins] = thr[n_bins + 1] = r_max^2. The kernels check every candidate against the two edges around
// it (rdf_shared.hpp, certain), so the thresholds need only be monotone and within Geom::guard of the edges.
void make_bin_table(Frame &f) {
    const Geom &g = f.g;
    const float key[4] = {g.rmin, g.inv_dr, g.rmax2, float(g.n_bins)};
    if (std::equal(key, key + 4, f.tab_key)) return;
    std::copy(key, key + 4, f.tab_key);
    f.tab_ok = false;
    constexpr int kMaxTable = 8192;
    if (g.n_bins > 65535 || !(g.rmax2 > 0) || g.rmin != 0.f) return;
    const auto bits = [](float x) { uint32_t u; std::memcpy(&u, &x, 4); return u; };
    f.thr.assign(g.n_bins + 2, std::numeric_limits<float>::infinity());
    for (int32_t k = 0; k < g.n_bins; ++k) {
        const double e = g.drmin + k / g.dinv_dr;
        f.thr[k] = static_cast<float>(e * e);
    }
    f.thr[g.n_bins] = g.rmax2;
    f.thr[g.n_bins + 1] = g.rmax2;  // a candidate at or beyond r_max (bin n_bins) is never certain
    for (int32_t k = 1; k <= g.n_bins; ++k)
        if (!(f.thr[k] > f.thr[k - 1])) return;  // bins too fine for float r^2
    const uint32_t top = bits(g.rmax2) - 1;  // the largest r^2 below r_max^2; larger ones take the last cell
    if (g.n_bins < 2) {  // one bin: the table is all zeros
        f.tab_shift = 31, f.tab_base = 0, f.table.assign(1, 0), f.tab_ok = true;
        return;
    }
    const uint32_t base_bits = bits(f.thr[1]);
    int shift = 0;
    while (shift < 31 && ((top >> shift) - (base_bits >> shift) + 1) > uint32_t(kMaxTable)) ++shift;
    const uint32_t base = base_bits >> shift, n = (top >> shift) - base + 1;
    f.table.assign(n, 0);
    int32_t k = 1;  // thresholds below the current cell: k - 1
    for (uint32_t c = 0; c < n; ++c) {
        const uint32_t lo = (base + c) << shift, hi = lo + ((1u << shift) - 1);
        while (k < g.n_bins && bits(f.thr[k]) < lo) ++k;
        f.table[c] = static_cast<uint16_t>(k - 1);
        int inside = 0;
        for (int32_t q = k; q < g.n_bins && bits(f.thr[q]) <= hi; ++q) ++inside;
        if (inside > 1) return;  // too fine for this table: not ok
    }
    f.tab_shift = shift, f.tab_base = static_cast<int32_t>(base), f.tab_ok = true;
}

}  // namespace

void make_geom(const double *box, double r_min, double r_max, int32_t n_bins, double cut, Geom &g, double &volume,
               double &limit, double frac[9], double widths[3]) {
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
    // Finite vectors can still under- or overflow in the products above (found by fuzz_capi: a box of ~1e-160
    // vectors gave a zero limit); such a cell is no use for an RDF in any unit.
    if (!(limit > 0 && std::isfinite(limit) && std::isfinite(volume) && std::isfinite(widths[0]) &&
          std::isfinite(widths[1]) && std::isfinite(widths[2])))
        throw Error(QMMM_ERR_INVALID_ARG, "box: the cell is too small or too large to compute with (volume " + num(v) +
                                              ", half width " + num(limit) + ")");
    // Rows of M^-1 (M has a, b, c as columns): fractional coordinates s = M^-1 r.
    for (int d = 0; d < 3; ++d) frac[d] = bc[d] / v, frac[3 + d] = ca[d] / v, frac[6 + d] = ab[d] / v;
    // The same cell rotated to lower-triangular form; distances are invariant.
    const double bx = dot(b, a) / la, by = std::sqrt(std::max(0.0, dot(b, b) - bx * bx));
    const double cx = dot(c, a) / la, cy = (dot(b, c) - bx * cx) / by;
    const double cz = std::sqrt(std::max(0.0, dot(c, c) - cx * cx - cy * cy));
    // Matrix entries rounded to 22 significant bits, so 1.5 * 2^23 * h (up to 24 bits) is exact: the GPU then
    // forms h * d with one FMA (rdf_shared.hpp). The cell changes by at most 1.2e-7 relative.
    const auto h23 = [](double v) {
        if (v == 0) return 0.0f;
        int e;
        const double m = std::frexp(v, &e);  // |m| in [0.5, 1)
        return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 22)), e - 22 - kFixBits));
    };
    g.hxx = h23(la), g.hyx = h23(bx), g.hyy = h23(by);
    g.hzx = h23(cx), g.hzy = h23(cy), g.hzz = h23(cz);
    g.triclinic = (g.hyx != 0.f || g.hzx != 0.f || g.hzy != 0.f) ? 1 : 0;
    const double low = std::max(r_min, cut);
    g.rmin = float(r_min);
    g.rmin2 = float(low * low);
    g.rmax2 = float(r_max * r_max);
    g.inv_dr = float(n_bins / (r_max - r_min));
    g.dr = float((r_max - r_min) / n_bins);
    g.n_bins = n_bins;
    // The exact decision (rdf_shared.hpp, exact_bin): the unrounded cell scaled by 2^-32, the bins in double.
    constexpr double k32 = 1.0 / 4294967296.0;
    g.dhxx = la * k32, g.dhyx = bx * k32, g.dhyy = by * k32, g.dhzx = cx * k32, g.dhzy = cy * k32, g.dhzz = cz * k32;
    g.drmin = r_min, g.drlow = low, g.drmax = r_max, g.dinv_dr = n_bins / (r_max - r_min);
    // Bounds, in the length unit, row by row of the lower-triangular cell (x: la bx cx; y: by cy; z: cz):
    // rs = row sums of |cell| (|(H s)_i| <= rs_i max|s_j|), he = row sums of the 22-bit entries' rounding errors.
    const auto sq = [](double x) { return x * x; };
    const double rs[3] = {std::fabs(la) + std::fabs(bx) + std::fabs(cx), std::fabs(by) + std::fabs(cy), std::fabs(cz)};
    const double k23 = 0x1p23;
    const double he[3] = {std::fabs(g.hxx * k23 - la) + std::fabs(g.hyx * k23 - bx) + std::fabs(g.hzx * k23 - cx),
                          std::fabs(g.hyy * k23 - by) + std::fabs(g.hzy * k23 - cy), std::fabs(g.hzz * k23 - cz)};
    // Float roundings in a row of the float path (dist2): products and sums, each at most 2^-24 of terms up to
    // rs / 2 (triclinic x: 3 products + 2 sums, counted as 5; y: 3; z and orthorhombic rows: 1).
    const double m[3] = {g.triclinic ? 5.0 : 1.0, g.triclinic ? 3.0 : 1.0, 1.0};
    // delta: the float path's difference vector against exact_bin's, per row: 23-bit values (2^-24 per atom and
    // axis: 2^-23 rs), the 22-bit cell entries (|s| <= 1/2: he / 2), the roundings (m 2^-25 rs).
    double R2 = 0, d2 = 0;
    for (int i = 0; i < 3; ++i) {
        R2 += sq(rs[i]);
        d2 += sq(0x1p-23 * rs[i] + 0.5 * he[i] + m[i] * 0x1p-25 * rs[i]);
    }
    const double R = std::sqrt(R2);
    // tol: twice what the 32-bit fractions' rounding (2^-33 of the cell per atom and axis) can move a distance.
    g.tol = 2.0 * R * 0x1p-32 + 1e-13 * r_max;
    const double delta = std::sqrt(d2), e = delta + g.tol, rm = r_max + e;
    // guard, in r^2: the vector error and the tie tolerance at r <= rm, plus 16 float roundings of numbers up to
    // rm^2 (r^2's own three, the float edges' nine, the difference r^2 - edge^2), and a quarter for safety.
    g.guard = static_cast<float>(1.25 * (2.0 * rm * e + e * e + 16.0 * 0x1p-24 * rm * rm));
    g.hi2 = std::nextafter(static_cast<float>(sq(r_max) + double(g.guard)), HUGE_VALF);
    g.lo2 = low > 0 ? std::nextafter(static_cast<float>(sq(low) - double(g.guard)), -HUGE_VALF) : -1.0f;
}

void prepare_frame(Frame &f, const double *box, double r_min, double r_max, int32_t n_bins, double cut, int method,
                   const double *xyz1, const std::vector<int32_t> &key1, const double *xyz2,
                   const std::vector<int32_t> &key2, bool identical, double &volume, bool gpu_fast,
                   int n_threads) {
    const int nt = n_threads > 0 ? n_threads : qmmm::default_threads();
    double frac[9], w[3], limit;
    make_geom(box, r_min, r_max, n_bins, cut, f.g, volume, limit, frac, w);
    if (r_max > limit)
        throw Error(QMMM_ERR_INVALID_ARG, "r_max = " + num(r_max) + " exceeds what this box allows: " + num(limit) +
                                              " (half its smallest perpendicular width)");
    const int64_t n1 = static_cast<int64_t>(key1.size()), n2 = static_cast<int64_t>(key2.size());
    f.identical = identical;
    f.a1.resize(n1);
    to_fixed("xyz1", xyz1, n1, frac, key1, f.a1.data(), nt);
    f.a2.clear();
    if (!identical) {
        f.a2.resize(n2);
        to_fixed("xyz2", xyz2, n2, frac, key2, f.a2.data(), nt);
    }
    const int64_t n_search = identical ? n1 : n2;

    // Cells at least r_max/2 wide (a little more, so float rounding at r_max never needs a third ring):
    // every pair closer than r_max is then within 2 cells along each axis.
    // (and wider than r_max by more than the float path's error: Geom::hi2)
    const double r_eff = std::max(r_max * (1 + 1e-4), std::sqrt(double(f.g.hi2)) * (1 + 1e-6));
    int32_t nc[3];
    bool fits = true;
    for (int d = 0; d < 3; ++d) {
        const double n = std::floor(2 * w[d] / r_eff);
        nc[d] = static_cast<int32_t>(std::min(n, 1024.0));
        fits = fits && nc[d] >= 5;
    }
    // CELLS is refused exactly where the header says: a width below 2.5 r_max. A box at least that wide whose cells
    // the guard above makes too few (a width within 1e-4 of 2.5 r_max, or a cell so long along another axis that
    // float rounding needs cells much wider than r_max / 2) is counted by BRUTE: the same histogram. Before, such a
    // box was refused with a message whose width was above the one it asked for.
    const double w_min = std::min({w[0], w[1], w[2]});
    if (method == QMMM_RDF_METHOD_CELLS && w_min < 2.5 * r_max)
        throw Error(QMMM_ERR_INVALID_ARG, "method CELLS needs every perpendicular width of the box >= 2.5 r_max = " +
                                              num(2.5 * r_max) + "; this box's smallest is " + num(w_min) +
                                              " (use AUTO or BRUTE)");
    f.method = (method == QMMM_RDF_METHOD_BRUTE || !fits) ? QMMM_RDF_METHOD_BRUTE : QMMM_RDF_METHOD_CELLS;
    f.device_cells = false;
    if (f.method == QMMM_RDF_METHOD_BRUTE) {
        f.cell1.clear(), f.start.clear(), f.stencil.clear();
        f.nc[0] = f.nc[1] = f.nc[2] = 1;
        f.pairs_visited = identical ? 0.5 * double(n1) * double(n1 - 1) : double(n1) * double(n2);
        if (gpu_fast) make_bin_table(f);
        if (gpu_fast && n1 >= 4096) {
            // Any order counts the same pairs. Sorted by cells of ~16 atoms, the 32 atoms of a GPU warp are
            // close together, so their distances to an atom agree and the warp mostly skips the binning of
            // pairs beyond r_max as one (rdf_gpu.cu). The device sorts its copy (Frame::device_cells).
            const int32_t m = std::max(1, static_cast<int32_t>(std::cbrt(double(n1) / 16.0)));
            for (int d = 0; d < 3; ++d) f.nc[d] = std::min(m, 1024);
            f.device_cells = true;
        }
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
    f.device_cells = gpu_fast;
    if (gpu_fast) {  // the GPU sorts by cell (rdf_gpu.cu): the host's sort was most of a large frame's preparation
        f.cell1.clear(), f.start.clear();
        f.max_cell = 0;
    } else if (identical) {
        sort_by_cell(f.a1, f.nc, f.start, &f.cell1, f.max_cell, f.scratch, f.scratch_cells, nt);
    } else {
        int32_t max1;
        sort_by_cell(f.a1, f.nc, f.scratch_start, &f.cell1, max1, f.scratch, f.scratch_cells, nt);
        sort_by_cell(f.a2, f.nc, f.start, nullptr, f.max_cell, f.scratch, f.scratch_cells, nt);
    }
    if (gpu_fast) make_bin_table(f);
    const double per_cell = double(n_search) / (double(f.nc[0]) * f.nc[1] * f.nc[2]);
    f.pairs_visited = double(n1) * (double(f.stencil.size() / 3) * per_cell + (identical ? 0.5 * per_cell : 0.0));
}

}  // namespace qmmm::rdf
