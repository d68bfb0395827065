// fuzz_tool_cli.cpp -- the command lines of qmmm-dcs and qmmm-rdf, run in-process: the tools' own main()
// (src_cxx/tools/dcs_main.cpp, rdf_main.cpp) is compiled into this target under another name
// (fuzz_tool_dcs_main.cpp, fuzz_tool_rdf_main.cpp: `#define main ...` and an #include; the tools are unchanged).
//
// The input becomes an argv (FuzzedDataProvider): the tool, its input file (small valid files of every format
// the tool reads, written once per process into a private temporary folder; malformed, empty and missing ones;
// the other tool's files), then up to 10 of the tool's real options (kDcsOptions, kRdfOptions below)
// with values drawn from edge cases: nan, inf, 1e308, 1e309, -1, 0, 4.9e-324, the documented limits and one
// step beyond, 2^31, 2^63, hex, empty, not a number; output paths in the temporary folder, relative, in a missing
// folder, under a regular file, a folder, /dev/full; --force; now and then an output file that exists before the
// call. qmmm-rdf's --png is left out (it runs gnuplot through popen).
// The tools' stdout and stderr go to memory during the call (the C streams and std::cout/cerr are swapped), the
// working directory is the temporary output folder (default output names land there).
//
// Properties (each command line):
//   - the exit status is 0 or a documented one (src_cxx/tools/BAD_INPUT.md: 2 usage, 3 NONFINITE, 5 NO_CUDA,
//     6 NO_DEVICE, 8 OUT_OF_MEMORY, 9 FILE_OPEN (also an existing output without --force), 10 FILE_FORMAT; and
//     qmmm-rdf's 12 UNSUPPORTED for --format xtc/trr in a build without GROMACS); 99 (internal error), 11
//     (qmmm-dcs: an atom on a lattice point, which is no error now) and anything else fail;
//   - a non-zero status comes with a "<tool>: error: " line on stderr;
//   - stdout holds text only (no NUL or control character but tab, CR, LF);
//   - a non-zero status leaves no output file (the output folder holds only what was there before the call, no
//     missing folder was created, no temporary file is left);
//   - a file that existed before the call is kept as it was unless the call succeeded with --force (outputs are
//     replaced only then; /dev/full stays a device);
//   - no crash, sanitizer report or leak (ASan's leak check; libFuzzer checks every input).
// Command lines whose work would not fit a fuzzing run (a map of more than 3e5 points that still fits this
// machine's memory, more than 1e5 RDF bins, more than 3e6 ion-placement steps) are skipped, not run.
// QMMM_FUZZ_TRACE=1 prints every command line, its exit status and the tool's stderr.
#include <dirent.h>
#include <fcntl.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_common.hpp"

int qmmm_dcs_main(int argc, char **argv);  // fuzz_tool_dcs_main.cpp
int qmmm_rdf_main(int argc, char **argv);  // fuzz_tool_rdf_main.cpp

