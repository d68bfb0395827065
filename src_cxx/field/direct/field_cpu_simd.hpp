// field_cpu_simd.hpp -- the CPU field's hand-vectorised chunk kernels (field_cpu_simd.cpp), one set per
// instruction set, called by field_cpu.cpp.
//
// A kernel returns the partials of up to kSimdMaxPoints points against one chunk of kFieldChunk cells. Its
// arithmetic per point is fixed (the other points only share the cell loads), and its lanes are the reference
// kernels' 16 lanes (lane l takes cells l, l + 16, ...; the lanes are added pairwise in the same order), so a
// point's partial depends on the point, the chunk and the instruction set only. 1/r comes from the hardware
// reciprocal square root refined by a Newton step (see field_cpu_simd_kernels.hpp for the error budget).
//
// Preconditions (field_cpu.cpp routes other points to the reference kernels): every coordinate of the point
// and of the cells, padding included, within kSimdRange bohr of the origin, so that no d2 leaves the float
// range. Points within the singular radius of a cell (and in MIXED within kNearRadius2 of one) are handled
// inside, by a careful pass over that chunk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

#include "cpu_simd.hpp"
#include "backend/field_shared.hpp"

namespace qmmm {

constexpr int kSimdMaxPoints = 4;
constexpr double kSimdRange = 1e17;

// One chunk's cells. SINGLE: absolute float coordinates and HALF the float charges (q/2, exact: the kernel's
// Newton step takes its factor 1/2 from them); DOUBLE: absolute doubles; MIXED: float offsets (hi x y z,
// charge, lo xl yl zl) from the chunk origin, and the absolute double copy for near cells.
struct SimdCellsF {
    const float *x, *y, *z, *q;
};
struct SimdCellsD {
    const double *x, *y, *z, *q;
};
struct SimdCellsM {
    const float *x, *y, *z, *q, *xl, *yl, *zl;
    const double *xd, *yd, *zd, *qd;
};

struct FieldSimdKernels {
    CpuIsa isa;
    // Points per call that suit the registers of this instruction set, per precision (any 1..kSimdMaxPoints
    // gives the same values).
    int points_single, points_mixed, points_double;
    // part[k]: chunk partial of point k < np. self: 1/r for a cell the point is on (C / h, or NaN).
    // guard = false promises that no point is within the guard radius of a cell of the chunk (the singular
    // radius; in MIXED kNearRadius2), as the chunk's bounding box shows; the kernel then skips the check.
    void (*single)(const SimdCellsF &c, const float (*p)[3], int np, float self, bool guard, float *part);
    // h, l: the point's offset from the chunk origin as hi + lo floats (field_mixed_split); b2: the point's
    // field_mixed_b2 for the chunk; p: absolute.
    void (*mixed)(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2,
                  const double (*p)[3], int np, double self, bool guard, double *part);
    void (*dbl)(const SimdCellsD &c, const double (*p)[3], int np, double self, bool guard, double *part);
    // DOUBLE at np <= kSimdMaxPoints lattice nodes that share x and y (node k at z[k]) against n cells (a multiple of
    // 16, any layout): each cell's x-y distance serves all np nodes, and the series stops at 1e-12 relative instead
    // of half an ulp (the split's grid: field_split.hpp). A node within the singular radius of a cell takes q * self.
    void (*dbl_rows)(const SimdCellsD &c, int64_t n, double x, double y, const double *z, int np, double self, double *part);
    // MIXED's value and gradient of one point (h, l, b2, p as mixed for np = 1; guard as above): *part the value, with
    // mixed's bits; *grad dU/dr.
    void (*mixed_grad)(const SimdCellsM &c, const float (*h)[3], const float (*l)[3], const float *b2,
                       const double (*p)[3], double self, bool guard, double *part, double (*grad)[3]);
};

// The kernels of `isa`, or nullptr for CpuIsa::Generic (the reference kernels in field_cpu.cpp).
const FieldSimdKernels *field_simd_kernels(CpuIsa isa);

// Cache-line aligned storage for the cell arrays: a chunk starts on a line, so no vector load splits two.
template <class T>
struct AlignedAllocator {
    using value_type = T;
    static constexpr std::align_val_t kAlign{64};
    AlignedAllocator() = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U> &) {}
    T *allocate(size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), kAlign)); }
    void deallocate(T *p, size_t) { ::operator delete(p, kAlign); }
    template <class U>
    bool operator==(const AlignedAllocator<U> &) const { return true; }
    template <class U>
    bool operator!=(const AlignedAllocator<U> &) const { return false; }
};

}  // namespace qmmm
