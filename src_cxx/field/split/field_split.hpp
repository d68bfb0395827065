// field_split.hpp -- the range-split field (QMMM_METHOD_SPLIT; docs/design/split.md): the tables built once at
// create (cell list, f-table, interpolation grid of the long-range part), how they are built (field_split.cpp and the
// steps of field_split_build.hpp, the same for both backends), and the backends (CPU: field_split_cpu.cpp; CUDA:
// src_cuda/field/split/field_split_gpu.cu through FieldSplitGpu, backend/field_factory.hpp). The formulas are in field_split_shared.hpp.
//
// Error budget (normwise, relative to sum_m |q_m|/d_m + sum_b Z_b/d_b, as the README defines it):
// - truncation of S at R_c: |sum_{d > R_c} q erfc(a d)/d| <= erfc(a R_c) sum |q|/d, so erfc(a R_c) =
//   kSplitTruncShare * tolerance bounds it rigorously;
// - interpolation of L: estimated per brick from the difference between each grid level and the one twice as
//   coarse at the finer level's nodes (|I_2h L - L| / 2^8, times a safety factor), refined where too large,
//   then checked against exact values at random points of the region;
// - rounding: ~1e-15 in DOUBLE. MIXED (CUDA) computes each near cell's term in single precision, as
//   q (1/d) exp(-a^2 d^2) h(d) with h = exp(a^2 d^2) erfc(a d) from a float polynomial: a few ulps of the term
//   itself (no cancellation), measured at create on the check points against the double short-range sum and added
//   to the estimate (times kSplitRoundingSafety); where that does not fit the tolerance, MIXED evaluates in double.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "backend/field_backend.hpp"
#include "split/field_split_shared.hpp"

namespace qmmm {

// opt->tolerance as qmmm_options_default sets it (SPLIT only; DIRECT never reads it).
constexpr double kSplitDefaultTolerance = 1e-7;
// Shares of the tolerance: the truncation's rigorous bound and the interpolation's estimate, the rest (0.2) for MIXED's
// measured rounding. The short-range cost grows as R_c^3 = (erfc^-1(share tol) / a)^3: a truncation share of 0.1 left
// half the tolerance unused (glycine at 1e-7: estimate 5.0e-8) and summed 14 % more near cells than 0.4 (R_c 1.013
// against 0.971 bohr); the measured errors did not move.
constexpr double kSplitTruncShare = 0.4;
constexpr double kSplitInterpShare = 0.4;
// The single-precision terms' rounding enters the estimate as this multiple of its largest value at the check points
// (the error of a point is a sum of many terms' roundings: its largest over the region exceeds that of 512 samples;
// at alpha 4.5 the water dimer's 10^4 test points reached 4.2 times it, hence 8: docs/design/precision.md).
constexpr double kSplitRoundingSafety = 8.0;
// Largest interpolation grid (values, all levels): 512 MB.
constexpr int64_t kSplitMaxGridValues = int64_t{1} << 26;

// What create chose and what it measured; reported by qmmm_field_split_params / _stats.
struct SplitInfo {
    double alpha = 0, r_cut = 0, spacing = 0, tolerance = 0;
    double error_estimate = 0;  // truncation bound + max(interpolation estimate, sampled error) [+ rounding]
    double trunc_bound = 0, interp_estimate = 0, sampled_error = 0;
    bool single_pairs = false;  // MIXED: near cells' terms in single precision (within the tolerance, see above)
    int64_t grid_values = 0, leaves_refined = 0;  // values computed; leaf blocks of level >= 1
    int max_level = 0;
    double setup_seconds = 0;
};

// The tables, on the host (the GPU backend copies them).
struct SplitModel {
    SplitInfo info;
    double self = 0;        // the caller's singular-cell 1/r (C/h, or NaN when cell_volume is 0)
    double build_self = 0;  // the one the grid was built with (finite: self, or 0)
    // cell list
    SplitCellsView cv;
    std::vector<int64_t> start;
    std::vector<double> x, y, z, q;
    // f(s) = erf(a sqrt s)/sqrt s
    std::vector<double> table;
    SplitTableView tv;
    // MIXED's single-precision term (split_h_single): h's coefficients, 2 / R_c, and -a^2 / ln 2
    std::vector<float> table_single;
    float scale_single = 0, exp_single = 0;
    // grid
    SplitGridView gv;
    std::vector<double> g0, pool;
    std::vector<int32_t> brick;
    std::vector<SplitBlock> blocks;

