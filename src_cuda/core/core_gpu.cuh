// core_gpu.cuh -- what every family's GPU code shares: the one mapping of CUDA errors to library statuses,
// the device scope of a call, and device / mapped-pinned buffers that grow on demand.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "error.hpp"

namespace qmmm::cuda {

// cudaErrorMemoryAllocation -> OUT_OF_MEMORY; no device -> NO_DEVICE; a bad index -> INVALID_ARG; everything
// else (a driver too old for the runtime included) -> CUDA.
int status_of(cudaError_t e);

// Throws Error(status_of(e), "what failed: name (text)") unless e is cudaSuccess; clears a non-sticky error
// first so the thread's next CUDA call starts clean.
void check(cudaError_t e, const char *what);

// Makes `device` current for the scope and restores the caller's device afterwards.
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

private:
    int saved_ = 0;
};

void *device_alloc(size_t bytes, const char *what);  // throws OUT_OF_MEMORY / CUDA with `what` in the message
void *pinned_alloc(size_t bytes, const char *what);  // mapped pinned host memory

// Device memory of T, grown (never shrunk) by ensure().
template <class T>
struct DeviceBuf {
    T *p = nullptr;
    size_t n = 0;
    void ensure(size_t want, const char *what) {
        if (want <= n) return;
        release();
        p = static_cast<T *>(device_alloc(want * sizeof(T), what));
        n = want;
    }
    void release() {
        if (p) cudaFree(p);
        p = nullptr, n = 0;
    }
};

// Mapped pinned host memory of T (p) and the device's view of it (dev).
template <class T>
struct PinnedBuf {
    T *p = nullptr, *dev = nullptr;
    size_t n = 0;
    void ensure(size_t want, const char *what) {
        if (want <= n) return;
        release();
        p = static_cast<T *>(pinned_alloc(want * sizeof(T), what));
        n = want;
        check(cudaHostGetDevicePointer(reinterpret_cast<void **>(&dev), p, 0), "cudaHostGetDevicePointer");
    }
    void release() {
        if (p) cudaFreeHost(p);
        p = dev = nullptr, n = 0;
    }
};

}  // namespace qmmm::cuda
