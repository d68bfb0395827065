// cuda_stub.cpp -- compiled instead of src_cuda/ when the library is built without CUDA, so the
// dispatch code has one set of entry points and CUDA requests fail with a clear status.
#include "../src_cuda/qmmm_cuda.h"
#include "error.hpp"

namespace qmmm::cuda {

int device_count(int *count) {
    *count = 0;
    return QMMM_SUCCESS;
}

std::unique_ptr<FieldBackend> make_field(const FieldData &, const qmmm_options &) {
    throw Error(QMMM_ERR_NO_CUDA, "this build of qmmm-accel has no CUDA backend (configured with QMMM_CUDA=OFF "
                                  "or without nvcc); use backend CPU or AUTO");
}

}  // namespace qmmm::cuda