    SplitView view() const;  // host pointers
    int64_t bytes() const;   // the tables' host memory
};

// What building the grid needs from a backend: the direct sum of the cells (no nuclei) with build_self on
// cell centres, and the short-range sum S with a given self, at many points.
class SplitEngine {
public:
    virtual ~SplitEngine() = default;
    virtual void coulomb(int64_t n, const double *xyz, double *out) = 0;
    // The same sum at lattice nodes in rows: nodes row[r] .. row[r + 1] - 1 share x and y (bitwise) and differ in z,
    // so a backend can compute each cell's x-y distance once for several nodes (the grid's nodes come this way; the
    // CPU and CUDA backends do, at ~1e-12 and ~1e-13 relative, against ~1e-16 for coulomb).
    virtual void coulomb_rows(int64_t n, const double *xyz, const std::vector<int64_t> &row, double *out) = 0;
    // Called once the cell list and f-table are final (the GPU uploads them).
    virtual void cells_ready(const SplitModel &m) = 0;
    virtual void short_range(const SplitModel &m, int64_t n, const double *xyz, double self, double *out) = 0;
    // The same sum as a MIXED evaluation computes it; false where the backend has no such path (it then evaluates
    // MIXED in double).
    virtual bool short_range_mixed(const SplitModel &, int64_t, const double *, double, double *) { return false; }
};

// Checks opt->method, tolerance and region (throws INVALID_ARG / NONFINITE / NULL_ARG / UNSUPPORTED naming the
// option); a DIRECT request passes when its split fields are unset.
void check_split_options(const qmmm_options &o);

// The FieldData of the direct sum the split falls back to and builds its grid from: the cells only, with a
// finite singular-cell 1/r (the caller's, or 0).
FieldData split_direct_data(const FieldData &d);

// Builds m (parameters, cell list, f-table, grid) for d and opt->tolerance / opt->region; alpha > 0 takes that alpha
// instead of the tolerance's (the gradient's own grid keeps the value's).
void split_build(SplitModel &m, const FieldData &d, const qmmm_options &o, SplitEngine &engine, double alpha = 0);

// Sum over the cells on p's centre (within kSingularRadius) of q (self - build_self): what a point outside the
// grid adds to the direct sum (NaN there when self is NaN: the API reports QMMM_ERR_SINGULAR).
double split_singular_fix(const SplitModel &m, const double *p);

// The points' indices in a spatial order (Morton order of boxes of side `box`, or larger where the grid's region is
// more than 32 boxes a side; points outside the region clamped to its faces), so that points evaluated one after
// another share their near cells and grid values in the caches. Only the order of work changes: a point's value does
// not depend on it. threads: the evaluation's own (the handle's option), never more.
void split_point_order(const SplitGridView &g, double box, int64_t n, const double *xyz, int threads,
                       std::vector<int64_t> &order);

// ---- the gradient (qmmm_field_eval_grad on a SPLIT field; formulas in field_split_shared.hpp) ----
//
// Error budget per component, relative to sum_m |q_m|/d_m^2 + sum_b Z_b/d_b^2 (the gradient's scale):
// - the near terms: grad S over the cells within the R_c of the grid the gradient interpolates (R_g = that R_c), the
//   same cells that grid's L = C - S leaves out, so no term is missing and none is counted twice. (A wider R_g on the
//   value's grid counted the shell between R_c and R_g twice: up to (erfc(x) + 2x/sqrt(pi) e^{-x^2}) |q|/d^2 at
//   x = a R_c, 5e-3 at 1e-3; a narrower one on a finer grid left a shell out, up to 0.4 tolerance that no grid
//   removes, which the estimate then added again as a bound: a few cells in a small region built three grids and
//   ended with the direct sum.) What is left is L's: its step at R_c (erfc(a R_c) |q|/R_c, the value's truncation
//   share) and its smooth part, both through the interpolant's derivative;
// - the interpolant's derivative: order 8 loses one power of h, |d/dx (I L - L)| ~ C h^7 |L^(8)| against the value's
//   C' h^8 |L^(8)|, with C / C' ~ 3.4 for the centred stencil (max |w'(t)| / max |w(t)| of the nodal polynomial), and
//   the scale sum |q|/d^2 is sum |q|/d over a typical distance: the value's grid meets the gradient's tolerance only
//   where the value's error is well below its tolerance. So it is measured: at kSplitGradChecks random points of
//   the region against the direct double sum; the estimate is kSplitGradSafety * that error. Where it does not
//   fit, a grid of its own is built for the gradient at the tighter value tolerance that the measured error asks
//   for (up to kSplitGradTries - 1 times); where none fits (or cannot be built), the gradient is the direct sum.
// All of it happens at the first gradient call: the value path's tables, speed and bits do not change.
constexpr int kSplitGradChecks = 1024;
// Tries: the value's grid, then up to two grids of the gradient's own (the second at the rate of error against
// tolerance that the first measured).
constexpr int kSplitGradTries = 3;
constexpr double kSplitGradSafety = 2.0;
// A grid of the gradient's own aims its estimate at this fraction of the tolerance (field_split.cpp says why).
constexpr double kSplitGradAim = 0.3;

struct SplitGradInfo {
    bool ready = false;         // prepared (split_grad_prepare ran)
    bool split = false;         // the split's gradient is used; false: the direct sum
    double r_cut = 0;           // R_g: the R_c of the grid the gradient interpolates
    double grid_tolerance = 0;  // the value tolerance of the grid the gradient interpolates
    double sampled_error = 0, error_estimate = 0;
    double value_grid_error = 0;  // the sampled error on the value's grid (the first try)
    int64_t grid_values = 0;    // the gradient's own grid (0: it shares the value's)
    double setup_seconds = 0;
};

struct SplitGradModel {
    SplitGradInfo info;
    std::unique_ptr<SplitModel> own;  // the gradient's own tables (a finer grid), or null: the value's
    std::vector<double> fp;           // f'(s) on [0, R_g^2]
    SplitGradView view;
    double self = 0;                  // the singular-cell 1/r (SplitModel::self)
};

// The field that m was built from (the model's cells, in its order, and the nuclei of `nuclei`), for a gradient's own
// grid: the same sums as the caller's d, so the backend need not keep a copy of it.
FieldData split_model_data(const SplitModel &m, const FieldData &nuclei, double cell_volume, bool point_charges);

// The cells' part of U and grad U at n points inside the region on a backend (for the check).
using SplitGradEval = std::function<void(const SplitGradView &, double self, int64_t n, const double *xyz, double *u,
                                         double *grad)>;

// Prepares gm for the field d (its cells and nuclei as split_build took them; region and tolerance from opt) whose
// value tables are `value`: R_g, the f' table, the check, and the gradient's own grid where needed (built by engine).
// Never throws for a tolerance it cannot reach: gm.info.split is then false.
void split_grad_prepare(SplitGradModel &gm, const SplitModel &value, const FieldData &d, const qmmm_options &opt,
                        SplitEngine &engine, const SplitGradEval &eval, int threads);

// The gradient's report (qmmm_field_split_grad_params): a backend that has it prepares on first use.
class SplitGradStats {
public:
    virtual ~SplitGradStats() = default;
    virtual const SplitGradInfo &split_grad_info() = 0;
    // The cells' and nuclei's U and dU/dr at the points inside the region, out[i] = 1 for the others (left as they
    // are: the caller sums them directly). False: the gradient is the direct sum (nothing written).
    virtual bool split_grad(int64_t n, const double *xyz, double *u, double *grad, std::vector<char> &out) = 0;
};

// The backend's view of the split (qmmm_field_split_params / _stats).
class SplitStats {
public:
    virtual ~SplitStats() = default;
    virtual const SplitInfo &split_info() const = 0;
    virtual int64_t points() const = 0;
    virtual int64_t points_outside() const = 0;
    virtual int64_t bytes() const = 0;  // host and device memory of the tables and the direct fallback
};

}  // namespace qmmm
