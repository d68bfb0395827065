// field_latency_gpu_kernels.cu -- the latency path of the embedding field: n <= kLatencyMaxPoints points in the launch
// parameters, one block per chunk (chunk_partials, field_latency_gpu.cuh), partials to mapped host memory as LL words.
// The low-latency mode's persistent kernel computes the same bits (field_persistent_gpu_kernels.cu).
#include "direct/field_gpu.cuh"
#include "direct/field_latency_gpu.cuh"
#include "qmmm_accel_field.h"

namespace qmmm::cuda::field {
namespace {

template <int PREC>
__global__ void __launch_bounds__(kLatencyThreads) latency_kernel(DeviceCells c, LatencyPoints pts, LatencyOut out,
                                                                  unsigned seq) {
    __shared__ typename cub::BlockReduce<typename Traits<PREC>::Acc, kLatencyThreads>::TempStorage tmp;
    chunk_partials<PREC>(c, blockIdx.x, pts.xyz, pts.n, out, seq, tmp);
}

template <int PREC>
cudaError_t latency(const DeviceCells &c, const LatencyPoints &p, LatencyOut out, unsigned seq, cudaStream_t s) {
    latency_kernel<PREC><<<static_cast<unsigned>(c.n_chunks), kLatencyThreads, 0, s>>>(c, p, out, seq);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_latency(int precision, const DeviceCells &c, const LatencyPoints &p, LatencyOut out,
                           unsigned seq, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return latency<QMMM_PRECISION_SINGLE>(c, p, out, seq, s);
        case QMMM_PRECISION_MIXED: return latency<QMMM_PRECISION_MIXED>(c, p, out, seq, s);
        default: return latency<QMMM_PRECISION_DOUBLE>(c, p, out, seq, s);
    }
}

}  // namespace qmmm::cuda::field
