// core_mps.cpp -- whether a CUDA MPS control daemon serves this process (qmmm_gpu_mps_active, qmmm_accel.h).
// A file check, not a CUDA call: it works in builds without CUDA and never creates a CUDA context, so a
// code may ask before it picks devices or writes its report.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "error.hpp"
#include "tuning_env.hpp"

extern "C" QMMM_API int qmmm_gpu_mps_active(int *active) {
    return qmmm::api_guard("qmmm_gpu_mps_active", [&]() -> int {
        if (!active) throw qmmm::Error(QMMM_ERR_NULL_ARG, "active is NULL");
        *active = 0;
        // Clients find the daemon where CUDA looks for it: $CUDA_MPS_PIPE_DIRECTORY, else CUDA's default.
        const std::string control = qmmm::tuning::mps_pipe_directory() + "/control";
        struct stat st;
        if (::stat(control.c_str(), &st) != 0) {
            // No directory or no control pipe: no daemon for this client. Anything else (a directory this
            // user may not search) leaves the answer unknown, which is not the same as "off".
            if (errno == ENOENT || errno == ENOTDIR) return QMMM_SUCCESS;
            throw qmmm::Error(QMMM_ERR_FILE_OPEN,
                              "cannot inspect the MPS control pipe " + control + ": " + std::strerror(errno));
        }
        // A named pipe in older drivers, a UNIX domain socket in newer ones (CUDA's MPS guide: "named pipes and
        // UNIX domain sockets"); a plain file of that name is no daemon.
        *active = (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ? 1 : 0;
        return QMMM_SUCCESS;
    });
}
