// error.cpp -- per-thread error messages and status names.
#include "error.hpp"

#include <cstdio>

namespace {
thread_local std::string g_message;

std::string vformat(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = std::vsnprintf(nullptr, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return fmt;
    std::string s(static_cast<size_t>(n) + 1, '\0');
    std::vsnprintf(s.data(), s.size(), fmt, ap);
    s.resize(static_cast<size_t>(n));
    return s;
}
}  // namespace

namespace qmmm {

int fail(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    try {
        g_message = vformat(fmt, ap);
    } catch (...) {
        // Out of memory while reporting: keep whatever message was there.
    }
    va_end(ap);
    return status;
}

int fail_context(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    try {
        g_message = vformat(fmt, ap) + ": " + g_message;
    } catch (...) {
    }
    va_end(ap);
    return status;
}

}  // namespace qmmm

extern "C" {

QMMM_API const char *qmmm_error_message(void) { return g_message.c_str(); }

QMMM_API const char *qmmm_status_string(int status) {
    switch (status) {
        case QMMM_SUCCESS: return "QMMM_SUCCESS";
        case QMMM_ERR_NULL_ARG: return "QMMM_ERR_NULL_ARG";
        case QMMM_ERR_INVALID_ARG: return "QMMM_ERR_INVALID_ARG";
        case QMMM_ERR_NONFINITE: return "QMMM_ERR_NONFINITE";
        case QMMM_ERR_BAD_HANDLE: return "QMMM_ERR_BAD_HANDLE";
        case QMMM_ERR_NO_CUDA: return "QMMM_ERR_NO_CUDA";
        case QMMM_ERR_NO_DEVICE: return "QMMM_ERR_NO_DEVICE";
        case QMMM_ERR_CUDA: return "QMMM_ERR_CUDA";
        case QMMM_ERR_OUT_OF_MEMORY: return "QMMM_ERR_OUT_OF_MEMORY";
        case QMMM_ERR_FILE_OPEN: return "QMMM_ERR_FILE_OPEN";
        case QMMM_ERR_FILE_FORMAT: return "QMMM_ERR_FILE_FORMAT";
        case QMMM_ERR_SINGULAR: return "QMMM_ERR_SINGULAR";
        case QMMM_ERR_UNSUPPORTED: return "QMMM_ERR_UNSUPPORTED";
        case QMMM_ERR_MPI: return "QMMM_ERR_MPI";
        case QMMM_ERR_BUSY: return "QMMM_ERR_BUSY";
        case QMMM_ERR_INTERNAL: return "QMMM_ERR_INTERNAL";
        default: return "QMMM_ERR_UNKNOWN_STATUS";
    }
}

}  // extern "C"
