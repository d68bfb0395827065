// dcs_cuda_stub.cpp -- the DCS CUDA entry points for builds without CUDA: every one says so.
#include "../src_cuda/qmmm_cuda.h"
#include "error.hpp"

namespace qmmm::cuda {
namespace {
[[noreturn]] void no_cuda() {
    throw Error(QMMM_ERR_NO_CUDA, "this build of qmmm-accel has no CUDA backend (configured with QMMM_CUDA=OFF "
                                  "or without nvcc); use backend CPU or AUTO");
}
}  // namespace

DcsDevice *dcs_device_open(int) { no_cuda(); }
void dcs_device_close(DcsDevice *) noexcept {}
void dcs_device_set_atoms(DcsDevice *, const DcsProblem &) { no_cuda(); }
int64_t dcs_device_planes(DcsDevice *, const DcsProblem &, int64_t, int64_t, double *) { no_cuda(); }

}  // namespace qmmm::cuda
