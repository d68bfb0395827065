// dcs_tuning_gpu.cuh -- the DCS kernel's tuning per precision: what the bits do not depend on (every value gives the
// same sums in the same order). The block shape (32 x 4 threads, 4 x 2 points a thread, kTileX x 8 points a block)
// and the atom tile (kAtomTile, fixed by MIXED's blocks) are the device layout, dcs_gpu.cuh.
//
// One architecture is measured, sm_90 (H100, H200): every GPU takes these values (as the field's tuning table falls
// back to its nearest lower architecture, src_cxx/field/direct/field_tuning.hpp; docs/design/gpu-layers.md).
#pragma once
#include "qmmm_accel_dcs.h"

namespace qmmm::cuda::dcs {

struct DcsTuning {
    // The unroll of the loop over a tile's atoms (each step 8 pair terms a thread): 4 for float terms, 2 for double
    // (the values since the first DCS kernels; no measurement recorded).
    int atom_unroll;
};

template <int PREC>
constexpr DcsTuning kDcsTuning{PREC == QMMM_PRECISION_DOUBLE ? 2 : 4};

}  // namespace qmmm::cuda::dcs
