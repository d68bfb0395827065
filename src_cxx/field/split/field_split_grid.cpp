// field_split_grid.cpp -- the split's interpolation grid of the long-range part (field_split_build.hpp): level 0
// over the region, the error estimate per brick from the level twice as coarse, refinement where it is too large,
// and the check against exact values at random points. The backend supplies the sums (SplitEngine).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "error.hpp"
#include "split/field_split_build.hpp"

namespace qmmm::split {

// Interpolation error of a level is estimated as |I_2h L - L| / 2^8 (the order-8 error ratio of halving h)
// times this safety factor, at the level's own nodes.
constexpr double kEstimateSafety = 8.0;
// Random points of the region where the interpolation is checked against exact values at the end.
constexpr int kSamplePoints = 512;
// Grid values after refinement over those of level 0 and its parent: 6-7 on point charges (100,000 charges, 1e-7
// and 1e-10: 0.98 and 11.4 million), less on the densities' regions; a projection above the limit is refused early.
constexpr double kSplitRefineProjection = 8.0;

// Lower bound of the normwise scale sum |q|/d + sum Z/d at a point, from the Coulomb sum C there (|C| <= sum |q|/d)
// and a floor for sum |q|/d known otherwise (CellScale).
double scale_bound(const FieldData &d, const double *p, double coulomb, double floor) {
    double s = std::max(std::fabs(coulomb), floor);
    for (int64_t b = 0; b < d.n_nuclei; ++b)
        s += std::fabs(d.nuc_z[b]) / std::hypot(p[0] - d.nuc_xyz[3 * b], p[1] - d.nuc_xyz[3 * b + 1], p[2] - d.nuc_xyz[3 * b + 2]);
    return s;
}

// Lower bounds of sum_m |q_m| / |p - r_m| where |C| is a poor one: with charges of both signs (MM point charges)
// C cancels to a small fraction of that sum, and an error estimate relative to |C| asks for grid refinement the
// normwise tolerance does not need (100,000 charges of +-0.3..0.8 e: > 67 million grid values instead of a few).
// With charges of one sign (densities) |C| is the sum itself and these return 0. Sums in cell order: the same
// refinement for any thread count.
class CellScale {
public:
    explicit CellScale(const FieldData &d) : d_(d) {
        bool pos = false, neg = false;
        for (double q : d.cell_q) pos = pos || q > 0, neg = neg || q < 0;
        mixed_ = pos && neg;
    }
    // For every p in the box [lo, hi]: |p - r| <= |c - r| + half diagonal.
    double box(const double *lo, const double *hi) const {
        if (!mixed_) return 0;
        double c[3], h2 = 0;
        for (int k = 0; k < 3; ++k) c[k] = 0.5 * (lo[k] + hi[k]), h2 += 0.25 * (hi[k] - lo[k]) * (hi[k] - lo[k]);
        const double half = std::sqrt(h2);
        double s = 0;
        for (int64_t m = 0; m < d_.n_cells; ++m) {
            const double *r = &d_.cell_xyz[3 * m];
            s += std::fabs(d_.cell_q[m]) / (std::hypot(c[0] - r[0], c[1] - r[1], c[2] - r[2]) + half);
        }
        return s;
    }
    // At p itself (a cell on p is left out: the bound stays a lower bound).
    double point(const double *p) const { return box(p, p); }

private:
    const FieldData &d_;
    bool mixed_ = false;
};

// The grid's nodes live on one integer lattice of unit u = h0 / 2^kSplitMaxLevel from the region's corner, so a
// value is computed once wherever lattices share a node (the parent of level 0 and level 0, a refined brick and
// level 0, neighbouring refined bricks). A Lattice: nodes (i, j, k), kSplitOrder - 1 margin nodes included, at
// integer coordinates o + (i - kSplitLow, ...) * step.
struct Lattice {
    int64_t o[3] = {0, 0, 0}, step = 1;
    int64_t n_int[3] = {0, 0, 0};
    int64_t nodes(int k) const { return n_int[k] + kSplitOrder - 1; }
    int64_t count() const { return nodes(0) * nodes(1) * nodes(2); }
    int64_t coord(int k, int64_t i) const { return o[k] + (i - kSplitLow) * step; }
};

// Node key (never 0: a coordinate + kBias is positive) -> index, open addressing with linear probing: the grid's
// millions of nodes are each inserted once and looked up several times, and std::unordered_map's node allocations cost
// 0.25-0.8 s of the GPU backend's setup (1.1M cells, the H100's host).
class NodeIndex {
public:
    void reserve(size_t n) {
        if (2 * n <= keys_.size()) return;
        size_t cap = 1024;
        while (cap < 2 * n) cap *= 2;
        std::vector<uint64_t> old_k(cap, 0);
        std::vector<int64_t> old_v(cap, 0);
        old_k.swap(keys_), old_v.swap(vals_);
        mask_ = cap - 1;
        for (size_t i = 0; i < old_k.size(); ++i)
            if (old_k[i]) {
                const size_t j = slot(old_k[i]);
                keys_[j] = old_k[i], vals_[j] = old_v[i];
            }
    }
    // The value of key k, inserted as v when new (then *inserted).
    int64_t get(uint64_t k, int64_t v, bool *inserted) {
        if (2 * (size_ + 1) > keys_.size()) reserve(2 * (size_ + 1));
        const size_t i = slot(k);
        *inserted = keys_[i] == 0;
        if (*inserted) keys_[i] = k, vals_[i] = v, ++size_;
        return vals_[i];
    }