namespace {

bool tracing() {
    static const bool on = std::getenv("QMMM_FUZZ_TRACE") != nullptr;
    return on;
}

// ---- the temporary folder: in/ (input files), out/ (the tools' working directory and outputs) ----

struct Fixture {
    const char *name, *text;
    double extent[3];  // extent of the atoms along each axis, Angstrom (qmmm-dcs's lattice size)
};

const Fixture kDcsFiles[] = {
    {"small.pqr",
     "REMARK   a small charged fragment\n"
     "ATOM      1  N   LYS A   1       1.000   2.000   3.000  0.9600 1.8240\n"
     "ATOM      2  HZ1 LYS A   1       1.500   2.700   3.100  0.3400 0.6000\n"
     "ATOM      3  O   GLU    2       -1.200   0.300   0.800 -0.8000 1.6612\n"
     "ATOM      4  C   GLU    2       -0.500   1.100   0.200  0.5500 1.9080\n"
     "END\n",
     {3, 3, 3}},
    {"small.xyz", "3\nwater with TIP3P charges (Angstrom, e)\nO   0.000  0.000  0.000  -0.834\n"
                  "H   0.957  0.000  0.000   0.417\nH  -0.240  0.927  0.000   0.417\n", 1.2},
    {"small.pdb",
     "ATOM      1  NZ  LYS A   1       1.000   2.000   3.000  1.00  0.00           N1+\n"
     "ATOM      2  OE1 GLU A   2      -1.200   0.300   0.800  1.00  0.00           O1-\n"
     "ATOM      3  CA  GLU A   2      -0.500   1.100   0.200  1.00  0.00           C  \n"
     "END\n",
     {3, 3, 3}},
    // One atom on the origin: with --origin 0 0 0 --counts it lies on a lattice point.
    {"origin.pqr", "ATOM      1  NA  ION     1       0.000   0.000   0.000  1.0000 1.0000\nEND\n", {0, 0, 0}},
    {"far.pqr", "ATOM      1  NA  ION     1       1e308   0.000   0.000  1.0000 1.0000\nEND\n", {0, 0, 0}},
    {"wide.xyz", "2\ntwo ions 1e5 Angstrom apart\nNa 0 0 0 1\nCl 100000 0 0 -1\n", {1e5, 0, 0}},
    {"tiny.xyz", "2\ntwo ions 1e-300 Angstrom apart\nNa 0 0 0 1e300\nCl 1e-300 0 0 -1e300\n", {0, 0, 0}},
    {"bad.pqr", "ATOM      1  N   LYS A   1       1.000   abc     3.000  0.9600 1.8240\nEND\n", {0, 0, 0}},
    {"nan.xyz", "1\nnan\nO nan 0 0 1\n", {0, 0, 0}},
    {"truncated.xyz", "3\nwater\nO 0 0 0 -0.8\n", {0, 0, 0}},
    {"empty.pqr", "", {0, 0, 0}},
    {"nocharge.pdb", "ATOM      1  NZ  LYS A   1       1.000   2.000   3.000  1.00  0.00           N\nEND\n", {0, 0, 0}},
};

const char kWaterXyz[] =
    "6\nLattice=\"12.4 0 0 0 12.4 0 0 0 12.4\" Properties=species:S:1:pos:R:3\n"
    "O 1.211 2.123 1.087\nH 0.934 1.173 1.228\nH 2.170 2.061 1.214\n"
    "O 6.211 7.123 5.087\nH 5.934 6.173 5.228\nH 7.170 7.061 5.214\n"
    "6\nLattice=\"12.4 0 0 0 12.4 0 0 0 12.4\" Properties=species:S:1:pos:R:3\n"
    "O 1.311 2.123 1.087\nH 1.034 1.173 1.228\nH 2.270 2.061 1.214\n"
    "O 6.111 7.123 5.087\nH 5.834 6.173 5.228\nH 7.070 7.061 5.214\n";

const Fixture kRdfFiles[] = {
    {"water.xyz", kWaterXyz, {}},
    {"plain.xyz", "3\nno box\nO 0 0 0\nH 1 0 0\nH 0 1 0\n3\nno box\nO 0 0 0.1\nH 1 0 0.1\nH 0 1 0.1\n", {}},
    {"water.pdb",
     "CRYST1   12.400   12.400   12.400  90.00  90.00  90.00 P 1           1\nMODEL        1\n"
     "ATOM      1  OW  SOL     1       1.211   2.123   1.087  1.00  0.00           O\n"
     "ATOM      2  HW1 SOL     1       0.934   1.173   1.228  1.00  0.00           H\n"
     "ATOM      3  HW2 SOL     1       2.170   2.061   1.214  1.00  0.00           H\n"
     "ATOM      4  OW  SOL     2       6.211   7.123   5.087  1.00  0.00           O\n"
     "ATOM      5  HW1 SOL     2       5.934   6.173   5.228  1.00  0.00           H\n"
     "ATOM      6  HW2 SOL     2       7.170   7.061   5.214  1.00  0.00           H\nENDMDL\nEND\n",
     {}},
    {"water.gro",
     "water t= 0.0\n6\n"
     "    1SOL     OW    1   0.1211   0.2123   0.1087\n    1SOL    HW1    2   0.0934   0.1173   0.1228\n"
     "    1SOL    HW2    3   0.2170   0.2061   0.1214\n    2SOL     OW    4   0.6211   0.7123   0.5087\n"
     "    2SOL    HW1    5   0.5934   0.6173   0.5228\n    2SOL    HW2    6   0.7170   0.7061   0.5214\n"
     "   1.24000   1.24000   1.24000\n",
     {}},
    {"water.lammpstrj",
     "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n4\nITEM: BOX BOUNDS pp pp pp\n0.0 12.4\n0.0 12.4\n0.0 12.4\n"
     "ITEM: ATOMS id mol type x y z\n1 1 1 1.2 2.1 1.0\n2 1 2 0.9 1.1 1.2\n3 2 1 6.2 7.1 5.0\n4 2 2 5.9 6.1 5.2\n",
     {}},
    {"tri.xyz",
     "3\nLattice=\"13 0 0 2.5 12.5 0 -1.5 2 12\" Properties=species:S:1:pos:R:3\nO 1.5 2.2 1.8\nO 7 7 7\nO 20 -3 4\n",
     {}},
    {"mismatch.xyz", "2\nLattice=\"10 0 0 0 10 0 0 0 10\"\nO 0 0 0\nO 1 1 1\n1\nLattice=\"10 0 0 0 10 0 0 0 10\"\nO 0 0 0\n", {}},
    {"hugebox.xyz", "2\nLattice=\"1e300 0 0 0 1e300 0 0 0 1e300\"\nO 0 0 0\nO 1 1 1\n", {}},
    {"tinybox.xyz", "2\nLattice=\"1e-300 0 0 0 1e-300 0 0 0 1e-300\"\nO 0 0 0\nO 1e-301 0 0\n", {}},
    {"nan.xyz", "2\nLattice=\"10 0 0 0 10 0 0 0 10\"\nO nan 0 0\nO 1 1 1\n", {}},
    {"garbage.dcd", "\x54\x00\x00\x00CORD this is not a dcd", {}},
    {"empty.xyz", "", {}},
};

struct Sandbox {
    std::string root, in, out, missing;
    int home = -1;  // the process's working directory, restored after every call
    Sandbox() {
        char tmpl[] = "/tmp/qmmm-fuzz-cli-XXXXXX";
        if (!mkdtemp(tmpl)) std::abort();
        root = tmpl, in = root + "/in", out = root + "/out", missing = root + "/missing";
        if (mkdir(in.c_str(), 0755) || mkdir(out.c_str(), 0755)) std::abort();
        for (const auto *set : {&kDcsFiles, &kRdfFiles})
            for (const Fixture &f : *set) write(in + "/" + f.name, f.text, std::strlen(f.text));
        // garbage.dcd holds a NUL: written with its length.
        static const char dcd[] = "\x54\x00\x00\x00CORD this is not a dcd";
        write(in + "/garbage.dcd", dcd, sizeof dcd - 1);
        home = open(".", O_RDONLY | O_DIRECTORY);
        if (home < 0) std::abort();
    }
    ~Sandbox() {  // the folder goes with the process; nothing is left in /tmp
        clear(out);
        for (const auto *set : {&kDcsFiles, &kRdfFiles})
            for (const Fixture &f : *set) unlink((in + "/" + f.name).c_str());
        rmdir(in.c_str()), rmdir(out.c_str()), rmdir(missing.c_str()), rmdir(root.c_str());
    }
    static void write(const std::string &path, const char *data, size_t n) {
        FILE *f = std::fopen(path.c_str(), "wb");
        if (!f || std::fwrite(data, 1, n, f) != n || std::fclose(f) != 0) std::abort();
    }
    // What a call left in out/ (names), and whether missing/ appeared.
    static std::vector<std::string> list(const std::string &dir) {
        std::vector<std::string> names;
        if (DIR *d = opendir(dir.c_str())) {
            while (const dirent *e = readdir(d))
                if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) names.push_back(e->d_name);
            closedir(d);
        }
        return names;
    }
    static void clear(const std::string &dir) {
        for (const auto &n : list(dir)) {
            const std::string p = dir + "/" + n;
            struct stat st;
            if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) clear(p), rmdir(p.c_str());
            else unlink(p.c_str());
        }
    }
};

