// cpu_pool.cpp -- parallel_tiles_pooled (cpu_parallel.hpp): one process-wide pool of helper threads, started on
// first use and grown to the largest team asked for; it lives until the process ends.
//
// The protocol, and why it is safe when a helper arrives late: a job lives on its caller's stack. A helper joins it
// only under the pool's mutex while the job is posted, and counts itself in `active`; the caller takes the job down
// under the same mutex once it finds no tile left, then waits until `active` is 0. So no helper touches a job after
// its caller returns, and the caller never waits for a helper that did not join.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <time.h>

#include "cpu_helper_cap.hpp"
#include "cpu_parallel.hpp"
#include "cpu_simd.hpp"
#include "cpu_threads.hpp"

namespace qmmm {

namespace {

struct Job {
    void (*fn)(const void *, int64_t);
    const void *ctx;
    int64_t n_tiles;
    std::atomic<int64_t> next{0};
    std::atomic<int> active{0};  // helpers inside run(); changed by joining (under the mutex) and leaving
    int seats = 0;               // helpers that may still join; guarded by the pool's mutex
};

// The tiles this thread took.
int64_t run(Job &j) {
    int64_t done = 0;
    for (int64_t t; (t = j.next.fetch_add(1, std::memory_order_relaxed)) < j.n_tiles; ++done) j.fn(j.ctx, t);
    return done;
}

class Pool {
public:
    // Posts j with up to `helpers` seats, growing the pool to that many threads. False when another call holds the
    // pool (j then runs on its caller alone).
    bool post(Job &j, int helpers) {
        {
            std::lock_guard<std::mutex> g(m_);
            if (job_) return false;
            try {
                while (threads_ < helpers) {
                    std::thread([this] { work(); }).detach();
                    ++threads_;
                }
            } catch (...) {  // the system refused a thread: the ones there are will do
            }
            j.seats = std::min(helpers, threads_);
            if (j.seats == 0) return false;
            job_ = &j;
        }
        cv_.notify_all();
        return true;
    }
    // After the caller found no tile left: no helper joins any more; wait for those inside.
    void retire(Job &j) {
        {
            std::lock_guard<std::mutex> g(m_);
            job_ = nullptr;
        }
        for (int spin = 0; j.active.load(std::memory_order_acquire) > 0; ++spin)
            if (spin > 64) std::this_thread::yield();
    }

private:
    void work() {
        std::unique_lock<std::mutex> l(m_);
        for (;;) {
            cv_.wait(l, [&] { return job_ && job_->seats > 0; });
            Job &j = *job_;
            --j.seats;
            j.active.fetch_add(1, std::memory_order_relaxed);
            l.unlock();
            run(j);
            simd_clear_upper();
            j.active.fetch_sub(1, std::memory_order_release);  // the last touch of j
            l.lock();
        }
    }

    std::mutex m_;
    std::condition_variable cv_;
    Job *job_ = nullptr;  // the posted job, if any
    int threads_ = 0;
};

Pool &pool() {
    static Pool *p = new Pool;  // never destroyed: its detached helpers sleep on it until the process ends
    return *p;
}

HelperCap g_cap(kMaxThreads - 1);  // the helpers a call may use on this node now (cpu_helper_cap.hpp)

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// This thread's CPU time (s): the caller's computing without the time the OS took it off its core.
double thread_cpu_seconds() {
    timespec ts{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

void parallel_tiles_pooled(int nt, int64_t n_tiles, void (*fn)(const void *, int64_t), const void *ctx) {
    Job j;
    j.fn = fn, j.ctx = ctx, j.n_tiles = n_tiles;
    const int helpers = g_cap.take(static_cast<int>(std::min<int64_t>({nt - 1, n_tiles - 1, kMaxThreads - 1})));
    if (helpers <= 0) {
        run(j);
        return;
    }
    // A thread's CPU time is a system call (0.9 us on the development VM): every fourth call of a thread reads it,
    // the others report without an estimate of the call alone (the wait rule holds for every call).
    static thread_local unsigned calls = 0;
    const bool timed = (++calls & 3u) == 0;
    const auto t_post = std::chrono::steady_clock::now();
    const bool posted = pool().post(j, helpers);
    const double cpu0 = timed ? thread_cpu_seconds() : -1;
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t mine = run(j);
    if (!posted) return;
    const double own = seconds_since(t0), own_cpu = cpu0 >= 0 ? thread_cpu_seconds() - cpu0 : 0;
    const auto t1 = std::chrono::steady_clock::now();
    pool().retire(j);
    // The call alone: the caller's CPU time a tile times every tile (no estimate without a tile or a clock).
    const double alone = mine > 0 && own_cpu > 0 ? own_cpu / static_cast<double>(mine) * n_tiles : 0;
    g_cap.report(helpers, own, seconds_since(t1), seconds_since(t_post), alone);
}

}  // namespace qmmm
