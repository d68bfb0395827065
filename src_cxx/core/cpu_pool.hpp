// cpu_pool.hpp -- the library's parallel loop for CPU calls that are large enough to share (cpu_threads.hpp says
// when): tiles handed out one at a time from an atomic counter, to the caller and to up to nt - 1 pool threads.
//
// Why not an OpenMP region: its closing barrier waits for every thread of the team, so a team thread that the OS has
// not yet scheduled (a loaded node, or one MPI rank per core) holds the call for a time slice: 20 ms against 90 us
// alone, measured on 2 cores with the other core busy. Here the caller never waits for a helper to arrive: tiles
// nobody has claimed, the caller computes; it waits only for tiles a running helper is computing. Helpers sleep on a
// condition variable between calls (no spinning that would take cycles from other ranks). Which thread computes a
// tile never changes its value.
#pragma once
#include <cstdint>
#include <functional>
#include <utility>

namespace qmmm {

// The pool's side of parallel_tiles (nt > 1 and n_tiles > 1).
void parallel_tiles_pooled(int nt, int64_t n_tiles, const std::function<void(int64_t)> &f);

// Calls f(t) once for each t in [0, n_tiles), on the calling thread and up to nt - 1 pool threads; returns when all
// are done. nt <= 1 or n_tiles <= 1: the calling thread alone, in order, with no std::function (and no allocation
// on the path of a small call). f must not throw.
template <class F>
inline void parallel_tiles(int nt, int64_t n_tiles, F &&f) {
    if (nt <= 1 || n_tiles <= 1) {
        for (int64_t t = 0; t < n_tiles; ++t) f(t);
        return;
    }
    parallel_tiles_pooled(nt, n_tiles, std::function<void(int64_t)>(std::forward<F>(f)));
}

}  // namespace qmmm