Sandbox &box() {
    static Sandbox s;
    return s;
}

// ---- values ----

const char *const kNumbers[] = {
    "0",    "-0",      "1",       "-1",    "0.5",       "2",        "10",      "100",       "-100",   "100.0000001",
    "1e4",  "10000",   "10000.0001", "1e6", "1000001",  "-1e6",     "-1000001", "1e308",   "-1e308", "1e309",
    "1e-300", "4.9e-324", "1e-320", "nan", "-nan",      "NaN",      "inf",     "-inf",      "Infinity", "1e",
    "abc",  "",        "0x1p3",   " 5",    "5 ",        "2.5",      "298.15",  "12.4",      "6.2",    "6.19",
    "3",    "0.001",   "1e-5",    "1e300", "-1e-300",   "1,2",      "3 4",     "1e+06",     "999999.9999999", "-0.0"};
const char *const kInts[] = {"0",          "1",          "2",          "3",          "-1",        "-5",
                             "16",         "17",         "1023",       "1024",       "4096",      "4097",
                             "1000000",    "1000001",    "1073741824", "1073741825", "16777216",  "16777217",
                             "2147483647", "2147483648", "9223372036854775807",      "9223372036854775808",
                             "-9223372036854775808",     "2.5",        "0x10",       "010",       "abc",
                             "",           "1e3",        "5",          "200",        "100000",    "-0"};
