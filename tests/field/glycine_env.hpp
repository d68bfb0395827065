// glycine_env.hpp -- seed 004's glycine environment for the split-field tests (data/glycine_trimer): psi4's
// reference.json and fragments 2+3's density cube read at a threshold (0: every cell of the cube).
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "field_reference.hpp"
#include "qmmm_accel.h"

namespace qmmm_glycine_test {

inline const std::string &dir() {
    static const std::string d = std::string(QMMM_SOURCE_DIR) + "/data/glycine_trimer/";
    return d;
}

inline nlohmann::json reference() {
    std::ifstream in(dir() + "reference.json");
    return nlohmann::json::parse(in);
}

// The cube's cells above threshold and its nuclei (empty on a read error: the caller asserts the count).
inline qmmm_test::System cube(double threshold, double *dv) {
    return qmmm_test::cube_system(dir() + "fragments23_density.cube.gz", threshold, dv);
}

// Fragment 1's nuclei (bohr), x y z per atom.
inline std::vector<double> qm_atoms(const nlohmann::json &ref) {
    std::vector<double> qm;
    for (const auto &a : ref["qm_atoms"])
        for (int k = 0; k < 3; ++k) qm.push_back(a["xyz_bohr"][k]);
    return qm;
}

}  // namespace qmmm_glycine_test
