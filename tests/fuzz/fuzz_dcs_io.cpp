// fuzz_dcs_io.cpp -- the structure readers of qmmm-dcs (PQR, PDB, XYZ with charges) and its OpenDX reader.
// Input: one byte choosing the format (byte % 4: pqr, pdb, xyz, dx), then the file.
// Invariants: a read either throws qmmm::Error with QMMM_ERR_FILE_FORMAT and a message that starts with
// the file name, or returns consistent arrays of finite numbers; no other exception escapes.
#include <cstring>
#include <string>

#include "dcs_io.hpp"
#include "fuzz_common.hpp"

namespace {

void check_molecule(const dcsio::Molecule &m) {
    const auto n = static_cast<size_t>(m.n());
    FUZZ_CHECK(n > 0, "read_structure returned no atoms without an error");
    FUZZ_CHECK(m.xyz.size() == 3 * n && m.z.size() == n && m.name.size() == n, "array sizes disagree (n = %zu)", n);
    FUZZ_CHECK(fuzz::all_finite(m.xyz.data(), m.xyz.size()), "non-finite coordinate");
    FUZZ_CHECK(fuzz::all_finite(m.q.data(), m.q.size()), "non-finite charge");
    for (int z : m.z) FUZZ_CHECK(z >= 0 && z <= 118, "atomic number %d", z);
}

void check_grid(const dcsio::Grid &g) {
    int64_t total = 1;
    for (int d = 0; d < 3; ++d) {
        FUZZ_CHECK(g.count[d] >= 1, "count[%d] = %lld", d, static_cast<long long>(g.count[d]));
        FUZZ_CHECK(std::isfinite(g.origin[d]) && std::isfinite(g.spacing[d]), "non-finite origin or delta");
        total *= g.count[d];
    }
    FUZZ_CHECK(g.values.size() == static_cast<size_t>(total), "%zu values for %lld points", g.values.size(),
               static_cast<long long>(total));
    FUZZ_CHECK(fuzz::all_finite(g.values.data(), g.values.size()), "non-finite value");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static fuzz::MemFile file("fuzz_dcs_io");
    static const char *const kFormats[] = {"pqr", "pdb", "xyz", "dx"};
    const std::string format = kFormats[data[0] % 4];
    const std::string &path = file.write(data + 1, size - 1);
    try {
        if (format == "dx")
            check_grid(dcsio::read_dx(path));
        else
            check_molecule(dcsio::read_structure(path, format));
    } catch (const qmmm::Error &e) {
        FUZZ_CHECK(e.status == QMMM_ERR_FILE_FORMAT, "status %d for a readable file: %s", e.status, e.what());
        FUZZ_CHECK(std::strncmp(e.what(), path.c_str(), path.size()) == 0, "message does not name the file: %s",
                   e.what());
    }
    return 0;
}
