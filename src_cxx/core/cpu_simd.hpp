// cpu_simd.hpp -- the CPU's vector instruction set: which one a kernel family runs (chosen at run time), and
// leaving the vector unit clean for the caller.
#pragma once
#include <string>

#include "error.hpp"
#include "tuning_env.hpp"

namespace qmmm {

// Instruction sets with hand-written kernels. Generic: what the compiler makes of plain C++ (target_clones).
enum class CpuIsa { Generic = 0, Avx2 = 1, Avx512 = 2 };

inline const char *cpu_isa_name(CpuIsa isa) {
    return isa == CpuIsa::Avx512 ? "avx512" : isa == CpuIsa::Avx2 ? "avx2" : "generic";
}

// Whether this CPU (and the OS: libgcc checks that XSAVE enables the registers) runs the set. Valgrind's
// emulated CPU reports no AVX-512, so memcheck runs take the AVX2 kernels.
inline bool cpu_isa_supported(CpuIsa isa) {
#if defined(__x86_64__) && defined(__GNUC__)
    switch (isa) {
        case CpuIsa::Avx512: return __builtin_cpu_supports("avx512f");
        case CpuIsa::Avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        default: return true;
    }
#else
    return isa == CpuIsa::Generic;
#endif
}

// The set to use: the one QMMM_CPU_ISA asks for (tuning_env.hpp; auto: the widest) if set, else the widest this CPU
// runs. Throws INVALID_ARG for another value and UNSUPPORTED for a set this CPU lacks (a forced choice must not
// silently become another: tests and benchmarks rely on it). Every CPU field calls it at create (field_factory.cpp),
// whatever kernels it ends up with.
inline CpuIsa cpu_isa_choose() {
    const CpuIsa widest = cpu_isa_supported(CpuIsa::Avx512) ? CpuIsa::Avx512
                          : cpu_isa_supported(CpuIsa::Avx2) ? CpuIsa::Avx2 : CpuIsa::Generic;
    const tuning::CpuIsaEnv env = tuning::cpu_isa();
    if (env.request == tuning::IsaRequest::Unset || env.request == tuning::IsaRequest::Auto) return widest;
    const CpuIsa want = env.request == tuning::IsaRequest::Avx512 ? CpuIsa::Avx512
                        : env.request == tuning::IsaRequest::Avx2 ? CpuIsa::Avx2 : CpuIsa::Generic;
    if (!cpu_isa_supported(want))
        throw Error(QMMM_ERR_UNSUPPORTED, "environment variable QMMM_CPU_ISA='" + env.value +
                                              "': this CPU does not run " + cpu_isa_name(want));
    return want;
}

// GCC 12 puts no vzeroupper at the returns of the AVX2/AVX-512 target clones of the CPU kernels, so the upper
// register halves stay dirty after them, and the caller's SSE code (a Fortran driver built for plain x86-64)
// then pays for it on every vector instruction: measured on the H100 host (Xeon), the VMC wavefunction ran
// 4.5x slower in every run that had used the CPU field (5.4 s against 1.2 s). Every CPU entry point that ran
// such code calls this before it returns to the caller (on the calling thread, compiled without AVX), and
// OpenMP workers call it before they go back to the pool (the caller's own parallel regions run on them).
inline void simd_clear_upper() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool avx = __builtin_cpu_supports("avx");
    if (avx) __asm__ volatile("vzeroupper" ::: "memory");
#endif
}

}  // namespace qmmm
