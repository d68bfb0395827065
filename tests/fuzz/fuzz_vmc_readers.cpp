// fuzz_vmc_readers.cpp -- the VMC driver's two readers (Fortran, vmc_driver/vmc_molden.f90 and vmc_input.f90)
// through their C entry points (vmc_driver/vmc_fuzz_entry.f90).
// Input: one selector byte, then the file. Selector % 2: 0 the Molden reader, 1 the &vmc namelist reader.
// Invariants: a reader returns 0 (accepted, no message) or 1 (rejected, a message naming the file); it never
// stops the process (a Fortran STOP or runtime error ends it, which libFuzzer reports as a crash) and leaves
// no unit open (a leak would end in "too many open files" after some thousands of inputs).
#include <cstring>
#include <string>

#include "fuzz_common.hpp"

extern "C" {
int qmmm_vmc_fuzz_molden(const char *path);
int qmmm_vmc_fuzz_namelist(const char *path);
size_t qmmm_vmc_fuzz_message(char *buf, size_t n);
}

// gfortran's comparison tracing (tests/fuzz/CMakeLists.txt) also reports floating-point comparisons, which
// libFuzzer has no hooks for: they are dropped.
extern "C" void __sanitizer_cov_trace_cmpf(float, float) {}
extern "C" void __sanitizer_cov_trace_cmpd(double, double) {}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    fuzz::init_environment();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static fuzz::MemFile file("fuzz_vmc_readers");
    const bool molden = data[0] % 2 == 0;
    const std::string &path = file.write(data + 1, size - 1);
    const int r = molden ? qmmm_vmc_fuzz_molden(path.c_str()) : qmmm_vmc_fuzz_namelist(path.c_str());
    static char msg[4096];
    const size_t len = qmmm_vmc_fuzz_message(msg, sizeof msg);
    const char *reader = molden ? "molden" : "namelist";
    FUZZ_CHECK(r == 0 || r == 1, "%s reader returned %d", reader, r);
    if (r == 0) {
        FUZZ_CHECK(len == 0, "%s reader accepted the file with a message: %s", reader, msg);
    } else {
        FUZZ_CHECK(len > 0, "%s reader rejected the file without a message", reader);
        FUZZ_CHECK(std::strncmp(msg, path.c_str(), path.size()) == 0, "%s: message does not start with the file: %s",
                   reader, msg);
    }
    return 0;
}
