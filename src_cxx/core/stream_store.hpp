// stream_store.hpp -- non-temporal ("streaming") stores, for filling buffers far larger than the caches that no
// core reads soon (qmmm-rdf's batches of frames): the line is not first read from memory
// (no read-for-ownership) and does not evict useful data. They are weakly ordered: the writing thread calls
// stream_fence() before another thread or a device may read the data. Plain stores where there is no SSE2.
#pragma once
#include <cstdint>
#include <cstring>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#define QMMM_STREAM_STORES 1
#endif

namespace qmmm {

inline void stream_store(double *p, double v) {
#ifdef QMMM_STREAM_STORES
    long long b;
    std::memcpy(&b, &v, sizeof b);
    _mm_stream_si64(reinterpret_cast<long long *>(p), b);
#else
    *p = v;
#endif
}

inline void stream_fence() {
#ifdef QMMM_STREAM_STORES
    _mm_sfence();
#endif
}

}  // namespace qmmm
