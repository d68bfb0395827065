// rdf_io.hpp -- trajectory readers and atom selections for the qmmm-rdf tool.
// Formats: XYZ / extended XYZ (Lattice="..."), PDB (CRYST1, MODEL/ENDMDL), GRO (nm, converted), LAMMPS text
// dump (orthogonal or triclinic bounds; x/xs/xu columns), DCD (CHARMM/NAMD binary, unit cell, either byte
// order), and GROMACS XTC and TRR through GROMACS's library when the build has it (rdf_io_gmx.cpp). Lengths come out in Angstrom (GRO's nm x 10; LAMMPS dumps in the dump's own unit, Angstrom for
// real/metal units). Errors throw qmmm::Error (error.hpp) with the file and line (or frame) and a QMMM_ERR_FILE_*
// status.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.hpp"

namespace qmmm::rdfio {

struct AtomInfo {
    std::string name, element, resname, type;
    int64_t resid = 0;
    int64_t mol = -1;  // molecule id where the file has one (LAMMPS mol column), else the residue number
};

struct Frame {
    std::vector<double> xyz;  // 3n, Angstrom
    double box[9] = {0};      // cell vectors a, b, c (Angstrom)
    bool has_box = false;
    // Where a reader that decodes whole coordinate arrays (DCD) may write the coordinates instead of xyz:
    // atoms [first, first + count) to dst (3 count doubles, x y z interleaved). qmmm-rdf points them at its
    // batches when every selection is a range of atoms, so a frame is not copied again after decoding. A
    // reader that wrote them sets into_done and leaves xyz as it was; the others ignore them and fill xyz.
    struct Range {
        int64_t first = 0, count = 0;
        double *dst = nullptr;
    };
    std::vector<Range> into;
    bool into_done = false;
};

class Reader {
public:
    virtual ~Reader() = default;
    // Reads the next frame into f; false at the end of the file.
    virtual bool next(Frame &f) = 0;
    // Skips the next frame; false at the end. Readers that can seek do so.
    virtual bool skip() {
        Frame f;
        return next(f);
    }
    // Atom descriptions (from the first frame, or from a topology file for DCD).
    const std::vector<AtomInfo> &atoms() const { return atoms_; }
    virtual int64_t n_frames_hint() const { return -1; }  // frames in the file if known without reading

protected:
    std::vector<AtomInfo> atoms_;
};

// format: "auto" (from the extension), "xyz", "pdb", "gro", "lammps", "dcd", "xtc", "trr". topology: a
// PDB/GRO/XYZ file giving atom names for a DCD, XTC or TRR (or "" to use atoms named by index).
std::unique_ptr<Reader> open_trajectory(const std::string &path, const std::string &format = "auto",
                                        const std::string &topology = "");

// Whether this build reads XTC and TRR (GROMACS's library was found).
bool have_gromacs();

// The atoms of a topology file (first frame of a PDB/GRO/XYZ), which must have n atoms like `traj`.
std::vector<AtomInfo> atoms_from_topology(const std::string &topology, int64_t n, const std::string &traj);

// XTC/TRR reader (rdf_io_gmx.cpp; only in builds with GROMACS).
std::unique_ptr<Reader> open_gromacs(const std::string &path, const std::string &format, const std::string &topology);

// Box from lengths (Angstrom) and angles (degrees) as in CRYST1 and DCD.
void box_from_lengths_angles(double a, double b, double c, double alpha, double beta, double gamma, double box[9]);

// Selection language: clauses joined by "and"; each clause "all", or a key and one or more values (any of
// them matches): name, element, resname, type (exact strings, '*' as the last character for a prefix),
// index (0-based, "a-b" ranges inclusive), resid (ranges). Example: "resname SOL and name OW".
// A mistake throws Error(QMMM_ERR_INVALID_ARG) whose message names the keywords (kSelectionHelp).
std::vector<int64_t> select(const std::vector<AtomInfo> &atoms, const std::string &expr);
extern const char *const kSelectionHelp;

}  // namespace qmmm::rdfio
