// field_tuning_gpu.cuh -- the kernels' side of the CUDA embedding field's tuning table: the table itself, its chain
// of architectures and its one accessor are plain C++ (src_cxx/field/direct/field_tuning.hpp, tested without a GPU);
// here the architecture a compile pass builds for, whose row gives the kernels' compile-time fields (as CUB's
// ActivePolicy: each architecture's machine code takes its own launch bounds), and the tile shapes' dispatch.
#pragma once
#include <cstdint>
#include <type_traits>

#include "direct/field_tuning.hpp"

namespace qmmm::cuda::field {

// The architecture (10 * major + minor) whose code this pass compiles: __CUDA_ARCH__ in a device pass; in the host
// pass, which ignores launch bounds, the chain's head.
#ifdef __CUDA_ARCH__
constexpr int kCompiledArch = __CUDA_ARCH__ / 10;
#else
constexpr int kCompiledArch = kFieldPolicies[0].arch;
#endif

// Calls f(P, G) for the shape of kFieldTileShapes equal to shape, P and G as std::integral_constant (one
// instantiation per shape of the list); false if shape is not in it.
template <int I = 0, class F>
inline bool for_tile_shape(TileShape shape, F &&f) {
    if constexpr (I == kNumFieldTileShapes) {
        return false;
    } else {
        constexpr TileShape t = kFieldTileShapes[I];
        if (shape == t) {
            f(std::integral_constant<int, t.points_per_thread>{}, std::integral_constant<int, t.group_threads>{});
            return true;
        }
        return for_tile_shape<I + 1>(shape, static_cast<F &&>(f));
    }
}

}  // namespace qmmm::cuda::field