    size_t size() const { return size_; }
    // The value of key k, or -1 (read-only: threads may look up together between insertions).
    int64_t find(uint64_t k) const {
        if (keys_.empty()) return -1;
        const size_t i = slot(k);
        return keys_[i] == 0 ? -1 : vals_[i];
    }

private:
    size_t slot(uint64_t k) const {
        uint64_t h = k * 0x9e3779b97f4a7c15ULL;
        size_t i = static_cast<size_t>(h ^ (h >> 29)) & mask_;
        while (keys_[i] != 0 && keys_[i] != k) i = (i + 1) & mask_;
        return i;
    }
    std::vector<uint64_t> keys_;
    std::vector<int64_t> vals_;
    size_t mask_ = 0, size_ = 0;
};

class NodeCache {
public:
    NodeCache(const double *lo, double u) : u_(u) {
        for (int k = 0; k < 3; ++k) lo_[k] = lo[k];
    }
    void position(uint64_t key, double *p) const {
        for (int k = 0; k < 3; ++k)
            p[k] = lo_[k] + static_cast<double>(static_cast<int64_t>((key >> (21 * k)) & 0x1fffff) - kBias) * u_;
    }
    static uint64_t key(int64_t x, int64_t y, int64_t z) {
        return static_cast<uint64_t>(x + kBias) | static_cast<uint64_t>(y + kBias) << 21 | static_cast<uint64_t>(z + kBias) << 42;
    }
    // L and C (the Coulomb sum) at every node of the lattices, computing those not known yet in one batch.
    void fill(SplitModel &m, SplitEngine &e, const std::vector<const Lattice *> &lats, std::vector<std::vector<double>> &L,
              std::vector<std::vector<double>> &C) {
        // Every node's index is kept for the copy into L and C (lattices share nodes: a brick's margins are its
        // neighbours' nodes, so the nodes visited are several times the new ones). The nodes known before this batch
        // are looked up by all threads at once (the lookups' cache misses were ~0.4 s of a 1.1M-cell setup on the
        // H100's host); then one pass in lattice order gives each new node the index its value will have (after those
        // known): the indices do not depend on the thread count.
        // The new nodes come in z-rows (z is the lattices' fastest axis): consecutive ones with the same x and y start
        // no new row, whatever their z spacing (a row of a refined brick skips the nodes its parent has).
        std::vector<uint64_t> &want = want_;
        std::vector<int64_t> &rows = rows_;
        want.clear(), rows.clear();
        constexpr uint64_t kXY = (uint64_t{1} << 42) - 1;  // the key's x and y fields
        const int64_t nl = static_cast<int64_t>(lats.size());
        std::vector<std::vector<int64_t>> at(lats.size());
        const int64_t known = static_cast<int64_t>(lv_.size());
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t t = 0; t < nl; ++t) {
            at[t].resize(static_cast<size_t>(lats[t]->count()));
            for_nodes(*lats[t], [&](int64_t g, uint64_t k) { at[t][g] = index_.find(k); });
        }
        int64_t absent = 0;  // an upper bound of the new nodes (lattices of this batch share some): no rehash below
#pragma omp parallel for reduction(+ : absent)
        for (int64_t t = 0; t < nl; ++t) absent += std::count(at[t].begin(), at[t].end(), int64_t{-1});
        index_.reserve(index_.size() + static_cast<size_t>(absent));
        for (int64_t t = 0; t < nl; ++t)
            for_nodes(*lats[t], [&](int64_t g, uint64_t k) {
                if (at[t][g] >= 0) return;
                bool fresh;
                at[t][g] = index_.get(k, known + static_cast<int64_t>(want.size()), &fresh);
                if (!fresh) return;
                if (want.empty() || ((want.back() ^ k) & kXY)) rows.push_back(static_cast<int64_t>(want.size()));
                want.push_back(k);
            });
        if (!want.empty()) {
            rows.push_back(static_cast<int64_t>(want.size()));
            // The batch's buffers are kept from one batch to the next (refinement's rounds): a fresh allocation of
            // this size is fresh pages, which the kernel clears at first touch before they are overwritten here.
            std::vector<double> &pts = pts_, &c = c_, &sr = sr_;
            pts.resize(3 * want.size()), c.resize(want.size()), sr.resize(want.size());
            for (size_t i = 0; i < want.size(); ++i) position(want[i], &pts[3 * i]);
            e.coulomb_rows(static_cast<int64_t>(want.size()), pts.data(), rows, c.data());
            e.short_range(m, static_cast<int64_t>(want.size()), pts.data(), m.build_self, sr.data());
            lv_.resize(static_cast<size_t>(known) + want.size()), cv_.resize(lv_.size());
            for (size_t i = 0; i < want.size(); ++i) lv_[known + i] = c[i] - sr[i], cv_[known + i] = c[i];
        }
        L.resize(lats.size()), C.resize(lats.size());
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t t = 0; t < nl; ++t) {
            L[t].resize(at[t].size()), C[t].resize(at[t].size());
            for (size_t g = 0; g < at[t].size(); ++g) L[t][g] = lv_[at[t][g]], C[t][g] = cv_[at[t][g]];
        }
    }
    int64_t computed() const { return static_cast<int64_t>(lv_.size()); }
    static constexpr int64_t kBias = int64_t{1} << 20;  // coordinates in (-2^20, 2^20)

