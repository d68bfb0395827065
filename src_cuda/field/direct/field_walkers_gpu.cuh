// field_walkers_gpu.cuh -- the per-walker sums of device-resident values (qmmm_field_eval_walkers_device): one thread a
// walker adds its values in point order, as the host's walker sums do, so the sums have the host's bits (no atomics,
// no tree: a walker has tens of points, and a tree would add them in another order).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace qmmm::cuda::field {

// sums[w] = u[offsets[w] - offsets[0]] + ... + u[offsets[w+1] - 1 - offsets[0]] in that order (0 for an empty
// walker); offsets: n_walkers + 1 entries in device memory.
cudaError_t launch_walker_sums(const double *u, const int64_t *offsets, int64_t n_walkers, double *sums, cudaStream_t s);

}  // namespace qmmm::cuda::field
