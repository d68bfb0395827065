// rdf_cuda_stub.cpp -- the RDF CUDA entry points for builds without CUDA: every one says so.
#include "../src_cuda/qmmm_cuda.h"
#include "error.hpp"

namespace qmmm::cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw Error(QMMM_ERR_NO_CUDA, "this build of qmmm-accel has no CUDA backend (configured with QMMM_CUDA=OFF "
                                  "or without nvcc); use backend CPU or AUTO");
}
}  // namespace

RdfDevice *rdf_device_open(int) { no_cuda(); }
void rdf_device_close(RdfDevice *) noexcept {}
int32_t rdf_max_bins_per_unit() { no_cuda(); }
void rdf_device_set_frame(RdfDevice *, const rdf::Frame &) { no_cuda(); }
void rdf_device_unit(RdfDevice *, const rdf::Frame &, const RdfUnit &, int) { no_cuda(); }
void rdf_device_add_hist(RdfDevice *, const rdf::Frame &, uint64_t *) { no_cuda(); }

}  // namespace qmmm::cuda