private:
    template <class F>
    static void for_nodes(const Lattice &l, F &&f) {
        int64_t g = 0;
        for (int64_t i = 0; i < l.nodes(0); ++i)
            for (int64_t j = 0; j < l.nodes(1); ++j)
                for (int64_t k = 0; k < l.nodes(2); ++k) f(g++, key(l.coord(0, i), l.coord(1, j), l.coord(2, k)));
    }
    double lo_[3], u_;
    NodeIndex index_;
    std::vector<double> lv_, cv_;
    std::vector<uint64_t> want_;                // a batch's new nodes (keys), its rows and buffers (fill)
    std::vector<int64_t> rows_;
    std::vector<double> pts_, c_, sr_;
};

// Interpolation from a lattice's values v at p (within its intervals; lattice corner at lo + o u, spacing step u).
double lattice_interp(const Lattice &l, const double *v, const double *lo, double u, const double *p) {
    double t[3], w[3][kSplitOrder];
    int32_t c[3];
    const int64_t n[3] = {l.nodes(0), l.nodes(1), l.nodes(2)};
    const double h = static_cast<double>(l.step) * u;
    for (int k = 0; k < 3; ++k) {
        c[k] = split_locate(p[k], lo[k] + static_cast<double>(l.o[k]) * u, 1.0 / h, static_cast<int32_t>(l.n_int[k]), &t[k]);
        split_weights(t[k], w[k]);
    }
    return split_stencil(v, n, c, w);
}

// The error estimate of a lattice's values (fine: L and C) against interpolation from its parent (spacing 2h) at
// the fine nodes inside box [blo, bhi], searched within node indices [first, last]: max |I_2h L - L| / scale / 2^8
// times the safety factor.
double estimate(const FieldData &d, const double *lo, double u, const Lattice &fine, const double *fl, const double *fc,
                const Lattice &parent, const double *pl, const double *blo, const double *bhi, const int64_t *first,
                const int64_t *last, double floor) {
    double worst = 0;
    const double tiny = 1e-9 * u;
    for (int64_t i = first[0]; i <= last[0]; ++i)
        for (int64_t j = first[1]; j <= last[1]; ++j)
            for (int64_t k = first[2]; k <= last[2]; ++k) {
                const int64_t idx[3] = {i, j, k};
                double p[3];
                bool in = true;
                for (int a = 0; a < 3; ++a) {
                    p[a] = lo[a] + static_cast<double>(fine.coord(a, idx[a])) * u;
                    in = in && p[a] >= blo[a] - tiny && p[a] <= bhi[a] + tiny;
                }
                if (!in) continue;
                const int64_t g = (i * fine.nodes(1) + j) * fine.nodes(2) + k;
                const double err = std::fabs(lattice_interp(parent, pl, lo, u, p) - fl[g]);
                const double sc = scale_bound(d, p, fc[g], floor);
                if (sc > 0) worst = std::max(worst, err / sc);
            }
    return worst / 256.0 * kEstimateSafety;
}

