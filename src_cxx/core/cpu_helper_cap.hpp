// cpu_helper_cap.hpp -- how many pool helpers a parallel CPU call may use (cpu_pool.cpp), from what the last calls
// saw: the default thread count is the cores shared by the node's ranks, but on a node that other processes load a
// helper that joined a call can be descheduled in the middle of its tile, and the caller then waits a time slice
// (milliseconds) for a call of 0.05-1 ms: one 100k-charge rank ran 2-4x slower with its default threads than with
// one. So the cap halves after each call whose caller waited longer for its helpers than it computed itself (and
// over 0.5 ms), or that took 1.1x longer than the caller alone would have (every fourth call of a thread has that
// estimate); it doubles back after 16 calls in a row that waited little and ran at least 1.25x faster than the
// caller alone; at 0 the calls run on the caller alone, and every 64th of them tries one helper again. Each shrink
// doubles the quiet calls the next growth needs (to 256), each failed probe the calls before the next (to 1,024),
// until the cap no longer limits the calls, so that on a node that stays loaded the stalls become rare (16 cores
// with 15 busy measured 1.32x one thread's time when growth always took 16 calls). Which thread computes a tile
// never changes a value: results do not depend on it.
#pragma once
#include <algorithm>
#include <atomic>

namespace qmmm {

class HelperCap {
public:
    static constexpr int kGrowAfter = 16;      // quiet calls in a row before the cap doubles, at first
    static constexpr int kProbeAfter = 64;     // calls on the caller alone before one helper is tried again, at first
    static constexpr int kMaxGrowAfter = 256;  // each shrink doubles the first (a node that stays loaded stalls
    static constexpr int kMaxProbeAfter = 1024;  // ever more rarely), each failed probe the second, up to these
    constexpr explicit HelperCap(int max_helpers) : max_(max_helpers), cap_(max_helpers) {}

    // The helpers this call may use, of `wanted`; 0: the caller alone (and counted towards the next probe).
    int take(int wanted) {
        const int cap = cap_.load(std::memory_order_relaxed);
        if (cap > 0) return std::min(wanted, cap);
        if (alone_.fetch_add(1, std::memory_order_relaxed) + 1 >= probe_after_.load(std::memory_order_relaxed)) {
            alone_.store(0, std::memory_order_relaxed);
            probing_.store(true, std::memory_order_relaxed);
            cap_.store(1, std::memory_order_relaxed);
            return std::min(wanted, 1);
        }
        return 0;
    }
    // After a call with `helpers` helpers posted: the caller computed for own_s seconds and then waited wait_s for the
    // helpers inside the call; the whole call took wall_s, and alone_s estimates the call on the caller alone (its
    // own CPU time a tile times the tiles; <= 0: no estimate). Only the call that holds the pool reports (one at a
    // time). A call 1.1x slower than the caller alone would have been is slow too: a helper that took the caller's
    // core, or the caller descheduled, which the wait does not see.
    void report(int helpers, double own_s, double wait_s, double wall_s = 0, double alone_s = 0) {
        if (helpers <= 0) return;
        const bool alone_known = alone_s > 0, probe = probing_.exchange(false, std::memory_order_relaxed);
        if ((wait_s > own_s && wait_s > kSlowWait) || (alone_known && wall_s > kSlower * alone_s)) {
            const int cap = std::min(cap_.load(std::memory_order_relaxed), helpers) / 2;
            cap_.store(cap, std::memory_order_relaxed);
            good_ = 0, alone_.store(0, std::memory_order_relaxed);
            grow_after_ = std::min(2 * grow_after_, kMaxGrowAfter);
            if (cap == 0 && probe)  // the probe's one helper was one too many
                probe_after_.store(std::min(2 * probe_after_.load(std::memory_order_relaxed), kMaxProbeAfter),
                                   std::memory_order_relaxed);
        } else if (wait_s <= own_s / 8 && (!alone_known || wall_s <= 0.8 * alone_s)) {  // a quiet call
            const int cap = cap_.load(std::memory_order_relaxed);
            if (cap > helpers) {  // the cap did not limit it: the backoff starts over
                grow_after_ = kGrowAfter, probe_after_.store(kProbeAfter, std::memory_order_relaxed);
            } else if (++good_ >= grow_after_) {
                good_ = 0;
                if (cap < max_) cap_.store(std::min(max_, std::max(1, 2 * cap)), std::memory_order_relaxed);
            }
        }
    }
    int cap() const { return cap_.load(std::memory_order_relaxed); }
    int grow_after() const { return grow_after_; }
    int probe_after() const { return probe_after_.load(std::memory_order_relaxed); }

private:
    // A wait this short is a tile's end or a helper's wake-up (10-100 us on an idle node), not a helper the OS took
    // off its core (a time slice: 1 ms and more).
    static constexpr double kSlowWait = 500e-6;
    // Slower than the caller alone by this much: the estimate takes the caller's tiles as typical, which tiles of
    // unequal cost (plain and screened sites) can miss by a little.
    static constexpr double kSlower = 1.1;
    const int max_;
    std::atomic<int> cap_;
    std::atomic<int> alone_{0};
    std::atomic<int> probe_after_{kProbeAfter};
    std::atomic<bool> probing_{false};  // the cap is 1 for a probe
    int good_ = 0;
    int grow_after_ = kGrowAfter;
};

}  // namespace qmmm
