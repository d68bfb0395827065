// field_local_origin.hpp -- SINGLE fields far from the coordinate origin: built around a local origin.
//
// SINGLE rounds coordinates to float, which near 1e5 bohr is a step of 0.008 bohr: a field and its points there had
// errors of 1.7e-3 against a claim of ~1e-6. Offsets from a nearby origin round by the field's own size instead.
#pragma once
#include <memory>
#include <vector>

#include "field_backend.hpp"

namespace qmmm {

// A field whose cells and nuclei reach farther than this (bohr, on any axis) from the origin, and farther than
// four half-widths of their box, is moved; other fields keep their coordinates (and their bits).
constexpr double kLocalOriginMin = 16.0;

// For a SINGLE DIRECT field far from the origin: moves d's cells and nuclei by -o (o = the centre of their box,
// rounded to whole bohr), builds the backend with `make`, and returns it wrapped so that every point is moved by -o
// (in double) before it reaches the backend; d's nuclei are given back as they were (the API names them in
// messages). Otherwise returns make(d) as it is.
template <class Make>
std::unique_ptr<FieldBackend> with_local_origin(FieldData &d, const qmmm_options &o, Make &&make);

// The wrapper itself (field_local_origin.cpp).
std::unique_ptr<FieldBackend> wrap_local_origin(std::unique_ptr<FieldBackend> inner, const double origin[3]);

// Whether d (and the screened charges at sx, sy, sz, if any) needs a local origin for options o, and which: the
// centre of their box, rounded.
bool local_origin(const FieldData &d, const qmmm_options &o, double origin[3], const std::vector<double> &sx = {},
                  const std::vector<double> &sy = {}, const std::vector<double> &sz = {});

// Moves d's cells, nuclei and heavy cells by -origin.
void move_field(FieldData &d, const double origin[3]);

template <class Make>
std::unique_ptr<FieldBackend> with_local_origin(FieldData &d, const qmmm_options &o, Make &&make) {
    double origin[3];
    if (!local_origin(d, o, origin)) return make(d);
    const std::vector<double> nuclei = d.nuc_xyz;
    move_field(d, origin);
    std::unique_ptr<FieldBackend> b = wrap_local_origin(make(d), origin);
    d.nuc_xyz = nuclei;
    return b;
}

}  // namespace qmmm
