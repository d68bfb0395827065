// cpu_helper_cap.hpp -- how many pool helpers a parallel CPU call may use (cpu_pool.cpp), from what the last calls
// saw: the default thread count is the cores shared by the node's ranks, but on a node that other processes load a
// helper that joined a call can be descheduled in the middle of its tile, and the caller then waits a time slice
// (milliseconds) for a call of 0.05-1 ms: one 100k-charge rank ran 2-4x slower with its default threads than with
// one. So the cap halves after each call whose caller waited longer for its helpers than it computed itself (and over
// 0.5 ms), and doubles back after 16 calls in a row that waited little; at 0 the calls run on the caller alone, and
// every 64th of them tries one helper again. Which thread computes a tile never changes a value: results do not
// depend on it.
#pragma once
#include <algorithm>
#include <atomic>

namespace qmmm {

class HelperCap {
public:
    static constexpr int kGrowAfter = 16;   // calls in a row with little waiting before the cap doubles
    static constexpr int kProbeAfter = 64;  // calls on the caller alone before one helper is tried again
    constexpr explicit HelperCap(int max_helpers) : max_(max_helpers), cap_(max_helpers) {}

    // The helpers this call may use, of `wanted`; 0: the caller alone (and counted towards the next probe).
    int take(int wanted) {
        const int cap = cap_.load(std::memory_order_relaxed);
        if (cap > 0) return std::min(wanted, cap);
        if (alone_.fetch_add(1, std::memory_order_relaxed) + 1 >= kProbeAfter) {
            alone_.store(0, std::memory_order_relaxed);
            cap_.store(1, std::memory_order_relaxed);
            return std::min(wanted, 1);
        }
        return 0;
    }
    // After a call with `helpers` helpers posted: the caller computed for own_s seconds and then waited wait_s for the
    // helpers inside the call. Only the call that holds the pool reports (one at a time).
    void report(int helpers, double own_s, double wait_s) {
        if (helpers <= 0) return;
        if (wait_s > own_s && wait_s > kSlowWait) {  // a helper was descheduled mid-tile: fewer of them
            cap_.store(std::min(cap_.load(std::memory_order_relaxed), helpers) / 2, std::memory_order_relaxed);
            good_ = 0, alone_.store(0, std::memory_order_relaxed);
        } else if (wait_s <= own_s / 8 && ++good_ >= kGrowAfter) {
            good_ = 0;
            const int cap = cap_.load(std::memory_order_relaxed);
            if (cap < max_ && cap <= helpers) cap_.store(std::min(max_, std::max(1, 2 * cap)), std::memory_order_relaxed);
        }
    }
    int cap() const { return cap_.load(std::memory_order_relaxed); }

private:
    // A wait this short is a tile's end or a helper's wake-up (10-100 us on an idle node), not a helper the OS took
    // off its core (a time slice: 1 ms and more).
    static constexpr double kSlowWait = 500e-6;
    const int max_;
    std::atomic<int> cap_;
    std::atomic<int> alone_{0};
    int good_ = 0;
};

}  // namespace qmmm
