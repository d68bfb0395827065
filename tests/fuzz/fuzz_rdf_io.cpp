// fuzz_rdf_io.cpp -- the trajectory readers of qmmm-rdf (XYZ/extended XYZ, PDB, GRO, LAMMPS dump, DCD; XTC
// and TRR where the build has GROMACS's library) and selections on the atoms they return.
// Input: one selector byte, then the file. Selector % 7 picks the format (xyz, pdb, gro, lammps, dcd, xtc,
// trr); (selector / 7) % 2 = 1 skips every second frame with Reader::skip (DCD seeks).
// Invariants: opening and reading either throw qmmm::Error with QMMM_ERR_FILE_FORMAT and a message
// that starts with the file name, or give frames with 3 finite coordinates per atom of the first frame and a
// finite box; selections return sorted, distinct, in-range indices. No other exception escapes.
#include <cstring>
#include <string>

#include "fuzz_common.hpp"
#include "qmmm_accel.h"
#include "rdf_io.hpp"

namespace rdfio = qmmm::rdfio;

namespace {

constexpr int kMaxFrames = 64;  // a short file can hold many tiny frames; enough to reach every state

void check_frame(const rdfio::Reader &r, const rdfio::Frame &f, int k) {
    const size_t n = r.atoms().size();
    FUZZ_CHECK(n >= 1, "frame %d: no atoms", k);
    FUZZ_CHECK(f.xyz.size() == 3 * n, "frame %d: %zu coordinates for %zu atoms", k, f.xyz.size(), n);
    FUZZ_CHECK(fuzz::all_finite(f.xyz.data(), f.xyz.size()), "frame %d: non-finite coordinate", k);
    if (f.has_box) FUZZ_CHECK(fuzz::all_finite(f.box, 9), "frame %d: non-finite box", k);
}

void check_selections(const std::vector<rdfio::AtomInfo> &atoms) {
    static const char *const kExpr[] = {"all", "name O* H*", "element o and resid 0-3", "index 1-5 and type *",
                                        "resname SOL WAT"};
    for (const char *e : kExpr) {
        const auto sel = rdfio::select(atoms, e);
        for (size_t i = 0; i < sel.size(); ++i) {
            FUZZ_CHECK(sel[i] >= 0 && static_cast<size_t>(sel[i]) < atoms.size(), "'%s': index %lld", e,
                       static_cast<long long>(sel[i]));
            FUZZ_CHECK(i == 0 || sel[i] > sel[i - 1], "'%s': indices not increasing", e);
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static fuzz::MemFile file("fuzz_rdf_io");
    static const char *const kFormats[] = {"xyz", "pdb", "gro", "lammps", "dcd", "xtc", "trr"};
    const std::string format = kFormats[data[0] % 7];
    const bool use_skip = (data[0] / 7) % 2 == 1;
    file.write(data + 1, size - 1);
    // GROMACS's reader (XTC, TRR) goes by the file name's extension.
    const std::string &path = format == "xtc" || format == "trr" ? file.path_with_extension("." + format) : file.path();
    try {
        auto reader = rdfio::open_trajectory(path, format);
        (void)reader->n_frames_hint();
        rdfio::Frame f;
        for (int k = 0; k < kMaxFrames; ++k) {
            if (use_skip && k % 2 == 1) {
                if (!reader->skip()) break;
                continue;
            }
            if (!reader->next(f)) break;
            check_frame(*reader, f, k);
        }
        check_selections(reader->atoms());
    } catch (const qmmm::Error &e) {
        // XTC and TRR need GROMACS's library; a build without it says so (older ones: "unknown format").
        if ((format == "xtc" || format == "trr") &&
            (e.status == QMMM_ERR_UNSUPPORTED ||
             (e.status == QMMM_ERR_INVALID_ARG && std::strstr(e.what(), "unknown format"))))
            return 0;
        FUZZ_CHECK(e.status == QMMM_ERR_FILE_FORMAT, "status %d for a readable file: %s", e.status, e.what());
        FUZZ_CHECK(std::strncmp(e.what(), path.c_str(), path.size()) == 0, "message does not name the file: %s",
                   e.what());
    }
    return 0;
}
