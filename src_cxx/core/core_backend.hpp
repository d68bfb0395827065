// core_backend.hpp -- the rules every family shares for choosing a backend and GPUs (one owner for each):
// QMMM_BACKEND, AUTO, device counts and device lists. The GPU side of the core (device discovery) is
// src_cuda/core/core_gpu.cu.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu_registry.hpp"

namespace qmmm {

// Device discovery, implemented on the GPU side.
class DeviceGpu {
public:
    virtual ~DeviceGpu() = default;
    // CUDA devices this process can use: 0 where no NVIDIA driver is installed or there is no GPU; a driver
    // that is present but fails (older than the runtime, broken) throws Error, it is not "no GPU".
    virtual int count() const = 0;
};

// 0 in a build without CUDA; otherwise DeviceGpu::count().
int device_count();

// The backend a request resolves to: explicit CPU or CUDA as asked; AUTO -> the environment variable
// QMMM_BACKEND (cpu|cuda|auto, any case) -> CUDA when device_count() > 0 -> CPU. Throws INVALID_ARG for a bad
// value of the variable or of `requested`, and whatever device_count() throws.
int resolve_backend(int requested);

// The GPUs of a CUDA request: `devices` (n entries; none = device 0; a device may be listed twice) checked
// against this build and machine: NO_CUDA (a build without CUDA), NO_DEVICE (no usable GPU), INVALID_ARG (an
// index outside 0..count-1, or n outside 0..max_n). `what` names the option in messages.
std::vector<int> check_devices(const int32_t *devices, int n, int max_n, const char *what);

// One device index (-1 = the calling thread's current device) for a CUDA request: as check_devices.
void check_device(int device, const char *what);

}  // namespace qmmm
