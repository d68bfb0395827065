// rdf_cuda_stub.cpp -- the RDF CUDA entry points (rdf_device.hpp) for builds without CUDA: every one says so.
#include "error.hpp"
#include "rdf_device.hpp"

namespace qmmm::cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw Error(QMMM_ERR_NO_CUDA, "this build of qmmm-accel has no CUDA backend (configured with QMMM_CUDA=OFF "
                                  "or without nvcc); use backend CPU or AUTO");
}
}  // namespace

RdfDev *rdf_dev_open(int) { no_cuda(); }
void rdf_dev_close(RdfDev *) noexcept {}
int32_t rdf_dev_max_bins() { no_cuda(); }
int64_t rdf_dev_items(const rdf::Frame &, int) { no_cuda(); }
void rdf_dev_upload(RdfDev *, const rdf::Frame &) { no_cuda(); }
void rdf_dev_zero(RdfDev *, int32_t) { no_cuda(); }
void rdf_dev_launch(RdfDev *, const rdf::Frame &, int64_t, int64_t, int32_t, int32_t, int, int) { no_cuda(); }
void rdf_dev_wait(RdfDev *, int) { no_cuda(); }
void rdf_dev_add_hist(RdfDev *, int32_t, uint64_t *) { no_cuda(); }

}  // namespace qmmm::cuda
