// fuzz_rdf_select.cpp -- the selection language of qmmm-rdf (qmmm::rdfio::select) on a fixed small system.
// Input: the selection expression.
// Invariants: either qmmm::Error with QMMM_ERR_INVALID_ARG and a non-empty message, or sorted, distinct, in-range
// indices; "and" only narrows a selection (a clause added to an accepted expression never adds atoms).
#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "qmmm_accel.h"
#include "rdf_io.hpp"

namespace rdfio = qmmm::rdfio;

namespace {

std::vector<rdfio::AtomInfo> make_atoms() {
    struct A {
        const char *name, *element, *resname, *type;
        int64_t resid;
    };
    static const A kAtoms[] = {{"OW", "O", "SOL", "OW", 1},   {"HW1", "H", "SOL", "HW", 1},
                               {"HW2", "H", "SOL", "HW", 1},  {"OW", "O", "SOL", "OW", 2},
                               {"HW1", "H", "SOL", "HW", 2},  {"HW2", "H", "SOL", "HW", 2},
                               {"NA", "Na", "NA", "Na+", 3},  {"CL", "Cl", "CL", "Cl-", -4},
                               {"CA", "C", "ALA", "CT", 100}, {"", "", "", "", 9223372036854775807LL}};
    std::vector<rdfio::AtomInfo> atoms;
    for (const auto &a : kAtoms) {
        rdfio::AtomInfo i;
        i.name = a.name, i.element = a.element, i.resname = a.resname, i.type = a.type;
        i.resid = i.mol = a.resid;
        atoms.push_back(i);
    }
    return atoms;
}

bool select(const std::vector<rdfio::AtomInfo> &atoms, const std::string &expr, std::vector<int64_t> &out) {
    try {
        out = rdfio::select(atoms, expr);
    } catch (const qmmm::Error &e) {
        FUZZ_CHECK(e.status == QMMM_ERR_INVALID_ARG, "status %d: %s", e.status, e.what());
        FUZZ_CHECK(e.what()[0] != '\0', "empty message");
        return false;
    }
    for (size_t i = 0; i < out.size(); ++i) {
        FUZZ_CHECK(out[i] >= 0 && static_cast<size_t>(out[i]) < atoms.size(), "index %lld",
                   static_cast<long long>(out[i]));
        FUZZ_CHECK(i == 0 || out[i] > out[i - 1], "indices not increasing");
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const auto atoms = make_atoms();
    const std::string expr(reinterpret_cast<const char *>(data), size);
    std::vector<int64_t> all, narrowed;
    if (!select(atoms, expr, all)) return 0;
    if (select(atoms, expr + " and name O*", narrowed))
        for (int64_t i : narrowed)
            FUZZ_CHECK(std::binary_search(all.begin(), all.end(), i), "'and' added atom %lld",
                       static_cast<long long>(i));
    return 0;
}
