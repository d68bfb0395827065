// core_gpu.cu -- the GPU side of the core: device discovery (DeviceGpu) and the shared CUDA helpers
// (core_gpu.cuh).
#include "core_backend.hpp"
#include "core_gpu.cuh"

namespace qmmm::cuda {

int status_of(cudaError_t e) {
    switch (e) {
        case cudaErrorMemoryAllocation: return QMMM_ERR_OUT_OF_MEMORY;
        case cudaErrorNoDevice: return QMMM_ERR_NO_DEVICE;
        case cudaErrorInvalidDevice: return QMMM_ERR_INVALID_ARG;
        default: return QMMM_ERR_CUDA;
    }
}

void check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return;
    cudaGetLastError();
    throw Error(status_of(e), std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

DeviceScope::DeviceScope(int device) {
    check(cudaGetDevice(&saved_), "cudaGetDevice");
    if (saved_ != device) check(cudaSetDevice(device), "cudaSetDevice");
}

DeviceScope::~DeviceScope() {
    int now = -1;
    if (cudaGetDevice(&now) == cudaSuccess && now != saved_) cudaSetDevice(saved_);
}

void *device_alloc(size_t bytes, const char *what) {
    void *p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw Error(status_of(e), "cudaMalloc of " + std::to_string(bytes) + " bytes for " + what +
                                      " failed: " + cudaGetErrorString(e));
    }
    return p;
}

void *pinned_alloc(size_t bytes, const char *what) {
    void *p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocMapped);
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw Error(QMMM_ERR_OUT_OF_MEMORY, "cudaHostAlloc of " + std::to_string(bytes) + " pinned bytes for " +
                                                what + " failed: " + cudaGetErrorString(e));
    }
    return p;
}

namespace {

class DeviceGpuImpl final : public DeviceGpu {
public:
    // No driver installed (cudaDriverGetVersion says 0) or no GPU: 0 devices, and AUTO picks the CPU. A driver
    // that is there but fails (e.g. older than this runtime) is an error: it would otherwise look like a
    // machine without a GPU, and GPU work would silently move to the CPU.
    int count() const override {
        int n = 0;
        const cudaError_t e = cudaGetDeviceCount(&n);
        if (e == cudaSuccess) return n;
        cudaGetLastError();
        int driver = 0;
        cudaDriverGetVersion(&driver);
        if (e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && driver == 0)) return 0;
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        throw Error(QMMM_ERR_CUDA,
                    strfmt("cudaGetDeviceCount failed: %s (%s); driver API version %d, runtime %d", cudaGetErrorName(e),
                           cudaGetErrorString(e), driver, runtime));
    }
};

const DeviceGpuImpl impl;
const GpuRegistry<DeviceGpu>::Registration registration(impl);

}  // namespace
}  // namespace qmmm::cuda