const char *const kSelections[] = {"all",        "name O",     "name H",       "name OW",     "name HW1 HW2",
                                   "index 0-2",  "index -1",   "index 5-3",    "index -5-3",  "name XX",
                                   "resname SOL", "element O", "not name H",   "name O or name H", "",
                                   "index 0-9223372036854775807", "(name O", "index 99999999999999999999",
                                   "mol 1",      "type 1"};
const char *const kPairs[] = {"name O:name H", "all", "all:all", "a:b:c", ":", "name O:", "name OW:name OW",
                              "index 0:index 1", "name XX:all"};

enum Kind { NUM, INT, NUM3, INT3, ENUM, OUT, IN, SEL, PAIRS, BOX, DEVICES, FLAG, TEXT };
struct Option {
    const char *name;
    Kind kind;
    std::vector<const char *> values;  // ENUM
    const char *key;                   // the option, whatever its spelling (duplicates are skipped)
};

const std::vector<Option> kDcsOptions = {
    {"-o", OUT, {}, "o"}, {"--output", OUT, {}, "o"},
    {"--output-format", ENUM, {"dx", "cube", "xyz", "", "DX"}, "of"},
    {"--format", ENUM, {"pqr", "pdb", "xyz", "gro", ""}, "f"},
    {"-s", NUM, {}, "s"}, {"--spacing", NUM, {}, "s"}, {"-p", NUM, {}, "p"}, {"--padding", NUM, {}, "p"},
    {"--origin", NUM3, {}, "origin"}, {"--counts", INT3, {}, "counts"},
    {"-u", ENUM, {"kT", "V", "au", "K"}, "u"}, {"--units", ENUM, {"kT", "V", "au", ""}, "u"},
    {"-T", NUM, {}, "T"}, {"--temperature", NUM, {}, "T"},
    {"--backend", ENUM, {"auto", "cpu", "cuda", "gpu"}, "backend"},
    {"--precision", ENUM, {"single", "mixed", "double", "quad"}, "precision"},
    {"--devices", DEVICES, {}, "devices"}, {"--place-ions", INT, {}, "ions"}, {"--ion-charge", NUM, {}, "qion"},
    {"--ion-name", ENUM, {"NA", "CL", "", "XXXXXXXXXXXX", "K+"}, "ion-name"},
    {"--ion-min-dist-atoms", NUM, {}, "da"}, {"--ion-min-dist-ions", NUM, {}, "di"},
    {"--ions-out", OUT, {}, "ions-out"}, {"-q", FLAG, {}, "q"}, {"--quiet", FLAG, {}, "q"},
    {"--help", FLAG, {}, "help"}, {"--bogus", FLAG, {}, "bogus"}, {"-x", TEXT, {}, "x"},
};
const std::vector<Option> kRdfOptions = {
    {"--format", ENUM, {"auto", "xyz", "pdb", "gro", "lammps", "dcd", "xtc", "trr", "bogus"}, "f"},
    {"--top", IN, {}, "top"}, {"--sel1", SEL, {}, "sel1"}, {"--sel2", SEL, {}, "sel2"},
    {"--pairs", PAIRS, {}, "pairs"}, {"--rmin", NUM, {}, "rmin"}, {"--rmax", NUM, {}, "rmax"},
    {"--cut", NUM, {}, "cut"}, {"--bins", INT, {}, "bins"},
    {"--norm", ENUM, {"rdf", "number_density", "none", "bogus"}, "norm"},
    {"--first", INT, {}, "first"}, {"--last", INT, {}, "last"}, {"--stride", INT, {}, "stride"},
    {"--exclude-same-molecule", FLAG, {}, "excl"}, {"--box", BOX, {}, "box"},
    {"--backend", ENUM, {"auto", "cpu", "cuda", "gpu"}, "backend"}, {"--devices", DEVICES, {}, "devices"},
    {"--method", ENUM, {"auto", "brute", "cells", "x"}, "method"}, {"--threads", INT, {}, "threads"},
    {"-o", OUT, {}, "o"}, {"--output", OUT, {}, "o"}, {"--json", OUT, {}, "json"}, {"-q", FLAG, {}, "q"},
    {"--quiet", FLAG, {}, "q"}, {"--no-progress", FLAG, {}, "np"}, {"--read-only", FLAG, {}, "ro"},
    {"--help", FLAG, {}, "help"}, {"--bogus", FLAG, {}, "bogus"},
};

