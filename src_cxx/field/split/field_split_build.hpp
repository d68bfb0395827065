// field_split_build.hpp -- the steps of the split's setup, which split_build (field_split.cpp) runs in order: the
// parameters and the f-tables (field_split_params.cpp), the cell list (field_split_cells.cpp), the interpolation grid
// of the long-range part with its error estimate and refinement (field_split_grid.cpp). Internal to split/.
#pragma once
#include <cstdint>
#include <vector>

#include "split/field_split.hpp"

namespace qmmm::split {

// ---- parameters and tables (field_split_params.cpp) ----
constexpr double kMinTolerance = 1e-11, kMaxTolerance = 1e-3;
double erfc_inverse(double y);  // erfc(x) = y for 0 < y < 1
double choose_alpha(double tol);                                                    // density cells
double charges_alpha(const FieldData &d, const double *region, double tol, double x_cut);  // point charges
double choose_spacing(double tol);                                                  // level-0 grid spacing
long double f_exact(long double alpha, long double s);  // f(s) = erf(a sqrt s) / sqrt s
// m.table, m.tv: f on [0, R_c^2] within `target` (absolute); m.table_single & co: MIXED's single-precision term.
void build_table(SplitModel &m, double alpha, double rc, double target);
void build_table_single(SplitModel &m, double alpha, double rc);
long double fp_exact(long double alpha, long double s);  // f'(s)
// table, tv: f'(s) on [0, R_g^2] within `target` (absolute), as build_table; false where kSplitMaxTerms do not reach it.
bool build_table_grad(std::vector<double> &table, SplitTableView &tv, double alpha, double rg, double target);

// ---- the cell list (field_split_cells.cpp) ----
// m.cv, m.start, m.x .. m.q: d's cells binned by position, bins of side R_c / kBinsPerRc.
void build_cells(SplitModel &m, const FieldData &d, double rc);

// ---- the grid (field_split_grid.cpp) ----
// Lower bound of the normwise scale sum |q|/d + sum Z/d at a point, from the Coulomb sum C there (|C| <= sum |q|/d)
// and a floor for sum |q|/d known otherwise.
double scale_bound(const FieldData &d, const double *p, double coulomb, double floor = 0);

// The check points of build_grid and their exact sums (C: the cells' Coulomb sum, S: the short-range sum).
struct SplitSamples {
    std::vector<double> xyz, c, s, floor;  // floor: CellScale::point
};

// m.gv, m.g0, m.pool, m.brick, m.blocks and the grid's part of m.info over `region` at level-0 spacing h0, refined
// until the interpolation estimate is within the tolerance's share; samples: the check points, for split_build.
void build_grid(SplitModel &m, const FieldData &d, SplitEngine &e, const double *region, double tol, double h0,
                SplitSamples &samples);

}  // namespace qmmm::split
