// pol_pot.hpp -- parses a potential file (.pot of PElib, CPPE and PyFraME) into sites (grammar and semantics:
// docs/user-guide/pot-format.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace qmmm {

struct PotSites {
    int64_t n = 0;
    std::vector<double> xyz;     // 3n, bohr
    std::vector<double> charge;  // n, e (0 where ORDER 0 does not list the site)
    std::vector<double> dipole;  // 3n, e bohr (0 where ORDER 1 does not list the site)
    std::vector<double> alpha;   // 6n, xx xy xz yy yz zz, bohr^3 (0 where no polarizability is listed)
    int32_t excl_width = 0;      // exclusions per site
    std::vector<int64_t> excl;   // n rows of excl_width site indices from 0, -1 pads
};

// Parses text as the file `path` (the name only labels messages). Throws qmmm::Error: QMMM_ERR_FILE_FORMAT with
// "path:line: what", QMMM_ERR_UNSUPPORTED for multipoles of order 2 or more and polarizabilities other than 1 1.
PotSites parse_pot(const std::string &path, const std::string &text);

// Reads the file and parses it (QMMM_ERR_FILE_OPEN when it cannot be read).
PotSites read_pot(const std::string &path);

}  // namespace qmmm
