// cpu_parallel.hpp -- the library's parallel loop for CPU calls that are large enough to share (cpu_threads.hpp says
// when): tiles handed out one at a time from an atomic counter to the calling thread and up to nt - 1 helper threads
// of one process-wide pool (cpu_pool.cpp).
//
// Why not an OpenMP team: its closing barrier waits for every thread of the team, so a team thread the OS has not
// scheduled yet (a loaded node, other ranks on the cores) holds the call for a time slice: 20 ms against 71 us on
// the caller's thread alone, measured on 2 cores with the other one busy. Here the caller starts at once and never
// waits for a helper that has not arrived: the tiles nobody claimed, it computes itself; it waits only for helpers
// that joined and are computing. Helpers sleep on a condition variable between calls (no spinning that would take
// cycles from other ranks). Which thread computes a tile never changes its value.
#pragma once
#include <cstdint>
#include <type_traits>

namespace qmmm {

// The pool's side of parallel_tiles (nt > 1, n_tiles > 1): runs fn(ctx, t) for every tile.
void parallel_tiles_pooled(int nt, int64_t n_tiles, void (*fn)(const void *, int64_t), const void *ctx);

// The threads a parallel call with nt threads would get now: the caller and the helpers that the other processes'
// load (cpu_node_load.hpp) and the helper cap (cpu_helper_cap.hpp) leave it. What a call cuts its work for, where
// the cut changes the speed and not the values: a call that cut 18 points into tiles of one point for 16 threads
// and then ran alone on a busy node streamed the cells once a point instead of once a tile.
int parallel_width(int nt);

// Calls f(t) once for each t in [0, n_tiles) and returns when all are done. nt <= 1 or n_tiles <= 1: the calling
// thread alone, in order, with nothing allocated. One call at a time uses the pool; a call made while another holds
// it (another thread of the caller's, or a tile's own call) runs on its thread alone. f must not throw.
template <class F>
inline void parallel_tiles(int nt, int64_t n_tiles, F &&f) {
    if (nt <= 1 || n_tiles <= 1) {
        for (int64_t t = 0; t < n_tiles; ++t) f(t);
        return;
    }
    using Fn = std::remove_reference_t<F>;
    parallel_tiles_pooled(
        nt, n_tiles, [](const void *c, int64_t t) { (*static_cast<Fn *>(const_cast<void *>(c)))(t); },
        static_cast<const void *>(&f));
}

}  // namespace qmmm
