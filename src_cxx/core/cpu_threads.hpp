// cpu_threads.hpp -- how many OpenMP threads a CPU call of the library uses.
//
// The library is called at every Metropolis step from codes that usually run one MPI rank per core. An OpenMP team
// per call over every core of the node then costs more than the call: the team's start, and on a busy node the
// wait for a descheduled thread at the end. So:
// - n_threads = 0 (the default) means default_threads(): OMP_NUM_THREADS where it is set, else the cores this
//   process may run on divided by the processes of the job on this node (MPI launchers' local-size variables, or
//   qmmm_set_node_ranks, which qmmm_mpi_select_device calls);
// - a call with little work stays on the caller's thread whatever n_threads says: call_threads gives each thread
//   at least kPairsPerThread pair terms (docs/integrating.md, "Threads under MPI").
// Results never depend on the thread count (each backend's sums have a fixed order).
#pragma once
#include <cstdint>

namespace qmmm {

// The largest n_threads any option accepts: more is a request no node can serve (libgomp crashes at 10^5).
constexpr int kMaxThreads = 1024;

// A thread gets at least this many pair terms (cell-point or charge-point): ~25-60 us of work on one core, well
// above an OpenMP team's start (~2-5 us idle, far more on a loaded node).
constexpr double kPairsPerThread = 65536;

// Throws INVALID_ARG unless 0 <= n <= kMaxThreads; `what` names the option in the message.
void check_threads(int n, const char *what);

// The threads n_threads = 0 stands for (at least 1, at most kMaxThreads), re-read after qmmm_set_node_ranks.
int default_threads();

// Threads for one call of `pairs` pair terms: min(requested or default_threads(), pairs / kPairsPerThread), >= 1.
int call_threads(int requested, double pairs);

}  // namespace qmmm
