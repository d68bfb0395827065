// core_backend.cpp -- backend and device choice shared by every family (core_backend.hpp).
#include "core_backend.hpp"

#include <string>

#include "tuning_env.hpp"

namespace qmmm {

int device_count() { return GpuRegistry<DeviceGpu>::present() ? GpuRegistry<DeviceGpu>::get().count() : 0; }

int resolve_backend(int requested) {
    if (requested == QMMM_BACKEND_CPU || requested == QMMM_BACKEND_CUDA) return requested;
    if (requested != QMMM_BACKEND_AUTO)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("backend = %d is not a backend (0 AUTO, 1 CPU, 2 CUDA)", requested));
    if (const int env = tuning::backend(); env == QMMM_BACKEND_CPU || env == QMMM_BACKEND_CUDA) return env;
    return device_count() > 0 ? QMMM_BACKEND_CUDA : QMMM_BACKEND_CPU;
}

namespace {
int usable_count() {
    const int count = GpuRegistry<DeviceGpu>::get().count();  // throws NO_CUDA without CUDA
    if (count == 0)
        throw Error(QMMM_ERR_NO_DEVICE, "backend CUDA asked for, but no CUDA device is usable (no GPU or no driver)");
    return count;
}
}  // namespace

std::vector<int> check_devices(const int32_t *devices, int n, int max_n, const char *what) {
    if (n < 0 || n > max_n)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_devices = %d entries of %s (0..%d)", n, what, max_n));
    std::vector<int> devs(devices, devices + n);
    if (devs.empty()) devs.push_back(0);
    const int count = usable_count();
    for (size_t i = 0; i < devs.size(); ++i)
        if (devs[i] < 0 || devs[i] >= count)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s[%zu] = %d but %d CUDA device(s) are visible (0..%d)", what,
                                                     i, devs[i], count, count - 1));
    return devs;
}

void check_device(int device, const char *what) {
    const int count = usable_count();
    if (device < -1 || device >= count)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s = %d but %d CUDA device(s) are visible (use -1 or 0..%d)", what,
                                                 device, count, count - 1));
}

}  // namespace qmmm

extern "C" QMMM_API int qmmm_cuda_device_count(int *count) {
    return qmmm::api_guard("qmmm_cuda_device_count", [&]() -> int {
        if (!count) throw qmmm::Error(QMMM_ERR_NULL_ARG, "count is NULL");
        *count = 0;
        *count = qmmm::device_count();
        return QMMM_SUCCESS;
    });
}
