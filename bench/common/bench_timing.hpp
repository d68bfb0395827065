// bench_timing.hpp -- what the benchmarks share: a status check that throws with the library's message, and the
// median-of-blocks timer (each benchmark prints and writes its own table).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "qmmm_accel.h"

namespace bench {

using Clock = std::chrono::steady_clock;

inline void ok(int status, const std::string &what) {
    if (status != QMMM_SUCCESS)
        throw std::runtime_error(what + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
}

inline double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Median over 5 blocks of the mean seconds per call, after one untimed call (first-touch, uploads).
inline double time_call(const std::function<void()> &f, double min_time) {
    f();
    std::vector<double> b;
    for (int k = 0; k < 5; ++k) {
        int reps = 0;
        const auto t0 = Clock::now();
        do f(), ++reps;
        while (seconds(t0) < min_time / 5);
        b.push_back(seconds(t0) / reps);
    }
    std::sort(b.begin(), b.end());
    return b[2];
}

}  // namespace bench
