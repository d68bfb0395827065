// tuning_env.cpp -- parsing and range checks of the tuning and test knobs (tuning_env.hpp).
#include "tuning_env.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "error.hpp"

namespace qmmm::tuning {
namespace {

// The variable's value, or null when it is unset or empty.
const char *value_of(const char *name) {
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

[[noreturn]] void refuse(const char *name, const char *value, const std::string &why) {
    throw Error(QMMM_ERR_INVALID_ARG, std::string(name) + "=\"" + value + "\": " + why);
}

// A whole decimal integer in [0, 10^6] (no sign, no spaces, no trailing text); -1 otherwise.
long whole(const std::string &s) {
    if (s.empty() || s.size() > 7) return -1;
    long v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return -1;
        v = 10 * v + (c - '0');
    }
    return v;
}

}  // namespace

TileShape cuda_tile(const TileShape *allowed, int n_allowed) {
    const char *name = "QMMM_CUDA_TILE";
    const char *v = value_of(name);
    if (!v) return {};
    const std::string s(v);
    TileShape t;
    if (const size_t x = s.find_first_of("xX"); x != std::string::npos) {
        const long p = whole(s.substr(0, x)), g = whole(s.substr(x + 1));
        if (p > 0 && g > 0) t = TileShape{static_cast<int>(p), static_cast<int>(g)};
    } else if (const long k = whole(s); k == 0) {
        return {};  // the older form's "by batch size"
    } else if (k > 0) {
        t = TileShape{static_cast<int>(k / 1000), static_cast<int>(k % 1000)};  // P * 1000 + G
    }
    std::string list;
    for (int i = 0; i < n_allowed; ++i) {
        if (!t.empty() && t == allowed[i]) return t;
        list += (i ? ", " : "") + std::to_string(allowed[i].points_per_thread) + "x" +
                std::to_string(allowed[i].group_threads);
    }
    refuse(name, v, "not a tile shape of this build; use PxG (points per thread x threads per chunk quarter), one of " +
                        list + ", or P*1000+G, or 0 for the default");
}

int cuda_rows() {
    const char *name = "QMMM_CUDA_ROWS";
    const char *v = value_of(name);
    if (!v) return -1;
    const std::string s(v);
    if (s == "0") return 0;
    if (s == "1") return 1;
    refuse(name, v, "use 0 (tile layout) or 1 (row layout), or leave it unset (by the cells)");
}

double rdf_min_split_pairs(double fallback) {
    const char *name = "QMMM_RDF_MIN_SPLIT_PAIRS";
    const char *v = value_of(name);
    if (!v) return fallback;
    char *end = nullptr;
    errno = 0;
    const double x = std::strtod(v, &end);
    if (end == v || *end != '\0' || errno == ERANGE || !std::isfinite(x) || x < 0)
        refuse(name, v, "use a finite number of pairs >= 0 (0: split every frame over the listed GPUs)");
    return x;
}

bool rdf_cpu_no_fma() {
    const char *name = "QMMM_RDF_CPU_NO_FMA";
    const char *v = value_of(name);
    if (!v) return false;
    const std::string s(v);
    if (s == "0") return false;
    if (s == "1") return true;
    refuse(name, v, "use 1 (library fmaf) or 0 (the FMA instruction where the CPU has it)");
}

}  // namespace qmmm::tuning
