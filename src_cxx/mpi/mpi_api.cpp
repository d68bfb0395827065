// mpi_device.cpp -- qmmm_pick_device: which GPU a rank uses, as a pure function of the node layout
// (local rank, local size, GPU count, a device spec), so the rule is tested on made-up layouts without
// MPI or GPUs. The MPI side (finding the local rank) is mpi_select.cpp, in libqmmm_accel_mpi.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "error.hpp"
#include "tuning_env.hpp"
#include "qmmm_accel_mpi.h"

using qmmm::Error;
using qmmm::strfmt;

namespace {

// "2" or "0,2,3" (blanks allowed around entries) -> the list; false on anything else.
bool parse_list(const char *s, std::vector<int> &out) {
    std::string t(s);
    size_t i = 0;
    while (i <= t.size()) {
        size_t j = t.find(',', i);
        if (j == std::string::npos) j = t.size();
        std::string e = t.substr(i, j - i);
        const size_t a = e.find_first_not_of(" \t"), b = e.find_last_not_of(" \t");
        if (a == std::string::npos) return false;  // empty entry
        e = e.substr(a, b - a + 1);
        if (e.find_first_not_of("0123456789") != std::string::npos || e.size() > 6) return false;
        out.push_back(std::atoi(e.c_str()));
        i = j + 1;
    }
    return !out.empty();
}

}  // namespace

QMMM_API int qmmm_pick_device(int local_rank, int local_size, int n_devices, const char *spec, int *device) {
    return qmmm::api_guard("qmmm_pick_device", [&]() -> int {
        if (!device) throw Error(QMMM_ERR_NULL_ARG, "device is NULL");
        *device = -1;
        if (local_size < 1 || local_rank < 0 || local_rank >= local_size)
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("local_rank = %d, local_size = %d (need 0 <= rank < size)",
                        local_rank, local_size));
        if (n_devices < 0) throw Error(QMMM_ERR_INVALID_ARG, strfmt("n_devices = %d is negative", n_devices));
        const char *from = "spec";
        if (!spec) {
            spec = qmmm::tuning::device_list();
            from = "environment variable QMMM_DEVICE";
        }
        if (!spec || !*spec || std::string(spec).find_first_not_of(" \t") == std::string::npos) {
            *device = n_devices > 0 ? local_rank % n_devices : -1;  // round robin over the node's GPUs
            return QMMM_SUCCESS;
        }
        std::vector<int> list;
        if (!parse_list(spec, list))
            throw Error(QMMM_ERR_INVALID_ARG, strfmt("%s = '%s' is not a device index or a comma-separated "
                        "list of them (e.g. '1' or '0,2')", from, spec));
        for (int d : list)
            if (d >= n_devices)
                throw Error(n_devices == 0 ? QMMM_ERR_NO_DEVICE : QMMM_ERR_INVALID_ARG,
                            strfmt("%s = '%s' names device %d but this process sees %d CUDA device(s)", from, spec, d,
                                   n_devices));
        *device = list[static_cast<size_t>(local_rank) % list.size()];
        return QMMM_SUCCESS;
    });
}

QMMM_API int qmmm_mpi_record_error(int status, const char *message) {
    return qmmm::record_error(status, message ? message : "");
}