template <size_t N>
std::string pick(FuzzedDataProvider &in, const char *const (&list)[N]) {
    return list[in.ConsumeIntegralInRange<size_t>(0, N - 1)];
}

// Now and then a short string of the input's own (printable ASCII, so stdout stays comparable).
std::string text(FuzzedDataProvider &in) {
    std::string s = in.ConsumeRandomLengthString(12);
    for (char &c : s) c = static_cast<char>(' ' + static_cast<unsigned char>(c) % 95);
    return s;
}

std::string out_path(FuzzedDataProvider &in, bool dcs) {
    const Sandbox &b = box();
    const std::string names[] = {dcs ? "map.dx" : "rdf.txt", dcs ? "map.cube" : "rdf.json", "map.cub", "MAP.DX",
                                 "map.xyz", "noext", "ions.pdb", "out.dat"};
    switch (in.ConsumeIntegralInRange<int>(0, 9)) {
        case 0: return names[in.ConsumeIntegralInRange<int>(0, 7)];  // relative: the working directory, out/
        case 1: return b.missing + "/" + names[0];                     // a folder that does not exist
        case 2: return b.in + "/small.pqr/" + names[0];                // "under" a regular file
        case 3: return b.out;                                          // a folder
        case 4: return in.ConsumeBool() ? "/dev/full" : "";            // every write fails; empty
        default: return b.out + "/" + names[in.ConsumeIntegralInRange<int>(0, 7)];
    }
}

std::string in_path(FuzzedDataProvider &in, bool dcs) {
    const Sandbox &b = box();
    const int k = in.ConsumeIntegralInRange<int>(0, 31);
    if (k == 0) return b.missing + "/none.pqr";
    if (k == 1) return b.in;
    if (k == 2) return "";
    const bool own = k > 4;
    const bool d = own ? dcs : !dcs;
    if (d) return b.in + "/" + kDcsFiles[in.ConsumeIntegralInRange<size_t>(0, std::size(kDcsFiles) - 1)].name;
    return b.in + "/" + kRdfFiles[in.ConsumeIntegralInRange<size_t>(0, std::size(kRdfFiles) - 1)].name;
}

struct CommandLine {
    bool dcs = true;
    std::vector<std::string> args;
    std::map<std::string, std::vector<std::string>> values;  // by option key
    std::string input;
};

