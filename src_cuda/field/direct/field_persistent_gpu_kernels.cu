// field_persistent_gpu_kernels.cu -- the low-latency mode's persistent kernel and its transport: the host writes a
// request as LL words into the mailbox (mapped host memory, field_gpu.cuh's Mailbox), block 0 alone polls it over PCIe
// and relays the request through device memory (Relay), where the other blocks wait; each block then computes its
// chunks with the latency kernel's body (chunk_partials, field_latency_gpu.cuh), so both give the same bits.
#include "direct/field_gpu.cuh"
#include "direct/field_latency_gpu.cuh"
#include "qmmm_accel_field.h"

namespace qmmm::cuda::field {
namespace {

// Relaxed system-scope loads and stores: the words are read by the other side (host or another block) without a
// fence; each word carries its own sequence number (LL words).
__device__ __forceinline__ void store_sys(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long load_sys(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned load_sys(const unsigned *p) {
    unsigned v;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Warp 0: waits until words[] holds a whole request with sequence number `want` (one round trip per try: the
// header and the first point come together, larger requests need one more), copies its words' data to
// data[0 .. 6n) and returns n; or returns -1 when *stop becomes non-zero or, with idle_ns > 0, after idle_ns.
__device__ int ll_receive(const unsigned long long *words, const unsigned *stop, unsigned want,
                          unsigned long long since, unsigned long long idle_ns, unsigned *data) {
    const int lane = threadIdx.x % 32;
    int limit = 7;  // words read per try: the header and one point until n is known
    for (;;) {
        const unsigned long long a = lane < limit ? load_sys(&words[lane]) : 0ULL;
        const unsigned long long b = lane + 32 < limit ? load_sys(&words[lane + 32]) : 0ULL;
        const unsigned quit = lane == 31 ? load_sys(stop) : 0u;
        const unsigned long long h = __shfl_sync(0xffffffffu, a, 0);
        if (ll_seq(h) == want) {
            const int n = static_cast<int>(ll_data(h)), need = 1 + 6 * n;
            const bool ok = (lane >= need || ll_seq(a) == want) && (lane + 32 >= need || ll_seq(b) == want);
            if (need <= limit && __all_sync(0xffffffffu, ok)) {
                if (lane >= 1 && lane < need) data[lane - 1] = ll_data(a);
                if (lane + 32 < need) data[lane + 31] = ll_data(b);
                __syncwarp();
                return n;
            }
            limit = need;
        }
        const bool idle = idle_ns && lane == 0 && global_ns() - since > idle_ns;
        if (__any_sync(0xffffffffu, quit != 0 || idle)) return -1;
    }
}

// Low-latency mode: block 0's warp 0 waits for the host's next request in the mailbox (mapped host memory) and
// relays it through device memory (Relay), where the other blocks' warp 0 wait; every block then computes its
// chunks and writes their partials as latency_kernel does. No launch per call, one PCIe poller; each
// block holds its SM share (one block of 256 threads) while it waits. Ends on mb->quit or after idle_ns without
// a request.
template <int PREC>
__global__ void __launch_bounds__(kLatencyThreads) persistent_kernel(DeviceCells c, const Mailbox *mb, Relay *relay,
                                                                     LatencyOut out, unsigned last,
                                                                     unsigned long long idle_ns) {
    __shared__ typename cub::BlockReduce<typename Traits<PREC>::Acc, kLatencyThreads>::TempStorage tmp;
    __shared__ double xyz[3 * kLatencyMaxPoints];
    __shared__ int n_sh;
    unsigned long long since = global_ns();
    for (;;) {
        const unsigned want = ll_next(last);
        if (threadIdx.x < 32) {
            unsigned *data = reinterpret_cast<unsigned *>(xyz);
            int n;
            if (blockIdx.x == 0) {
                n = ll_receive(mb->w, &mb->quit, want, since, idle_ns, data);
                const int lane = threadIdx.x;
                if (n < 0) {
                    if (lane == 0) *reinterpret_cast<volatile unsigned *>(&relay->stop) = 1u;
                } else {
                    const int need = 1 + 6 * n;
                    for (int k = lane; k < need; k += 32)
                        store_sys(&relay->w[k], ll_word(want, k == 0 ? static_cast<unsigned>(n) : data[k - 1]));
                }
            } else {
                n = ll_receive(relay->w, &relay->stop, want, 0, 0, data);
            }
            if (threadIdx.x == 0) n_sh = n;
        }
        __syncthreads();
        const int n = n_sh;
        if (n < 0) return;
        for (int64_t ch = blockIdx.x; ch < c.n_chunks; ch += gridDim.x) chunk_partials<PREC>(c, ch, xyz, n, out, want, tmp);
        last = want;
        since = global_ns();
        __syncthreads();  // xyz and n_sh are rewritten by the next request
    }
}

template <int PREC>
cudaError_t persistent(const DeviceCells &c, const Mailbox *mb, Relay *relay, LatencyOut out, int blocks,
                       unsigned last, unsigned long long idle_ns, cudaStream_t s) {
    persistent_kernel<PREC><<<static_cast<unsigned>(blocks), kLatencyThreads, 0, s>>>(c, mb, relay, out, last, idle_ns);
    return cudaGetLastError();
}

}  // namespace

cudaError_t launch_persistent(int precision, const DeviceCells &c, const Mailbox *mb, Relay *relay, LatencyOut out,
                              int blocks, unsigned last, unsigned long long idle_ns, cudaStream_t s) {
    switch (precision) {
        case QMMM_PRECISION_SINGLE: return persistent<QMMM_PRECISION_SINGLE>(c, mb, relay, out, blocks, last, idle_ns, s);
        case QMMM_PRECISION_MIXED: return persistent<QMMM_PRECISION_MIXED>(c, mb, relay, out, blocks, last, idle_ns, s);
        default: return persistent<QMMM_PRECISION_DOUBLE>(c, mb, relay, out, blocks, last, idle_ns, s);
    }
}

}  // namespace qmmm::cuda::field
