// rdf_cpu.cpp -- CPU pair counting: OpenMP threads with private 64-bit histograms merged at the end,
// over all pairs or over the cell list's neighbour cells.
// Built with -ffp-contract=off (src_cxx/rdf/CMakeLists.txt) so the bins equal the GPU's (rdf_shared.hpp). r^2 has
// two FMAs by definition: the counting loops are compiled twice, for processors with the FMA instruction
// (AVX2 + FMA, vectorised) and without (the library's fmaf, exact but slow), and picked at run time; the
// environment variable QMMM_RDF_CPU_NO_FMA=1 forces the second (tests compare the two; tuning_env.hpp).
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cpu_simd.hpp"
#include "cpu_threads.hpp"
#include "rdf_backend.hpp"
#include "tuning_env.hpp"

namespace qmmm::rdf {
namespace {

constexpr int kChunk = 256;

// Counts pairs of atom a with b[j0..j1). The distances go through a buffer so that loop vectorises;
// excluded pairs (equal keys) get +inf, which no bin takes. Pairs near a bin edge go to exact_bin (pair_bin).
template <bool Tri>
__attribute__((always_inline)) inline void count_run(const Geom &g, const Atom &a, const Atom *b, int64_t j0, int64_t j1, uint64_t *h) {
    float r2[kChunk];
    for (int64_t c0 = j0; c0 < j1; c0 += kChunk) {
        const int n = static_cast<int>(std::min<int64_t>(kChunk, j1 - c0));
        const Atom *bb = b + c0;
        for (int k = 0; k < n; ++k) {
            const float d = dist2<Tri>(g, a.x, a.y, a.z, bb[k].x, bb[k].y, bb[k].z);
            r2[k] = bb[k].key == a.key ? __builtin_inff() : d;
        }
        for (int k = 0; k < n; ++k) {
            if (r2[k] < g.hi2) {
                const int bin = pair_bin(g, r2[k], a, bb[k]);
                if (bin >= 0) ++h[bin];
            }
        }
    }
}

// One thread's share of the frame (orphaned omp for: called inside the parallel region).
template <bool Tri>
__attribute__((always_inline)) inline void work(const Frame &f, uint64_t *h) {
    const Geom &g = f.g;
    const int64_t n1 = static_cast<int64_t>(f.a1.size());
    const Atom *a1 = f.a1.data();
    const Atom *s = f.identical ? f.a1.data() : f.a2.data();
    if (f.method == QMMM_RDF_METHOD_BRUTE) {
        const int64_t n2 = f.identical ? n1 : static_cast<int64_t>(f.a2.size());
#pragma omp for schedule(dynamic, 16)
        for (int64_t i = 0; i < n1; ++i) count_run<Tri>(g, a1[i], s, f.identical ? i + 1 : 0, n2, h);
    } else {
        const int32_t nx = f.nc[0], ny = f.nc[1], nz = f.nc[2];
        const int n_st = static_cast<int>(f.stencil.size() / 3);
        const int32_t *st = f.stencil.data();
        const int32_t *start = f.start.data();
#pragma omp for schedule(dynamic, 64)
        for (int64_t p = 0; p < n1; ++p) {
            const int32_t c = f.cell1[p];
            const int32_t cx = c % nx, cy = (c / nx) % ny, cz = c / (nx * ny);
            if (f.identical) count_run<Tri>(g, a1[p], s, p + 1, start[c + 1], h);
            for (int k = 0; k < n_st; ++k) {
                int32_t x = cx + st[3 * k], y = cy + st[3 * k + 1], z = cz + st[3 * k + 2];
                x += x < 0 ? nx : (x >= nx ? -nx : 0);
                y += y < 0 ? ny : (y >= ny ? -ny : 0);
                z += z < 0 ? nz : (z >= nz ? -nz : 0);
                const int32_t q = x + nx * (y + ny * z);
                count_run<Tri>(g, a1[p], s, start[q], start[q + 1], h);
            }
        }
    }
}

template <bool Tri>
__attribute__((target("avx2,fma"))) void work_fma(const Frame &f, uint64_t *h) { work<Tri>(f, h); }
template <bool Tri>
void work_plain(const Frame &f, uint64_t *h) { work<Tri>(f, h); }

template <bool Tri>
void count_all(const Frame &f, int n_threads, std::vector<std::vector<uint64_t>> &priv) {
    static const bool hw = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const bool use_fma = hw && !qmmm::tuning::rdf_cpu_no_fma();  // read before the threads start (it may throw)
#pragma omp parallel num_threads(n_threads)
    {
        uint64_t *h = priv[omp_get_thread_num()].data();
        if (use_fma) work_fma<Tri>(f, h);
        else work_plain<Tri>(f, h);
    }
}

}  // namespace

void cpu_count(const Frame &f, int n_threads, uint64_t *hist) {
    const int nt = n_threads > 0 ? n_threads : qmmm::default_threads();
    std::vector<std::vector<uint64_t>> priv(nt, std::vector<uint64_t>(f.g.n_bins, 0));
    if (f.g.triclinic)
        count_all<true>(f, nt, priv);
    else
        count_all<false>(f, nt, priv);
    simd_clear_upper();
    for (const auto &p : priv)
        for (int32_t b = 0; b < f.g.n_bins; ++b) hist[b] += p[b];
}

}  // namespace qmmm::rdf
