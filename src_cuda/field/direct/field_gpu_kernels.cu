// field_gpu_kernels.cu -- the throughput path of the embedding field: one sweep over a segment's chunks, templated on
// the layout (field_layout_gpu.cuh: tile, row) and the join of a chunk's quarters (field_join_gpu.cuh: block,
// segment), then a segment sum with the nuclear term. The pair terms per precision are field_pair_gpu.cuh's; the
// latency paths are field_latency_gpu_kernels.cu and field_persistent_gpu_kernels.cu; the tile shapes, layouts and
// joins the host and this file pick are the tuning table's
// (src_cxx/field/direct/field_tuning.hpp; the shapes' dispatch and compile-time fields field_tuning_gpu.cuh).
//
// Block (x, y[, z]): the G * P points x (thread lane l has points l, l + G, ...) against the chunks of segment y. A
// point's chunk partial is ((s0 + s1) + s2) + s3 over the quarters: the same for every G and P, and four times the
// parallelism of one thread per point and chunk (small batches still fill the GPU). G is a multiple of 32, so a warp
// lies in one group and every branch on the quarter is uniform in it. No floating-point atomics.
#include "direct/field_gpu.cuh"
#include "direct/field_join_gpu.cuh"
#include "direct/field_layout_gpu.cuh"
#include "direct/field_pair_gpu.cuh"
#include "direct/field_tuning_gpu.cuh"
#include "qmmm_accel_field.h"