// A block during setup (SplitBlock is what evaluation reads).
struct BlockState {
    int level = 0;
    int64_t parent = -1, child = -1;
    double estimate = 0;         // of its own lattice
    Lattice lat{};               // its lattice (level 0: the global one)
    std::vector<double> v;       // values of its lattice (level >= 1)
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // extent clipped to the region
};

namespace {

// One build of the grid (build_grid), in its steps: the level-0 lattice (and the early refusal of a grid that would
// not fit), the level-0 bricks' estimates, refinement while an estimate is over the budget, the check at random
// points (more refinement where one misses), and the view.
class GridBuild {
public:
    GridBuild(SplitModel &m, const FieldData &d, SplitEngine &e, const double *region, double tol, double h0)
        : m_(m), d_(d), e_(e), region_(region), tol_(tol), h0_(h0), budget_(kSplitInterpShare * tol),
          u_(h0 / kSplitUnits), cells_(d), cache_(region, h0 / kSplitUnits) {}

    void run(SplitSamples &samples) {
        size_lattices();
        refuse_if_too_large();
        level0();
        refine_while_over();
        check_at_samples(samples);
    }

private:
    // The level-0 lattice (spacing h0) over the region and its parent (2 h0): an even number of intervals an axis.
    void size_lattices() {
        SplitGridView &g = m_.gv;
        g = SplitGridView{};
        l0_.step = kSplitUnits, lc_.step = 2 * kSplitUnits;
        for (int k = 0; k < 3; ++k) {
            g.lo[k] = region_[k], g.hi[k] = region_[3 + k];
            const double want = std::ceil((region_[3 + k] - region_[k]) / h0_ - 1e-9);
            if (want > (NodeCache::kBias / kSplitUnits) / 2)
                throw Error(QMMM_ERR_INVALID_ARG, strfmt("opt->region is %g bohr long along axis %d: more than %lld grid intervals of "
                                                         "%g bohr; give a smaller region or a larger tolerance",
                                                         region_[3 + k] - region_[k], k,
                                                         static_cast<long long>(NodeCache::kBias / kSplitUnits / 2), h0_));
            // An even number of intervals, so that the parent lattice (2 h0) covers the same ones.
            int64_t n = std::max<int64_t>(2, static_cast<int64_t>(want));
            n += n % 2;
            l0_.n_int[k] = n, lc_.n_int[k] = n / 2;
            g.nint[k] = static_cast<int32_t>(n), g.nbrick[k] = static_cast<int32_t>((n + kSplitBrick - 1) / kSplitBrick);
        }
        g.h = h0_, g.inv_h = 1.0 / h0_, g.inv_u = 1.0 / u_;
        nb_ = static_cast<int64_t>(g.nbrick[0]) * g.nbrick[1] * g.nbrick[2];
    }

