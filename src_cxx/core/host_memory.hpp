// host_memory.hpp -- this machine's physical memory, against which the readers and constructors check what an input
// would take before they take it (a clear OUT_OF_MEMORY instead of minutes of reading and swapping).
#pragma once
#include <unistd.h>

namespace qmmm {

// Bytes of physical memory; 1e18 where the system does not say (no check then refuses anything real).
inline double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 1e18;
}

}  // namespace qmmm