CommandLine make_command(FuzzedDataProvider &in) {
    CommandLine c;
    c.dcs = in.ConsumeBool();
    c.args.push_back(c.dcs ? "qmmm-dcs" : "qmmm-rdf");
    const bool positional_first = in.ConsumeBool();
    const bool has_input = in.ConsumeIntegralInRange<int>(0, 15) != 0;
    c.input = in_path(in, c.dcs);
    if (has_input && positional_first) c.args.push_back(c.input);
    const auto &table = c.dcs ? kDcsOptions : kRdfOptions;
    const int n = in.ConsumeIntegralInRange<int>(0, 10);
    for (int k = 0; k < n && in.remaining_bytes() > 0; ++k) {
        const Option &o = table[in.ConsumeIntegralInRange<size_t>(0, table.size() - 1)];
        if (c.values.count(o.key)) continue;
        std::vector<std::string> v;
        switch (o.kind) {
            case NUM: v.push_back(in.ConsumeIntegralInRange<int>(0, 15) ? pick(in, kNumbers) : text(in)); break;
            case INT: v.push_back(in.ConsumeIntegralInRange<int>(0, 15) ? pick(in, kInts) : text(in)); break;
            case NUM3:
            case INT3:
            case BOX: {
                int m = o.kind == BOX ? (in.ConsumeIntegralInRange<int>(0, 3) ? 3 * in.ConsumeIntegralInRange<int>(1, 3)
                                                                               : in.ConsumeIntegralInRange<int>(1, 10))
                                      : (in.ConsumeIntegralInRange<int>(0, 7) ? 3 : in.ConsumeIntegralInRange<int>(1, 4));
                for (int j = 0; j < m; ++j) v.push_back(o.kind == INT3 ? pick(in, kInts) : pick(in, kNumbers));
                break;
            }
            case ENUM: v.push_back(o.values[in.ConsumeIntegralInRange<size_t>(0, o.values.size() - 1)]); break;
            case OUT: v.push_back(out_path(in, c.dcs)); break;
            case IN: v.push_back(in_path(in, c.dcs)); break;
            case SEL: v.push_back(in.ConsumeIntegralInRange<int>(0, 7) ? pick(in, kSelections) : text(in)); break;
            case PAIRS: {
                const int m = in.ConsumeIntegralInRange<int>(1, 2);
                for (int j = 0; j < m; ++j) v.push_back(pick(in, kPairs));
                break;
            }
            case DEVICES: {
                const int m = in.ConsumeIntegralInRange<int>(1, 3);
                for (int j = 0; j < m; ++j) v.push_back(pick(in, kInts));
                static const char *const kLists[] = {"0,1", "0,,1", "17x", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"};
                if (in.ConsumeIntegralInRange<int>(0, 7) == 0) v = {pick(in, kLists)};
                break;
            }
            case FLAG: break;
            case TEXT: v.push_back(text(in)); break;
        }
        c.values[o.key] = v;
        // --name=value now and then (one value only), else separate words.
        if (v.size() == 1 && in.ConsumeIntegralInRange<int>(0, 7) == 0 && std::strncmp(o.name, "--", 2) == 0) {
            c.args.push_back(std::string(o.name) + "=" + v[0]);
        } else {
            c.args.push_back(o.name);
            for (auto &x : v) c.args.push_back(x);
        }
    }
    if (has_input && !positional_first) c.args.push_back(c.input);
    return c;
}

// ---- work that would not fit a fuzzing run ----

double number(const std::map<std::string, std::vector<std::string>> &v, const char *key, double fallback, size_t i = 0) {
    auto it = v.find(key);
    if (it == v.end() || it->second.size() <= i) return fallback;
    char *end = nullptr;
    const double x = std::strtod(it->second[i].c_str(), &end);
    return end == it->second[i].c_str() ? fallback : x;
}

bool too_much_work(const CommandLine &c) {
    const double phys = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
    if (c.dcs) {
        const double *extent = nullptr;
        for (const Fixture &f : kDcsFiles)
            if (c.input == box().in + "/" + f.name) extent = f.extent;
        if (!extent) return false;  // not a structure file: the tool stops before the lattice
        const double s = number(c.values, "s", 0.5), p = number(c.values, "p", 10.0);
        // The extent in the file's Angstrom or, with -u au, in bohr (1.89x): the larger lattice of the two.
        double points = 1;
        for (int d = 0; d < 3; ++d)
            points *= c.values.count("counts") ? std::fabs(number(c.values, "counts", 1, d))
                                               : std::ceil((extent[d] / 0.529177210903 + 2 * p) / s) + 1;
        const double ions = std::fabs(number(c.values, "ions", 0));
        // The tool's own size check (cli::check_fits_memory: 8 bytes a point, 17 with ions) refuses it at once.
        if (!(points * (ions > 0 ? 17 : 8) <= phys)) return false;
        return points > 3e5 || ions * points > 3e6;
    }
    const double bins = number(c.values, "bins", 200);
    return bins > 1e5 && bins <= (1 << 24);
}

// ---- running a tool in-process ----

struct Captured {
    int rc = -1;
    std::string out, err;
};

Captured run_tool(const CommandLine &c) {
    std::vector<std::string> args = c.args;  // the tools may not write into argv, but they get their own copy
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    char *obuf = nullptr, *ebuf = nullptr;
    size_t olen = 0, elen = 0;
    FILE *mo = open_memstream(&obuf, &olen), *me = open_memstream(&ebuf, &elen);
    if (!mo || !me) std::abort();
    std::ostringstream cout_text, cerr_text;
    std::fflush(stdout), std::fflush(stderr);
    FILE *const old_out = stdout, *const old_err = stderr;
    std::streambuf *const old_cout = std::cout.rdbuf(cout_text.rdbuf()), *const old_cerr = std::cerr.rdbuf(cerr_text.rdbuf());
    if (chdir(box().out.c_str()) != 0) std::abort();
    stdout = mo, stderr = me;
    Captured r;
    r.rc = c.dcs ? qmmm_dcs_main(static_cast<int>(args.size()), argv.data())
                 : qmmm_rdf_main(static_cast<int>(args.size()), argv.data());
    stdout = old_out, stderr = old_err;
    if (fchdir(box().home) != 0) std::abort();
    std::cout.rdbuf(old_cout), std::cerr.rdbuf(old_cerr);
    std::fclose(mo), std::fclose(me);
    r.out.assign(obuf, olen), r.err.assign(ebuf, elen);
    std::free(obuf), std::free(ebuf);
    r.out += cout_text.str(), r.err += cerr_text.str();
    return r;
}

std::string show(const CommandLine &c) {
    std::string s;
    for (const auto &a : c.args) {
        s += s.empty() ? "" : " ";
        s += "'" + a + "'";
    }
    return s;
}

// The exit statuses src_cxx/tools/BAD_INPUT.md documents for this command line.
bool documented(int rc, const CommandLine &c) {
    switch (rc) {
        case 0: case 2: case 3: case 5: case 6: case 8: case 9: case 10: return true;
        case 12: {  // qmmm-rdf: XTC or TRR in a build without GROMACS's library (UNSUPPORTED)
            auto f = c.values.find("f");
            return !c.dcs && f != c.values.end() && !f->second.empty() && (f->second[0] == "xtc" || f->second[0] == "trr");
        }
        default: return false;
    }
}

// Files that may exist before a call: the tools' default outputs and names out_path draws.
const char *const kExisting[] = {"potential.dx", "ions.pdb", "map.dx", "map.cube", "rdf.txt", "rdf.json", "noext",
                                 "out.dat"};
const char kExistingText[] = "existed before the call\n";

std::string read_all(const std::string &path) {
    std::string s;
    if (FILE *f = std::fopen(path.c_str(), "rb")) {
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
        std::fclose(f);
    }
    return s;
}

}  // namespace

