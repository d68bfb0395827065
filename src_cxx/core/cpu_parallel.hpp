// cpu_parallel.hpp -- the library's parallel loop for CPU calls that are large enough to share (cpu_threads.hpp says
// when): tiles handed out one at a time (dynamic schedule) to an OpenMP team of nt threads. Small calls never reach
// OpenMP: even a region with if(false) builds a team (an allocation and futex calls, ~2-4 us). Which thread computes
// a tile never changes its value.
#pragma once
#include <cstdint>

#include "cpu_simd.hpp"

namespace qmmm {

// Calls f(t) once for each t in [0, n_tiles); nt <= 1 or n_tiles <= 1: the calling thread alone, in order. f must not
// throw.
template <class F>
inline void parallel_tiles(int nt, int64_t n_tiles, F &&f) {
    if (nt <= 1 || n_tiles <= 1) {
        for (int64_t t = 0; t < n_tiles; ++t) f(t);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
#pragma omp for schedule(dynamic, 1)
        for (int64_t t = 0; t < n_tiles; ++t) f(t);
        simd_clear_upper();  // the workers too (cpu_simd.hpp)
    }
}

}  // namespace qmmm
