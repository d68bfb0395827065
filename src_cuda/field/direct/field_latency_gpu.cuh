// field_latency_gpu.cuh -- a chunk's partials for a few points with one block (the latency kernel's and the persistent
// kernel's body): consecutive threads on consecutive cells, a fixed block reduction (cub::BlockReduce), the result
// straight to the host as LL words (field_gpu.cuh). Every pair takes its precision's careful term
// (Careful<PREC>::term, field_careful_gpu.cuh).
#pragma once
#include <cub/block/block_reduce.cuh>

#include "direct/field_careful_gpu.cuh"
#include "direct/field_gpu.cuh"
#include "direct/field_pair_gpu.cuh"

namespace qmmm::cuda::field {
namespace {

// The partials of chunk ch for n points with one block of kLatencyThreads threads (consecutive threads on
// consecutive cells: every load is coalesced), to the host as LL words of sequence number seq.
template <int PREC>
__device__ __forceinline__ void chunk_partials(const DeviceCells &c, int64_t ch, const double *xyz, int n,
                                               const LatencyOut &out, unsigned seq,
                                               typename cub::BlockReduce<typename Traits<PREC>::Acc,
                                                                         kLatencyThreads>::TempStorage &tmp) {
    using T = Traits<PREC>;
    using F = typename T::F;
    using Acc = typename T::Acc;
    using Reduce = cub::BlockReduce<Acc, kLatencyThreads>;
    const auto *cells = static_cast<const typename T::Cell *>(c.cells) + ch * kChunk;
    const F self = static_cast<F>(c.self);
    for (int p = 0; p < n; ++p) {
        F q[kPointWords<PREC>];
        local_point<PREC>(c, ch, &xyz[3 * p], q);
        Acc a = 0;
        float corr = 0;  // MIXED
#pragma unroll
        for (int j = threadIdx.x; j < kChunk; j += kLatencyThreads) {
            const auto cell = cells[j];
            const F d2 = dist2<PREC>(q, cell);
            a += Careful<PREC>::term(cell, d2, c, ch * kChunk + j, &xyz[3 * p], self, corr);
        }
        a = Pair<PREC>::finish(a, corr);
        const Acc b = Reduce(tmp).Sum(a);
        if (threadIdx.x == 0) {  // two LL words in one 16-byte store, straight to the host
            const auto bits = static_cast<unsigned long long>(__double_as_longlong(static_cast<double>(b)));
            unsigned long long *w = &out.result[2 * (p * c.n_chunks + ch)];
            const unsigned long long lo = ll_word(seq, static_cast<unsigned>(bits)), hi = ll_word(seq, static_cast<unsigned>(bits >> 32));
            asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(w), "l"(lo), "l"(hi) : "memory");
        }
        __syncthreads();  // tmp is reused
    }
}

}  // namespace
}  // namespace qmmm::cuda::field
