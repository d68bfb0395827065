// cpu_threads.cpp -- the library's thread policy (cpu_threads.hpp) and its C entry points.
#include "cpu_threads.hpp"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "error.hpp"
#include "tuning_env.hpp"

namespace qmmm {

namespace {

std::atomic<int> g_node_ranks{0};  // set by qmmm_set_node_ranks; 0 = from the environment
std::atomic<int> g_default{0};     // cached default_threads(); 0 = not computed yet

int usable_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1, omp_get_num_procs());
}

int compute_default() {
    int n;
    if (tuning::omp_num_threads_set()) {
        n = omp_get_max_threads();
    } else {
        const int ranks = g_node_ranks.load() > 0 ? g_node_ranks.load() : tuning::launcher_node_ranks();
        n = usable_cores() / ranks;
    }
    return std::clamp(n, 1, kMaxThreads);
}

}  // namespace

void check_threads(int n, const char *what) {
    if (n < 0 || n > kMaxThreads)
        throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s = %d is outside 0 .. %d (0: the library's default)", what, n,
                                                 kMaxThreads));
}

int default_threads() {
    int n = g_default.load(std::memory_order_relaxed);
    if (n == 0) g_default.store(n = compute_default(), std::memory_order_relaxed);
    return n;
}

int call_threads(int requested, double pairs) {
    const int base = requested > 0 ? requested : default_threads();
    if (base <= 1 || pairs < 2 * kPairsPerThread) return 1;
    return static_cast<int>(std::min<double>(base, pairs / kPairsPerThread));
}

}  // namespace qmmm

extern "C" {

QMMM_API int qmmm_set_node_ranks(int n) {
    return qmmm::api_guard("qmmm_set_node_ranks", [&]() -> int {
        if (n < 0 || n > 1 << 20)
            throw qmmm::Error(QMMM_ERR_INVALID_ARG, qmmm::strfmt("n = %d is outside 0 .. 1048576", n));
        qmmm::g_node_ranks.store(n);
        qmmm::g_default.store(0);  // recomputed at the next call
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_default_threads(int *n) {
    return qmmm::api_guard("qmmm_default_threads", [&]() -> int {
        if (!n) throw qmmm::Error(QMMM_ERR_NULL_ARG, "n is NULL");
        *n = qmmm::default_threads();
        return QMMM_SUCCESS;
    });
}

}  // extern "C"
