// rdf_tuning_gpu.cuh -- the RDF kernels' tuning: block size, occupancy bound, the brute force's tiles and runs, the
// unroll of its pair loop. None changes a count (integer sums, exact in any order). The host reads them through
// rdf_gpu.cuh (launch sizes, shared memory).
//
// One architecture is measured, sm_90 (H100, H200; the notes at the top of rdf_gpu_kernels.cu): every GPU takes these
// values (as the field's tuning table falls back to its nearest lower architecture, src_cxx/field/direct/
// field_tuning.hpp; docs/design/gpu-layers.md).
#pragma once
#include <cstdint>

namespace qmmm::cuda::rdf_gpu {

constexpr int kBlock = 256;      // threads a block, every kernel
constexpr int kMinBlocks = 4;    // __launch_bounds__ of the counting kernels: resident blocks an SM
constexpr int kTile = 512;       // brute force: sel2 atoms staged in shared memory per step
constexpr int kRun = 2048;       // brute force: sel2 atoms per item (kRunSmall below kSmallN atoms)
constexpr int kRunSmall = 512;
constexpr int64_t kSmallN = 250000;
constexpr int kBruteUnroll = 4;  // brute force: the unroll of the loop over a tile's sel2 atoms (two pairs a step)

}  // namespace qmmm::cuda::rdf_gpu
