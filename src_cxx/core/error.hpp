// error.hpp -- the library's one error idiom, used by every family.
//
// Inside the library a failure is thrown as qmmm::Error (a status from qmmm_accel.h and a message naming the
// argument, file or device). Every extern "C" entry point runs its body in api_guard, which turns the
// exception into the returned status and the calling thread's qmmm_error_message(), prefixed with the entry
// point's name, so nothing escapes into C or Fortran callers.
#pragma once
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "qmmm_accel_core.h"

namespace qmmm {

struct Error : std::runtime_error {
    int status;
    Error(int s, const std::string &msg) : std::runtime_error(msg), status(s) {}
};

// printf-style message text, for Error messages with numbers in them.
std::string strfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Records msg as the calling thread's error message and returns status (api_guard's back end; also for
// libraries beside this one, such as libqmmm_accel_mpi, through qmmm_mpi_record_error).
int record_error(int status, const std::string &msg) noexcept;

// Whether the calling thread's message is current: record_error sets it, a successful call clears it, and
// qmmm_error_message() is "" while it is clear. A flag, not the text, so that clearing costs one thread-local store
// on the hot path (a few-charge field is called millions of times at ~0.16 us); constant-initialised, so no guard.
// Initial-exec: one %fs-relative store, no __tls_get_addr call (one byte of the static TLS block, which glibc
// keeps room for even when the library is dlopen-ed).
inline thread_local bool error_current __attribute__((tls_model("initial-exec"))) = false;
inline void clear_error() noexcept { error_current = false; }

// An index as the calling thread's messages count it: from 0, or from 1 where a Fortran interface set
// qmmm_set_index_base(1) around its call (so "point 3" is coord(:,3) to a Fortran caller).
long long ix(int64_t i) noexcept;

// Sets the calling thread's index base for the lifetime of the object, then restores the previous one.
class IndexBase {
public:
    explicit IndexBase(int base) noexcept;
    ~IndexBase();
    IndexBase(const IndexBase &) = delete;
    IndexBase &operator=(const IndexBase &) = delete;

private:
    int old_;
};

// Runs `body` (returning a status, normally QMMM_SUCCESS) and maps exceptions to statuses with messages
// "where: what"; a success clears the thread's message.
template <class F>
int api_guard(const char *where, F &&body) noexcept {
    try {
        const int status = body();
        if (status == QMMM_SUCCESS) clear_error();  // a success leaves no message of an earlier failure
        return status;
    } catch (const Error &e) {
        return record_error(e.status, std::string(where) + ": " + e.what());
    } catch (const std::bad_alloc &) {
        return record_error(QMMM_ERR_OUT_OF_MEMORY, std::string(where) + ": out of host memory");
    } catch (const std::exception &e) {
        return record_error(QMMM_ERR_INTERNAL, std::string(where) + ": unexpected error: " + e.what());
    } catch (...) {
        return record_error(QMMM_ERR_INTERNAL, std::string(where) + ": unexpected error");
    }
}

}  // namespace qmmm
