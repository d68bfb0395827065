// gpu_registry.hpp -- how the API of a family reaches its GPU side without knowing CUDA.
//
// Each family declares its GPU interface beside its CPU one (src_cxx/<family>/<family>_backend.hpp, an
// abstract class); src_cuda/<family>/<family>_gpu.cu implements it and registers one instance when the
// library is loaded (a static GpuRegistry<Iface>::Registration). A build without CUDA compiles no src_cuda
// file, so nothing registers and GpuRegistry<Iface>::get() throws QMMM_ERR_NO_CUDA: this is the library's only
// "no CUDA" mechanism, and adding a family needs no stub anywhere.
#pragma once
#include "error.hpp"

namespace qmmm {

// The message of every QMMM_ERR_NO_CUDA.
inline const char *no_cuda_message() {
    return "this build of qmmm-accel has no CUDA backend (configured with QMMM_CUDA=OFF or without nvcc); use "
           "backend CPU or AUTO";
}

template <class Iface>
class GpuRegistry {
public:
    static bool present() { return slot() != nullptr; }
    static const Iface &get() {
        if (!slot()) throw Error(QMMM_ERR_NO_CUDA, no_cuda_message());
        return *slot();
    }
    struct Registration {
        explicit Registration(const Iface &impl) { slot() = &impl; }
    };

private:
    static const Iface *&slot() {
        static const Iface *impl = nullptr;
        return impl;
    }
};

}  // namespace qmmm
