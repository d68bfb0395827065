// dcs_io.hpp -- files for the qmmm-dcs tool: structures in (PQR, PDB with charges, XYZ with charges;
// positions in Angstrom as the formats define), maps out (OpenDX in Angstrom, Gaussian cube in bohr),
// ions out (PDB), and a .dx reader for tests. Errors throw qmmm::Error (error.hpp) with the library's status
// (QMMM_ERR_FILE_OPEN, QMMM_ERR_FILE_FORMAT) and a message naming file and line.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "error.hpp"
#include "qmmm_accel.h"

namespace dcsio {

constexpr double kBohrPerAngstrom = 1.0 / QMMM_BOHR_ANGSTROM;
constexpr double kVoltPerAu = 27.211386245988;     // hartree/e in V
constexpr double kBoltzmannEvPerK = 8.617333262e-5;  // kT/e in V = this * T

struct Molecule {
    std::vector<double> xyz;  // Angstrom, x y z interleaved
    std::vector<double> q;    // e
    std::vector<int> z;       // atomic number (0 if unknown), for cube files
    std::vector<std::string> name;
    int64_t n() const { return static_cast<int64_t>(q.size()); }
};

// format: "pqr", "pdb", "xyz" or "" (from the extension).
Molecule read_structure(const std::string &path, const std::string &format = "");

// Regular grid: origin and spacing in the unit the writer says; values x fastest (the library's layout).
struct Grid {
    double origin[3] = {0, 0, 0}, spacing[3] = {1, 1, 1};
    int64_t count[3] = {1, 1, 1};
    std::vector<double> values;
};

// Map file formats. map_format: `format` ("dx" or "cube", from --output-format) when given, else the extension
// of `path` (.dx; .cube or .cub; any case). Any other extension throws qmmm::Error(QMMM_ERR_INVALID_ARG) naming
// the allowed ones: a map is never written in a format its file name does not say.
enum class MapFormat { dx, cube };
MapFormat map_format(const std::string &path, const std::string &format = "");

// The writers: to `path` (created or truncated), or to an open file `f` that error messages call `name` (the
// tool's atomic outputs, atomic_output.hpp).
// OpenDX as APBS writes it (positions in Angstrom, data z fastest); `comment` goes into a # line.
void write_dx(const std::string &path, const Grid &angstrom_grid, const std::string &comment);
void write_dx(FILE *f, const std::string &name, const Grid &angstrom_grid, const std::string &comment);
Grid read_dx(const std::string &path);
// Gaussian cube (positions in bohr); atoms from the molecule (Angstrom, converted).
void write_cube(const std::string &path, const Grid &bohr_grid, const Molecule &m, const std::string &comment);
void write_cube(FILE *f, const std::string &name, const Grid &bohr_grid, const Molecule &m, const std::string &comment);
// Ions as PDB HETATM records (Angstrom).
void write_ions_pdb(const std::string &path, const std::vector<double> &xyz_angstrom, double charge,
                    const std::string &name);
void write_ions_pdb(FILE *f, const std::string &file_name, const std::vector<double> &xyz_angstrom, double charge,
                    const std::string &name);

}  // namespace dcsio
