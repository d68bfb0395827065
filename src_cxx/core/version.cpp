// version.cpp -- library version, from the CMake project version.
#include "error.hpp"
#include "qmmm_accel_version.h"

extern "C" {

QMMM_API int qmmm_version(int *major, int *minor, int *patch) {
    return qmmm::api_guard("qmmm_version", [&]() -> int {
        if (!major || !minor || !patch) throw qmmm::Error(QMMM_ERR_NULL_ARG, "an argument is NULL");
        *major = QMMM_VERSION_MAJOR, *minor = QMMM_VERSION_MINOR, *patch = QMMM_VERSION_PATCH;
        return QMMM_SUCCESS;
    });
}

QMMM_API const char *qmmm_version_string(void) { return QMMM_VERSION_STRING; }

}  // extern "C"
