/* vmc_fuzz_smoke -- calls the readers' C entry points (vmc_fuzz_entry.f90) as a libFuzzer harness will:
 * good and bad files in turn, in one process. Arguments: pairs EXPECT PATH, EXPECT = ok | bad.
 * A bad file must return 1 with a message naming it; a good one 0; the process must survive every call.
 * Exit 0 only if all calls behaved. */
#include <stdio.h>
#include <string.h>

int qmmm_vmc_fuzz_molden(const char *path);
int qmmm_vmc_fuzz_namelist(const char *path);
size_t qmmm_vmc_fuzz_message(char *buf, size_t n);

int main(int argc, char **argv) {
    int failures = 0, calls = 0;
    char msg[2048];
    if (argc < 4 || (argc - 1) % 3 != 0) {
        fprintf(stderr, "usage: vmc_fuzz_smoke {molden|namelist} {ok|bad} PATH ...\n");
        return 2;
    }
    for (int i = 1; i + 2 < argc; i += 3) {
        const char *kind = argv[i], *expect = argv[i + 1], *path = argv[i + 2];
        int r = strcmp(kind, "molden") == 0 ? qmmm_vmc_fuzz_molden(path) : qmmm_vmc_fuzz_namelist(path);
        size_t len = qmmm_vmc_fuzz_message(msg, sizeof msg);
        int want_bad = strcmp(expect, "bad") == 0;
        int ok = want_bad ? (r == 1 && len > 0 && strstr(msg, path) != NULL) : (r == 0 && len == 0);
        printf("%s %-8s %-4s -> %d %s %s\n", ok ? "ok:    " : "FAILED:", kind, expect, r, path, msg);
        failures += !ok;
        ++calls;
    }
    /* the message buffer: truncated copies stay NUL-terminated, n = 0 writes nothing */
    char small[8] = "xxxxxxx";
    qmmm_vmc_fuzz_namelist("/nonexistent/input.nml");
    size_t full = qmmm_vmc_fuzz_message(small, sizeof small);
    if (!(full > sizeof small && small[7] == '\0' && strncmp(small, "/nonexi", 7) == 0)) {
        printf("FAILED: truncated message copy\n");
        ++failures;
    }
    if (qmmm_vmc_fuzz_message(NULL, 0) != full) {
        printf("FAILED: message length with n = 0\n");
        ++failures;
    }
    printf("vmc_fuzz_smoke: %d calls, %d failed\n", calls, failures);
    return failures == 0 ? 0 : 1;
}
