// field_local_origin.hpp -- SINGLE fields far from the coordinate origin: built around a local origin.
//
// SINGLE rounds coordinates to float, which near 1e5 bohr is a step of 0.008 bohr: a field and its points there had
// errors of 1.7e-3 against a claim of ~1e-6. Offsets from a nearby origin round by the field's own size instead.
#pragma once
#include <vector>

#include "backend/field_backend.hpp"

namespace qmmm {

// A field whose cells and nuclei reach farther than this (bohr, on any axis) from the origin, and farther than
// four half-widths of their box, is moved; other fields keep their coordinates (and their bits).
constexpr double kLocalOriginMin = 16.0;

// Whether d (and the screened charges at sx, sy, sz, if any) needs a local origin for options o, and which: the
// centre of their box, rounded.
bool local_origin(const FieldData &d, const qmmm_options &o, double origin[3], const std::vector<double> &sx = {},
                  const std::vector<double> &sy = {}, const std::vector<double> &sz = {});

// Moves d's cells, nuclei and heavy cells by -origin.
void move_field(FieldData &d, const double origin[3]);

}  // namespace qmmm
