// error.hpp -- the library's error model, used by every family.
// A failing call records a message for the calling thread and returns its status; the C boundary
// turns C++ exceptions into statuses so nothing escapes into Fortran or C callers.
#pragma once
#include <cstdarg>
#include <new>
#include <stdexcept>
#include <string>

#include "qmmm_accel.h"

namespace qmmm {

// Records a printf-style message for this thread and returns `status` (so: `return fail(...)`).
int fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Keeps the thread's message but prefixes it with context, e.g. which file or call; returns status.
int fail_context(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Thrown inside the library where unwinding is simpler than status plumbing; api_guard converts it.
struct Error : std::runtime_error {
    int status;
    Error(int s, const std::string &msg) : std::runtime_error(msg), status(s) {}
};

// Runs `body` (returning a status) and maps exceptions to statuses with messages naming `where`.
template <class F>
int api_guard(const char *where, F &&body) noexcept {
    try {
        return body();
    } catch (const Error &e) {
        return fail(e.status, "%s: %s", where, e.what());
    } catch (const std::bad_alloc &) {
        return fail(QMMM_ERR_OUT_OF_MEMORY, "%s: out of host memory", where);
    } catch (const std::exception &e) {
        return fail(QMMM_ERR_INTERNAL, "%s: unexpected error: %s", where, e.what());
    } catch (...) {
        return fail(QMMM_ERR_INTERNAL, "%s: unexpected error", where);
    }
}

}  // namespace qmmm