// libFuzzer writes crash files relative to the working directory, which is out/ while a tool runs: make a relative
// -artifact_prefix (or none: "./") absolute before libFuzzer reads its flags (it calls this first).
// LeakSanitizer, this target only: libomp's worker threads (started when a qmmm-rdf command line's --threads runs
// the RDF CPU kernels with num_threads(n > 1)) each keep a 1,440-byte block that libFuzzer's leak check between
// inputs finds unreferenced while the thread lives (a 30 s run failed on it). Its allocation stack is malloc and one
// frame of libomp, libomp.so.5+0x22fe8: ___kmp_allocate_align of kmp_alloc.cpp (known by its assertion strings;
// Debian's libomp is stripped, so LSan can match its module only). The rule hides leaks whose stack passes through
// libomp in this target alone; the other targets (fuzz_capi, fuzz_magnitudes) keep the full check of the library.
extern "C" const char *__lsan_default_suppressions() { return "leak:libomp.so.5\n"; }

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
    fuzz::init_environment();
    static std::vector<std::string> store;
    static std::vector<char *> args;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) return 0;
    bool has_prefix = false;
    for (int i = 0; i < *argc; ++i) {
        std::string a = (*argv)[i];
        for (const char *flag : {"-artifact_prefix=", "-exact_artifact_path="}) {
            const size_t n = std::strlen(flag);
            if (a.compare(0, n, flag) == 0) {
                if (flag[1] == 'a') has_prefix = true;
                if (a.size() > n && a[n] != '/') a = a.substr(0, n) + cwd + "/" + a.substr(n);
            }
        }
        store.push_back(a);
    }
    if (!has_prefix) store.insert(store.begin() + 1, std::string("-artifact_prefix=") + cwd + "/");
    for (auto &s : store) args.push_back(s.data());
    args.push_back(nullptr);
    *argc = static_cast<int>(store.size());
    *argv = args.data();
    box();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    FuzzedDataProvider in(data, size);
    CommandLine c = make_command(in);
    if (too_much_work(c)) return 0;
    Sandbox &b = box();
    Sandbox::clear(b.out);
    // Now and then one output name exists already, and --force (both drawn after the command and out of the option
    // tables, so that older inputs keep their commands).
    if (in.ConsumeIntegralInRange<int>(0, 3) == 3) c.args.push_back("--force"), c.values["force"];
    const int existing_k = in.ConsumeIntegralInRange<int>(0, 2 * static_cast<int>(std::size(kExisting)));
    std::string existing;
    if (existing_k > 0 && existing_k <= static_cast<int>(std::size(kExisting))) {
        existing = kExisting[existing_k - 1];
        Sandbox::write(b.out + "/" + existing, kExistingText, std::strlen(kExistingText));
    }
    const bool force = c.values.count("force") > 0;
    if (tracing()) std::fprintf(stderr, "run: %s\n", show(c).c_str());
    const Captured r = run_tool(c);
    std::vector<std::string> left = Sandbox::list(b.out);
    struct stat st;
    const bool made_missing = stat(b.missing.c_str(), &st) == 0;
    const char *tool = c.dcs ? "qmmm-dcs" : "qmmm-rdf";
    if (tracing())
        std::fprintf(stderr, "%s -> %d, %zu output file(s)\n%s", show(c).c_str(), r.rc, left.size(), r.err.c_str());
    // The file that existed: still there, as it was, unless the call succeeded with --force.
    FUZZ_CHECK(lstat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "[outputs] /dev/full is no longer a device\n  command: %s",
               show(c).c_str());
    if (!existing.empty()) {
        const auto it = std::find(left.begin(), left.end(), existing);
        FUZZ_CHECK(it != left.end(), "[outputs] %s exited %d and %s, which existed before, is gone\n  command: %s", tool,
                   r.rc, existing.c_str(), show(c).c_str());
        if (!(force && r.rc == 0))
            FUZZ_CHECK(read_all(b.out + "/" + existing) == kExistingText,
                       "[outputs] %s exited %d%s and replaced %s, which existed before\n  command: %s\n  stderr: %.2000s",
                       tool, r.rc, force ? " with --force" : " without --force", existing.c_str(), show(c).c_str(),
                       r.err.c_str());
        left.erase(it);
    }
    std::string files;
    for (const auto &f : left) files += " " + f;
    FUZZ_CHECK(documented(r.rc, c), "[exit code] %s exited %d%s, not a documented status\n  command: %s\n  stderr: %.2000s",
               tool, r.rc, r.rc == 99 ? " (internal error)" : "", show(c).c_str(), r.err.c_str());
    for (size_t i = 0; i < r.out.size(); ++i) {
        const unsigned char ch = static_cast<unsigned char>(r.out[i]);
        FUZZ_CHECK(ch >= 0x20 || ch == '\n' || ch == '\t' || ch == '\r',
                   "[stdout] %s wrote byte 0x%02x at offset %zu of stdout\n  command: %s", tool, ch, i, show(c).c_str());
    }
    if (r.rc != 0) {
        const std::string tag = std::string(tool) + ": error: ";
        FUZZ_CHECK(r.err.find(tag) != std::string::npos,
                   "[message] %s exited %d without a '%s' line\n  command: %s\n  stderr: %.2000s", tool, r.rc,
                   tag.c_str(), show(c).c_str(), r.err.c_str());
        FUZZ_CHECK(left.empty() && !made_missing,
                   "[outputs] %s exited %d but left%s%s\n  command: %s\n  "
                   "stderr: %.2000s",
                   tool, r.rc, files.c_str(), made_missing ? " the folder missing/" : "", show(c).c_str(),
                   r.err.c_str());
    }
    Sandbox::clear(b.out);
    if (made_missing) Sandbox::clear(b.missing), rmdir(b.missing.c_str());
    return 0;
}
