// cli_checks.hpp -- the number checks of every command-line program (qmmm-dcs, qmmm-rdf, bench/*): one set of
// CLI11 validators with short messages, one parse() that maps every usage error to exit code 2, and a check of
// derived sizes before a program allocates. Header only (CLI11 is too).
//
//   #include "cli_checks.hpp"
//   namespace cli = qmmm::cli;
//   app.add_option("-s,--spacing", h, "...")->check(cli::positive_up_to(1e4, "Angstrom"));  // (0, 1e4]
//   app.add_option("-p,--padding", p, "...")->check(cli::finite_in(0, 1e4, "Angstrom"));    // [0, 1e4]
//   app.add_option("--charge", q, "...")->check(cli::finite());                             // any finite
//   app.add_option("--bins", n, "...")->check(cli::int_in(1, 1 << 24));                     // integers
//   if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;   // 0 after --help, 2 on a usage error
//   ...
//   cli::check_fits_memory(points, sizeof(double), "the map");      // throws qmmm::Error(QMMM_ERR_OUT_OF_MEMORY)
//
// Validators apply to every element of a vector option (--origin x y z). Messages read
// "qmmm-dcs: error: --spacing: nan is not a finite number" and "--spacing: -1 is outside (0, 10000] Angstrom".
// Exit codes of the tools: 0 success, 2 usage error (bad option, value out of range, unknown output extension),
// otherwise the library status of the failing call (qmmm_accel.h: 3 NONFINITE, 8 OUT_OF_MEMORY, 9 FILE_OPEN,
// 10 FILE_FORMAT, ...), 99 for an unexpected internal error.
#pragma once
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "error.hpp"
#include "qmmm_accel.h"

namespace qmmm::cli {

constexpr int kUsageError = 2;  // the exit code of every command-line mistake (CLI11's own codes are 100+)

// %g: 1e-300, 0.5, 1e+06 -- never the 300-digit numbers of CLI::Range(double).
inline std::string num(double v, int digits = 6) {
    char b[40];
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    return b;
}

namespace detail {

inline std::string with_unit(std::string s, const std::string &unit) { return unit.empty() ? s : s + " " + unit; }

// "" when `s` is a finite number in the range (the open ends excluded), else the message.
inline std::string check_real(const std::string &s, double lo, double hi, bool open_lo, const std::string &unit) {
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return "'" + s + "' is not a number";
    if (!std::isfinite(v)) return s + " is not a finite number";
    if ((open_lo ? v <= lo : v < lo) || v > hi)
        return s + " is outside " + with_unit((open_lo ? "(" : "[") + num(lo) + ", " + num(hi) + "]", unit);
    return "";
}

}  // namespace detail

// Any finite number (not nan, not inf, not an overflow like 1e999).
inline CLI::Validator finite() {
    return CLI::Validator([](std::string &s) { return detail::check_real(s, -HUGE_VAL, HUGE_VAL, false, ""); },
                          "finite", "finite");
}

// A finite number in [lo, hi].
inline CLI::Validator finite_in(double lo, double hi, const std::string &unit = "") {
    return CLI::Validator([=](std::string &s) { return detail::check_real(s, lo, hi, false, unit); },
                          detail::with_unit("in [" + num(lo) + ", " + num(hi) + "]", unit), "finite_in");
}

// A finite number in (0, hi]: spacings, temperatures.
inline CLI::Validator positive_up_to(double hi, const std::string &unit = "") {
    return CLI::Validator([=](std::string &s) { return detail::check_real(s, 0, hi, true, unit); },
                          detail::with_unit("in (0, " + num(hi) + "]", unit), "positive_up_to");
}

namespace detail {
// "[1, 100]"; an end at the type's limit is left out: ">= 1" rather than "[1, 9223372036854775807]".
inline std::string int_range(long long lo, long long hi) {
    if (hi == LLONG_MAX) return lo == LLONG_MIN ? "any integer" : ">= " + std::to_string(lo);
    if (lo == LLONG_MIN) return "<= " + std::to_string(hi);
    return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}
}  // namespace detail

// An integer in [lo, hi], read as CLI11 reads integers (strtoll, base 0: 0x10 and 010 are 16 and 8).
// int_in(1, LLONG_MAX) reads "must be >= 1".
inline CLI::Validator int_in(long long lo, long long hi) {
    const std::string range = detail::int_range(lo, hi);
    const bool interval = range[0] == '[';
    return CLI::Validator(
        [=](std::string &s) -> std::string {
            char *end = nullptr;
            errno = 0;
            const long long v = std::strtoll(s.c_str(), &end, 0);
            if (s.empty() || end != s.c_str() + s.size()) return "'" + s + "' is not an integer";
            if (interval && (errno == ERANGE || v < lo || v > hi)) return s + " is outside " + range;
            if (errno == ERANGE) return s + " is too " + (v < 0 ? "small" : "large") + " for a 64-bit integer";
            if (v < lo || v > hi) return s + " is not " + range;
            return "";
        },
        interval ? "in " + range : range, "int_in");
}

// Parses the command line. Returns -1 when the program should go on; otherwise the exit code: 0 after --help
// (help printed to stdout), kUsageError after any mistake ("<app name>: error: <what>" on stderr).
inline int parse(CLI::App &app, int argc, const char *const *argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
        std::string name = app.get_name().empty() && argc > 0 ? argv[0] : app.get_name();
        name = name.substr(name.find_last_of('/') + 1);
        std::fprintf(stderr, "%s: error: %s\nRun with --help for more information.\n", name.c_str(), e.what());
        return kUsageError;
    }
    return -1;
}

// Throws qmmm::Error(QMMM_ERR_OUT_OF_MEMORY) when n_items * item_bytes is not finite or exceeds this machine's
// physical memory: a clear message before a vector of that size aborts the program or sends it into swap.
// Compute n_items in double (a product of counts that may overflow any integer); `hint` ends the message.
inline void check_fits_memory(double n_items, double item_bytes, const std::string &what, const std::string &hint = "") {
    const double bytes = n_items * item_bytes;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    const double phys = pages > 0 && page > 0 ? static_cast<double>(pages) * page : 1e18;
    if (!(bytes <= phys))  // also catches nan
        throw Error(QMMM_ERR_OUT_OF_MEMORY, what + " needs " + num(bytes / 1e9, 3) + " GB (" + num(n_items, 3) +
                                                " values); this machine has " + num(phys / 1e9, 3) + " GB" +
                                                (hint.empty() ? "" : "; " + hint));
}

}  // namespace qmmm::cli