    // The cheap estimate, before any sum: the level-0 grid and its parent, times what refinement has added in the
    // measured cases. Refused here, the caller learns in well under a second (not after minutes of sums) what would
    // fit: a larger tolerance (level 0 grows as tol^(-3/8)) or a smaller region.
    void refuse_if_too_large() const {
        const double *region = region_;
        const double level0 = static_cast<double>(l0_.count() + lc_.count());
        const double projected = kSplitRefineProjection * level0;
        if (projected <= static_cast<double>(kSplitMaxGridValues)) return;
        const double fit = 0.9 * static_cast<double>(kSplitMaxGridValues) / projected;  // 10 % to spare
        const double tol_fit = std::min(kMaxTolerance, tol_ * std::pow(fit, -8.0 / 3.0));
        double side[3], lo = 0, hi = 0.5 * std::min({region[3] - region[0], region[4] - region[1], region[5] - region[2]});
        for (int k = 0; k < 3; ++k) side[k] = region[3 + k] - region[k];
        for (int it = 0; it < 60; ++it) {  // shrink s on every side: the volume's grid must fit
            const double sh = 0.5 * (lo + hi);
            double v = 1;
            for (int k = 0; k < 3; ++k) v *= std::max(side[k] - 2 * sh, h0_) / h0_ + kSplitOrder;
            (kSplitRefineProjection * 1.125 * v > 0.9 * static_cast<double>(kSplitMaxGridValues) ? lo : hi) = sh;
        }
        throw Error(QMMM_ERR_INVALID_ARG,
                    strfmt("opt->region (%g x %g x %g bohr) at tolerance %g: a level-0 grid of %.3g values (spacing %g "
                           "bohr), ~%.3g with refinement, over the limit of %lld (estimated before any sum). Would "
                           "fit: tolerance %.2g, or the region %.2g bohr smaller on every side (a smaller margin "
                           "around the QM atoms)",
                           side[0], side[1], side[2], tol_, level0, h0_, projected,
                           static_cast<long long>(kSplitMaxGridValues), tol_fit, hi));
    }

    void set_extent(BlockState &s) const {
        for (int k = 0; k < 3; ++k) {
            s.lo[k] = region_[k] + static_cast<double>(s.lat.o[k]) * u_;
            s.hi[k] = std::min(region_[3 + k], s.lo[k] + static_cast<double>(s.lat.n_int[k] * s.lat.step) * u_);
        }
    }

    // The level-0 values (and the parent lattice's, for the estimate), one block a brick with its estimate.
    void level0() {
        const SplitGridView &g = m_.gv;
        {
            std::vector<std::vector<double>> L, C;
            cache_.fill(m_, e_, {&l0_, &lc_}, L, C);
            m_.g0.swap(L[0]), c0_.swap(C[0]), cl_.swap(L[1]);
        }
        bl_.resize(static_cast<size_t>(nb_));
#pragma omp parallel for schedule(dynamic, 1)
        for (int64_t b = 0; b < nb_; ++b) {
            const int64_t bi[3] = {b / (static_cast<int64_t>(g.nbrick[1]) * g.nbrick[2]), (b / g.nbrick[2]) % g.nbrick[1],
                                   b % g.nbrick[2]};
            BlockState &s = bl_[b];
            int64_t first[3], last[3];
            s.lat.step = kSplitUnits;
            for (int k = 0; k < 3; ++k) {
                s.lat.o[k] = bi[k] * kSplitBrick * kSplitUnits;
                s.lat.n_int[k] = std::min<int64_t>(kSplitBrick, l0_.n_int[k] - bi[k] * kSplitBrick);
                first[k] = kSplitLow + bi[k] * kSplitBrick, last[k] = first[k] + s.lat.n_int[k];
            }
            set_extent(s);
            s.estimate = estimate(d_, region_, u_, l0_, m_.g0.data(), c0_.data(), lc_, cl_.data(), s.lo, s.hi, first,
                                  last, cells_.box(s.lo, s.hi));
            s.lat = l0_;  // a level-0 block reads the global grid
            for (int k = 0; k < 3; ++k) s.lat.n_int[k] = l0_.n_int[k];
        }
        // The blocks' own corners (the level-0 ones keep l0 as their lattice, so remember their corners apart).
        span_.resize(static_cast<size_t>(nb_));
        for (int64_t b = 0; b < nb_; ++b) {
            const int64_t bi[3] = {b / (static_cast<int64_t>(g.nbrick[1]) * g.nbrick[2]), (b / g.nbrick[2]) % g.nbrick[1],
                                   b % g.nbrick[2]};
            for (int k = 0; k < 3; ++k)
                span_[b][k] = bi[k] * kSplitBrick * kSplitUnits,
                span_[b][3 + k] = std::min<int64_t>(kSplitBrick, l0_.n_int[k] - bi[k] * kSplitBrick) * kSplitUnits;  // units
        }
        stored_ = l0_.count();
    }

