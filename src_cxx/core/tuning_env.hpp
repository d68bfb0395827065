// tuning_env.hpp -- the environment variables the library reads, each read, parsed and range-checked here and nowhere
// else, one reader a variable (docs/user-guide/tuning-knobs.md lists them): the knobs that steer the kernels for
// tuning and tests (QMMM_CUDA_TILE, QMMM_CUDA_ROWS, QMMM_CPU_ISA, QMMM_RDF_*), the run's choices (QMMM_BACKEND,
// QMMM_DEVICE) and what the library learns from its surroundings (OpenMP, MPI launchers, CUDA MPS).
//
// None of them changes what a result means. QMMM_CUDA_TILE and QMMM_RDF_MIN_SPLIT_PAIRS do not change the bits;
// QMMM_CUDA_ROWS chooses the embedding field's layout on the GPU (its own fixed summation order, the same claim);
// QMMM_RDF_CPU_NO_FMA chooses between two builds of the CPU counter that give the same bits.
//
// Each variable is read when it is used (a field handle's creation, an RDF count), so a test may set it between
// calls. Unset or empty: the default. A value outside the accepted set is never guessed at or ignored in silence:
// the reader throws qmmm::Error(QMMM_ERR_INVALID_ARG, "QMMM_...=\"value\": ...") and the API call that read it fails
// with that status and message (error.hpp). Nothing is printed.
#pragma once
#include <string>

namespace qmmm::tuning {

// QMMM_BACKEND: "cpu", "cuda" or "auto" (any case) as QMMM_BACKEND_CPU, _CUDA or _AUTO; unset or empty: -1 (the
// caller's choice stands). Another value: INVALID_ARG "environment variable QMMM_BACKEND='...' (use cpu, cuda or
// auto)". Read by resolve_backend (core_backend.cpp) and by the field's rule for small charge sets.
int backend();

// QMMM_CPU_ISA: the CPU kernel set asked for, avx512, avx2, generic or auto (any case); Unset when unset or empty.
// Another value: INVALID_ARG naming it. cpu_isa_choose (cpu_simd.hpp) checks that this CPU runs it.
enum class IsaRequest { Unset, Auto, Generic, Avx2, Avx512 };
struct CpuIsaEnv {
    IsaRequest request = IsaRequest::Unset;
    std::string value;  // as set (for messages)
};
CpuIsaEnv cpu_isa();

// QMMM_DEVICE: the node's device list for qmmm_pick_device when its spec is NULL; null when unset (the value as set,
// parsed by the caller: an empty or blank one means round robin too).
const char *device_list();

// OMP_NUM_THREADS: whether it is set (then the default thread count is OpenMP's, cpu_threads.cpp).
bool omp_num_threads_set();

// The ranks of this job on this node, as the common launchers export them (MPICH's and Intel MPI's Hydra
// MPI_LOCALNRANKS, Open MPI OMPI_COMM_WORLD_LOCAL_SIZE, MVAPICH2, Cray PALS, PMIx-based launchers, Slurm when it gives
// one plain count per node): the first that holds a whole number in 1 .. 2^20, else 1.
int launcher_node_ranks();

// CUDA_MPS_PIPE_DIRECTORY: where CUDA's clients find the MPS daemon; CUDA's default /tmp/nvidia-mps when unset or
// empty.
std::string mps_pipe_directory();

// A throughput tile shape of the CUDA embedding field: points per thread (P) and threads per chunk quarter (G).
struct TileShape {
    int points_per_thread = 0;
    int group_threads = 0;
    constexpr bool empty() const { return points_per_thread == 0; }
    friend constexpr bool operator==(const TileShape &a, const TileShape &b) {
        return a.points_per_thread == b.points_per_thread && a.group_threads == b.group_threads;
    }
};

// QMMM_CUDA_TILE: "PxG" (e.g. "4x32"), or the older integer form P * 1000 + G ("4032"); "0" or unset: the tuning
// table's choice by batch size (returned as an empty shape). The shape must be one of allowed[0 .. n_allowed).
TileShape cuda_tile(const TileShape *allowed, int n_allowed);

// QMMM_CUDA_ROWS: "0" keeps the field's throughput path on the tile layout, "1" puts it on the row layout whatever the
// cells; unset: -1, the tuning table's choice by the cells.
int cuda_rows();

// QMMM_CUDA_SMALL_CALLS: "0" sends every call of more than the latency path's points through the throughput path's
// copy back and stream synchronisation; "1" or unset: calls of up to kFieldSmallPoints points take the small-call
// form (values to mapped host memory, polled; the same bits).
bool cuda_small_calls();

// QMMM_RDF_MIN_SPLIT_PAIRS: pairs a frame must visit per GPU before a count is split over several GPUs; a finite
// number >= 0 (0: always split). Unset: fallback.
double rdf_min_split_pairs(double fallback);

// QMMM_RDF_CPU_NO_FMA: "1" makes the CPU counter use library fmaf instead of the FMA instruction (the same bits;
// tests compare the two), "0" or unset: the instruction where the CPU has it.
bool rdf_cpu_no_fma();

}  // namespace qmmm::tuning