namespace qmmm::cuda::field {
namespace {

// The sweep: thread (sub, lane) sums quarter sub of every chunk of segment blockIdx.y for its P points (Layout) and
// joins the quarters (Join); the totals become the segment's partials, part[i * n_segments + seg].
template <class Layout, class Join, int P, int G>
__device__ __forceinline__ void sweep(const DeviceCells &c, int chunks_per_segment, int n_segments, int64_t n,
                                      const double *__restrict__ xyz, double *__restrict__ part,
                                      const QuarterJoin &join) {
    using Acc = typename Layout::Acc;
    constexpr int T = Join::template kThreads<G>;
    constexpr bool Q = Join::kQuarterTile;
    static_assert(G % 32 == 0, "a warp must lie in one group");
    __shared__ typename Layout::template Tile<Q> tile;
    __shared__ typename Join::template Shared<Acc, P, G> meet;
    const int seg = blockIdx.y, sub = Join::template sub<G>(), lane = Join::template lane<G>();
    const int64_t first = static_cast<int64_t>(blockIdx.x) * G * P + lane;
    const typename Layout::template Points<P, G> pts(xyz, first, n);
    Acc total[P];
#pragma unroll
    for (int k = 0; k < P; ++k) total[k] = 0;
    const int64_t ch0 = static_cast<int64_t>(seg) * chunks_per_segment;
    const int64_t ch1 = min(ch0 + chunks_per_segment, c.n_chunks);
    for (int64_t ch = ch0; ch < ch1; ++ch) {
        Acc partial[P];
        Layout::template chunk<P, G, T, Q>(c, ch, sub, tile, pts, partial,
                                           [&](int k, Acc v) { Join::template point<Acc>(k, v, total); });
        Join::template chunk<Acc, P, G>(partial, meet, sub, lane, total);
    }
    Join::template finish<Acc, P, G>(total, meet, sub, lane, first, seg, n_segments, n, part, join);
}

// The sweep's kernels, one per join (its block shape and parameters): blocks of kSub groups, and one-quarter blocks.
template <class Layout, int P, int G>
__global__ void __launch_bounds__(kSub * G, Layout::kMinBlocks * 128 / (kSub * G))
    sweep_kernel(DeviceCells c, int chunks_per_segment, int64_t n, const double *__restrict__ xyz,
                 double *__restrict__ part) {
    sweep<Layout, BlockJoin, P, G>(c, chunks_per_segment, static_cast<int>(gridDim.y), n, xyz, part, QuarterJoin{});
}
template <class Layout, int P, int G>
__global__ void __launch_bounds__(G, Layout::kMinBlocks * 128 / G)
    quarter_sweep_kernel(DeviceCells c, int chunks_per_segment, int n_segments, int64_t n,
                         const double *__restrict__ xyz, double *__restrict__ part, QuarterJoin join) {
    sweep<Layout, SegmentJoin, P, G>(c, chunks_per_segment, n_segments, n, xyz, part, join);
}

// One warp per point: u[i] = its segment partials (lanes take segments lane, lane + 32, ...) plus MIXED's heavy cells
// (double, the cells' singular rule) minus the nuclear term (double, lanes over nuclei), each summed lanes-then-butterfly
// in a fixed order. A point within the singular radius of a nucleus gets NaN (the API reports it with the nucleus).
// The value goes to out[i], or (ll set: a small call) as two LL words of sequence seq straight into mapped host
// memory, which the host polls: no copy back, no stream synchronisation; the same bits either way.
template <int PREC>
__global__ void __launch_bounds__(256) segment_sum_kernel(const double *__restrict__ part, int n_segments, int64_t n,
                                                         const double *__restrict__ xyz, DeviceCells c,
                                                         double *__restrict__ out, unsigned long long *ll,
                                                         unsigned seq) {
    using Acc = typename Traits<PREC>::Acc;
    const int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (i >= n) return;  // i is the same for the whole warp
    Acc s = 0;
    const double *mine = part + i * n_segments;
    for (int g = lane; g < n_segments; g += 32) s += static_cast<Acc>(mine[g]);
    s = warp_sum(s);
    const double px = xyz[3 * i], py = xyz[3 * i + 1], pz = xyz[3 * i + 2];
    auto d2_to = [&](const Cell64 &a) {
        const double dx = px - a.x, dy = py - a.y, dz = pz - a.z;
        return dx * dx + dy * dy + dz * dz;
    };
    double h = 0;
    const auto *heavy = static_cast<const Cell64 *>(c.heavy);
    for (int64_t m = lane; m < c.n_heavy; m += 32) {
        const double d2 = d2_to(heavy[m]);
        h += heavy[m].w * (d2 < kEps2 ? c.self : 1.0 / sqrt(d2));
    }
    h = warp_sum(h);
    double v = 0;
    bool on = false;
    const auto *nuc = static_cast<const Cell64 *>(c.nuclei);
    for (int64_t b = lane; b < c.n_nuclei; b += 32) {
        const double d2 = d2_to(nuc[b]);
        on |= d2 < kEps2;
        v += nuc[b].w / sqrt(d2);
    }
    v = warp_sum(v);
    on = __any_sync(0xffffffffu, on);
    if (lane != 0) return;
    const double r = on ? __longlong_as_double(0x7ff8000000000000LL) : (static_cast<double>(s) + h) - v;
    if (!ll) {
        out[i] = r;
        return;
    }
    const auto bits = static_cast<unsigned long long>(__double_as_longlong(r));
    const unsigned long long lo = ll_word(seq, static_cast<unsigned>(bits)), hi = ll_word(seq, static_cast<unsigned>(bits >> 32));
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(ll + 2 * i), "l"(lo), "l"(hi) : "memory");
}

// The layout is the cells' (rows where the host built them); on tiles the join is the device's row of the tuning
// table (FieldTuning::quarter_blocks), of the joins some policy takes for PREC (field_join_taken: only those are
// compiled).
template <int PREC, int P, int G>
bool tile(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part, bool quarter_blocks,
          QuarterJoin join, cudaStream_t s) {
    const int64_t per_block = static_cast<int64_t>(G) * P;
    const dim3 grid(static_cast<unsigned>((n + per_block - 1) / per_block), static_cast<unsigned>(nseg));
    if (c.rows) {
        sweep_kernel<RowLayout<PREC>, P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
        return true;
    }
    if (quarter_blocks) {
        if constexpr (field_join_taken(PREC, true)) {
            quarter_sweep_kernel<TileLayout<PREC>, P, G><<<dim3(grid.x, grid.y, kSub), G, 0, s>>>(c, cps, nseg, n,
                                                                                                 xyz, part, join);
            return true;
        }
    } else if constexpr (field_join_taken(PREC, false)) {
        sweep_kernel<TileLayout<PREC>, P, G><<<grid, kSub * G, 0, s>>>(c, cps, n, xyz, part);
        return true;
    }
    return false;  // a join no policy takes for PREC
}

// Every tile shape gives a point the same operations in the same order (bitwise equal results); the host picks one
// from the tuning table by batch size or QMMM_CUDA_TILE; the sweep is compiled for each shape of kFieldTileShapes
// (field_tuning.hpp).
template <int PREC>
cudaError_t throughput(const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz, double *part,
                       double *out, TileShape shape, bool quarter_blocks, QuarterJoin join, SmallOut small,
                       cudaStream_t s) {
    bool launched = false;
    const bool known = for_tile_shape(shape, [&](auto p, auto g) {
        launched = tile<PREC, decltype(p)::value, decltype(g)::value>(c, cps, nseg, n, xyz, part, quarter_blocks,
                                                                        join, s);
    });
    if (!known || !launched) return cudaErrorInvalidValue;  // not in kFieldTileShapes, or a join not compiled
    segment_sum_kernel<PREC><<<static_cast<unsigned>((32 * n + 255) / 256), 256, 0, s>>>(
        part, nseg, n, xyz, c, out, small.words, small.seq);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_throughput(int precision, const DeviceCells &c, int cps, int nseg, int64_t n, const double *xyz,
                              double *partials, double *out, TileShape shape, bool quarter_blocks, QuarterJoin join,
                              cudaStream_t s, SmallOut small) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE:
            return throughput<QMMM_PRECISION_SINGLE>(c, cps, nseg, n, xyz, partials, out, shape, quarter_blocks, join,
                                                   small, s);
        case QMMM_PRECISION_MIXED:
            return throughput<QMMM_PRECISION_MIXED>(c, cps, nseg, n, xyz, partials, out, shape, quarter_blocks, join,
                                                   small, s);
        default:
            return throughput<QMMM_PRECISION_DOUBLE>(c, cps, nseg, n, xyz, partials, out, shape, quarter_blocks, join,
                                                   small, s);
    }
}

}  // namespace qmmm::cuda::field
