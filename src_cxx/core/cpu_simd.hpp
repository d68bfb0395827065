// cpu_simd.hpp -- leave the vector unit clean for the caller.
#pragma once

namespace qmmm {

// GCC 12 puts no vzeroupper at the returns of the AVX2/AVX-512 target clones of the CPU kernels, so the upper
// register halves stay dirty after them, and the caller's SSE code (a Fortran driver built for plain x86-64)
// then pays for it on every vector instruction: measured on the H100 host (Xeon), the VMC wavefunction ran
// 4.5x slower in every run that had used the CPU field (5.4 s against 1.2 s). Every CPU entry point that ran
// such code calls this before it returns to the caller (on the calling thread, compiled without AVX).
inline void simd_clear_upper() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx) __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

}  // namespace qmmm