    // Refine: every block in `todo` gets its 2 x 2 x 2 children (those with intervals), all in one batch of sums.
    void refine(const std::vector<int64_t> &todo) {
        std::vector<int64_t> kids;
        for (int64_t p : todo) {
            const int64_t first = static_cast<int64_t>(bl_.size());
            bl_[p].child = first;
            bl_.resize(bl_.size() + 8);
            const BlockState &ps = bl_[p];
            const int64_t half = (int64_t{kSplitBrick} * kSplitUnits) >> (ps.level + 1);  // units
            const int64_t step = kSplitUnits >> (ps.level + 1);
            for (int c = 0; c < 8; ++c) {
                BlockState &s = bl_[first + c];
                s.level = ps.level + 1, s.parent = p;
                s.lat.step = step;
                bool empty = false;
                span_.push_back({});
                for (int k = 0; k < 3; ++k) {
                    const int64_t bit = (c >> (2 - k)) & 1;
                    const int64_t o = span_[p][k] + bit * half;
                    const int64_t len = std::min(half, span_[p][k] + span_[p][3 + k] - o);
                    span_.back()[k] = o, span_.back()[3 + k] = std::max<int64_t>(0, len);
                    s.lat.o[k] = o, s.lat.n_int[k] = std::max<int64_t>(0, len) / step;
                    empty = empty || len <= 0;
                }
                if (empty) {
                    s.estimate = 0;  // never reached by a point
                    continue;
                }
                set_extent(s);
                stored_ += s.lat.count();
                kids.push_back(first + c);
            }
        }
        if (stored_ + cache_.computed() > 2 * kSplitMaxGridValues)
            throw Error(QMMM_ERR_INVALID_ARG,
                        strfmt("tolerance %g needs more than %lld grid values in opt->region (refining near (%g, %g, %g) "
                               "bohr): give a smaller region or a larger tolerance",
                               tol_, static_cast<long long>(kSplitMaxGridValues), bl_[todo[0]].lo[0], bl_[todo[0]].lo[1],
                               bl_[todo[0]].lo[2]));
        std::vector<const Lattice *> ptr;
        for (int64_t k : kids) ptr.push_back(&bl_[k].lat);
        std::vector<std::vector<double>> L, C;
        cache_.fill(m_, e_, ptr, L, C);
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t t = 0; t < kids.size(); ++t) {
            BlockState &s = bl_[kids[t]];
            const BlockState &ps = bl_[s.parent];
            const int64_t first[3] = {0, 0, 0}, last[3] = {s.lat.nodes(0) - 1, s.lat.nodes(1) - 1, s.lat.nodes(2) - 1};
            const double *pv = ps.level == 0 ? m_.g0.data() : ps.v.data();
            s.estimate = estimate(d_, region_, u_, s.lat, L[t].data(), C[t].data(), ps.lat, pv, s.lo, s.hi, first, last,
                                  cells_.box(s.lo, s.hi));
            s.v.swap(L[t]);
        }
    }

    bool over(const BlockState &s) const { return s.child < 0 && s.estimate > budget_ && s.level < kSplitMaxLevel; }

    // Refines every leaf whose estimate is over the budget until none is (the new leaves' own estimates may ask for
    // more).
    void refine_while_over() {
        for (;;) {
            std::vector<int64_t> todo;
            for (int64_t b = 0; b < static_cast<int64_t>(bl_.size()); ++b)
                if (over(bl_[b])) todo.push_back(b);
            if (todo.empty()) break;
            refine(todo);
        }
    }

    // The view of the grid (m_.brick, blocks, pool, and the pointers of m_.gv).
    void assemble() {
        SplitGridView &g = m_.gv;
        m_.brick.resize(static_cast<size_t>(nb_));
        for (int64_t b = 0; b < nb_; ++b) m_.brick[b] = static_cast<int32_t>(b);
        m_.blocks.assign(bl_.size(), SplitBlock{});
        m_.pool.clear();
        size_t pool = 0;  // reserved whole: grown by insertion, the pool (most of the values) was copied ~log2 times
        for (const BlockState &s : bl_)
            if (s.level > 0 && s.child < 0) pool += s.v.size();
        m_.pool.reserve(pool);
        for (size_t b = 0; b < bl_.size(); ++b) {
            const BlockState &s = bl_[b];
            SplitBlock &o = m_.blocks[b];
            for (int k = 0; k < 3; ++k)
                o.lo[k] = region_[k] + static_cast<double>(span_[b][k]) * u_, o.o[k] = static_cast<int32_t>(span_[b][k]),
                o.n_int[k] = static_cast<int32_t>(s.lat.n_int[k]);
            o.h = static_cast<double>(s.lat.step) * u_, o.inv_h = 1.0 / o.h;
            o.level = s.level, o.child = static_cast<int32_t>(s.child);
            o.offset = -1;
            if (s.level > 0 && s.child < 0 && !s.v.empty()) {
                o.offset = static_cast<int64_t>(m_.pool.size());
                m_.pool.insert(m_.pool.end(), s.v.begin(), s.v.end());
            }
        }
        g.g0 = m_.g0.data(), g.brick = m_.brick.data(), g.blocks = m_.blocks.data(), g.pool = m_.pool.data();
    }

