// error.cpp -- per-thread error messages and status names.
#include "error.hpp"

#include <cstdarg>
#include <cstdio>

namespace {
thread_local std::string g_message;
thread_local int g_index_base = 0;
}  // namespace

namespace qmmm {

std::string strfmt(const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    const int n = std::vsnprintf(nullptr, 0, fmt, ap2);
    va_end(ap2);
    std::string s = fmt;
    if (n >= 0) {
        s.assign(static_cast<size_t>(n) + 1, '\0');
        std::vsnprintf(s.data(), s.size(), fmt, ap);
        s.resize(static_cast<size_t>(n));
    }
    va_end(ap);
    return s;
}

int record_error(int status, const std::string &msg) noexcept {
    try {
        g_message = msg;
    } catch (...) {
        // Out of memory while reporting: keep whatever message was there.
    }
    error_current = true;
    return status;
}

long long ix(int64_t i) noexcept { return static_cast<long long>(i) + g_index_base; }

IndexBase::IndexBase(int base) noexcept : old_(g_index_base) { g_index_base = base; }
IndexBase::~IndexBase() { g_index_base = old_; }

}  // namespace qmmm

extern "C" {

QMMM_API int qmmm_set_index_base(int base) {
    if (base != 0 && base != 1)
        return qmmm::record_error(QMMM_ERR_INVALID_ARG,
                                  qmmm::strfmt("qmmm_set_index_base: base = %d (use 0 for C, 1 for Fortran)", base));
    g_index_base = base;
    return QMMM_SUCCESS;
}

QMMM_API int qmmm_get_index_base(int *base) {
    if (!base) return qmmm::record_error(QMMM_ERR_NULL_ARG, "qmmm_get_index_base: base is NULL");
    *base = g_index_base;
    return QMMM_SUCCESS;
}

QMMM_API int qmmm_set_error(int status, const char *message) {
    return qmmm::record_error(status, message ? message : "");
}

QMMM_API const char *qmmm_error_message(void) { return qmmm::error_current ? g_message.c_str() : ""; }

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
        case QMMM_ERR_NOT_CONVERGED: return "QMMM_ERR_NOT_CONVERGED";
        case QMMM_ERR_INTERNAL: return "QMMM_ERR_INTERNAL";
        default: return "QMMM_ERR_UNKNOWN_STATUS";
    }
}

}  // extern "C"
