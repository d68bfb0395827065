// device.cu -- CUDA device discovery shared by every family.
#include <cuda_runtime.h>

#include "qmmm_cuda.h"

namespace qmmm::cuda {

// No driver, no GPU or a driver too old for this runtime all mean "0 devices": AUTO then picks the CPU.
int device_count(int *count) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // the failure is an answer, not a pending error for later calls
        n = 0;
    }
    *count = n;
    return QMMM_SUCCESS;
}

}  // namespace qmmm::cuda