    // Assembles the view, then checks it at random points of the region against exact values; a leaf where a point
    // misses the budget is refined (the estimate is a model, this is a measurement), up to three rounds. Fills m_.info's
    // grid part and the samples (for split_build's MIXED rounding).
    void check_at_samples(SplitSamples &samples) {
        const SplitGridView &g = m_.gv;
        std::mt19937_64 rng(20261123);
        std::vector<double> sample(3 * kSamplePoints);
        for (int i = 0; i < kSamplePoints; ++i)
            for (int k = 0; k < 3; ++k)
                sample[3 * i + k] = std::uniform_real_distribution<double>(region_[k], region_[3 + k])(rng);
        std::vector<double> exact_c(kSamplePoints), exact_s(kSamplePoints);
        // Through coulomb_rows, one point per row: the CUDA backend builds its direct fallback meanwhile
        // (field_split_gpu.cu).
        std::vector<int64_t> one_per_row(kSamplePoints + 1);
        for (int i = 0; i <= kSamplePoints; ++i) one_per_row[i] = i;
        e_.coulomb_rows(kSamplePoints, sample.data(), one_per_row, exact_c.data());
        e_.short_range(m_, kSamplePoints, sample.data(), m_.build_self, exact_s.data());
        std::vector<double> floor_s(kSamplePoints);
#pragma omp parallel for schedule(dynamic, 8)
        for (int i = 0; i < kSamplePoints; ++i) floor_s[i] = cells_.point(&sample[3 * i]);
        double sampled = 0;
        for (int round = 0;; ++round) {
            assemble();
            sampled = 0;
            std::vector<int64_t> todo;
            for (int i = 0; i < kSamplePoints; ++i) {
                const double *p = &sample[3 * i];
                const double err =
                    std::fabs(split_interp(g, p) - (exact_c[i] - exact_s[i])) / scale_bound(d_, p, exact_c[i], floor_s[i]);
                sampled = std::max(sampled, err);
                const int64_t leaf = split_leaf(g, p);
                if (err > budget_ && bl_[leaf].level < kSplitMaxLevel &&
                    std::find(todo.begin(), todo.end(), leaf) == todo.end())
                    todo.push_back(leaf);
            }
            if (todo.empty() || round == 3) break;
            refine(todo);
            refine_while_over();
        }
        double est = 0;
        int max_level = 0;
        int64_t leaves = 0;
        for (const BlockState &s : bl_)
            if (s.child < 0) est = std::max(est, s.estimate), max_level = std::max(max_level, s.level), leaves += s.level > 0;
        m_.info.interp_estimate = est, m_.info.sampled_error = sampled;
        samples.xyz = std::move(sample), samples.c = std::move(exact_c), samples.s = std::move(exact_s);
        samples.floor = std::move(floor_s);
        m_.info.grid_values = cache_.computed() + kSamplePoints;
        m_.info.leaves_refined = leaves, m_.info.max_level = max_level;
        m_.info.spacing = h0_;
    }

    SplitModel &m_;
    const FieldData &d_;
    SplitEngine &e_;
    const double *region_;
    double tol_, h0_, budget_, u_;  // u_: the lattices' unit (bohr), h0 / kSplitUnits
    const CellScale cells_;
    NodeCache cache_;
    Lattice l0_{}, lc_{};           // level 0 and its parent
    std::vector<double> c0_, cl_;   // the Coulomb sum at l0's nodes; L at lc's
    int64_t nb_ = 0;                // level-0 bricks
    std::vector<BlockState> bl_;    // blocks: the level-0 bricks first, then children in batches of 8
    std::vector<std::array<int64_t, 6>> span_;  // per block: corner and intervals, in units
    int64_t stored_ = 0;            // grid values kept
};

}  // namespace

void build_grid(SplitModel &m, const FieldData &d, SplitEngine &e, const double *region, double tol, double h0,
                SplitSamples &samples) {
    GridBuild(m, d, e, region, tol, h0).run(samples);
}

}  // namespace qmmm::split
