// cube_reader.hpp -- parses one Gaussian cube file into cells and nuclei (semantics: qmmm_accel_cube.h).
#pragma once
#include <string>
#include <vector>

#include "qmmm_accel_cube.h"

namespace qmmm {

constexpr double kBohrAngstrom = QMMM_BOHR_ANGSTROM;

struct CubeCells {
    std::vector<double> cell_xyz, cell_q;  // kept cells: centres (bohr, xyz interleaved), populations
    std::vector<double> nuc_xyz, nuc_z;
    double cell_volume = 0;                 // dV, bohr^3
    long long grid_points = 0;
};

// Throws qmmm::Error (QMMM_ERR_FILE_OPEN / _FILE_FORMAT / _UNSUPPORTED) with "path:line: what".
CubeCells read_cube(const std::string &path, double threshold);

}  // namespace qmmm
