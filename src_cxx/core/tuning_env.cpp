// tuning_env.cpp -- parsing and range checks of the tuning and test knobs (tuning_env.hpp).
#include "tuning_env.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

#include "error.hpp"
#include "qmmm_accel_core.h"

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

// The value in lower case.
std::string lower(const char *v) {
    std::string s(v);
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// A positive whole number in 1 .. 2^20 from a variable, else 0.
int env_count(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v) return 0;
    char *end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return (*end == '\0' && n > 0 && n <= 1 << 20) ? static_cast<int>(n) : 0;
}

}  // namespace

int backend() {
    const char *v = value_of("QMMM_BACKEND");
    if (!v) return -1;
    const std::string s = lower(v);
    if (s == "cpu") return QMMM_BACKEND_CPU;
    if (s == "cuda") return QMMM_BACKEND_CUDA;
    if (s == "auto") return QMMM_BACKEND_AUTO;
    throw Error(QMMM_ERR_INVALID_ARG, "environment variable QMMM_BACKEND='" + std::string(v) + "' (use cpu, cuda or auto)");
}

CpuIsaEnv cpu_isa() {
    const char *v = value_of("QMMM_CPU_ISA");
    if (!v) return {};
    const std::string s = lower(v);
    CpuIsaEnv e{IsaRequest::Unset, v};
    if (s == "avx512") e.request = IsaRequest::Avx512;
    else if (s == "avx2") e.request = IsaRequest::Avx2;
    else if (s == "generic") e.request = IsaRequest::Generic;
    else if (s == "auto") e.request = IsaRequest::Auto;
    else
        throw Error(QMMM_ERR_INVALID_ARG,
                    "environment variable QMMM_CPU_ISA='" + std::string(v) + "' (use avx512, avx2, generic or auto)");
    return e;
}

const char *device_list() { return std::getenv("QMMM_DEVICE"); }

bool omp_num_threads_set() { return value_of("OMP_NUM_THREADS") != nullptr; }

int launcher_node_ranks() {
    for (const char *name : {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
                             "PALS_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "PMI_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE"})
        if (int n = env_count(name)) return n;
    return 1;
}

std::string mps_pipe_directory() {
    const char *v = value_of("CUDA_MPS_PIPE_DIRECTORY");
    return v ? v : "/tmp/nvidia-mps";
}

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

bool cuda_small_calls() {
    const char *name = "QMMM_CUDA_SMALL_CALLS";
    const char *v = value_of(name);
    if (!v) return true;
    const std::string s(v);
    if (s == "0") return false;
    if (s == "1") return true;
    refuse(name, v, "use 1 (small calls polled from mapped memory, the default) or 0 (copied back)");
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
