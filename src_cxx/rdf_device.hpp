// rdf_device.hpp -- one GPU's part of the RDF (src_cuda/rdf_kernels.cu; rdf_cuda_stub.cpp without CUDA).
// A host thread owns one RdfDev (stream pair, the frame's atoms, a 64-bit histogram) for the life of the
// per-GPU thread pool (rdf_gpu_pool.cpp). Work in a frame is a list of items (brute force: a 512-atom tile
// of sel1 against a run of sel2; cell list: 256 sel1 atoms; seed kernel: a constant-memory tile of sel1);
// a unit is a range of items times a range of histogram bins. Every call throws qmmm::Error.
#pragma once
#include <cstdint>

#include "rdf_backend.hpp"

namespace qmmm::cuda {

struct RdfDev;
RdfDev *rdf_dev_open(int device);  // binds the calling thread to `device`
void rdf_dev_close(RdfDev *d) noexcept;
int32_t rdf_dev_max_bins();          // bins one unit may cover (shared-memory histogram)
int64_t rdf_dev_items(const rdf::Frame &f, int kernel);
// Uploads the frame's atoms (waits for the device's queued work first: the buffers are reused).
void rdf_dev_upload(RdfDev *d, const rdf::Frame &f);
void rdf_dev_zero(RdfDev *d, int32_t n_bins);  // zeroes the device histogram
// Queues items [k0, k1) x bins [b0, b0 + nb) on stream `slot` (0 or 1) and returns; the two streams let a
// unit start while the previous one drains. Adds into the device histogram.
void rdf_dev_launch(RdfDev *d, const rdf::Frame &f, int64_t k0, int64_t k1, int32_t b0, int32_t nb, int kernel,
                    int slot);
void rdf_dev_wait(RdfDev *d, int slot);
// Waits for all queued work and adds the device histogram to hist (n_bins).
void rdf_dev_add_hist(RdfDev *d, int32_t n_bins, uint64_t *hist);

}  // namespace qmmm::cuda
