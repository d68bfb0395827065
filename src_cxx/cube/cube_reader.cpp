// cube_reader.cpp -- Gaussian cube parsing. The whole file is read through zlib (which passes plain
// files through unchanged), then tokenised by line so every error can name its line.
#include "cube_reader.hpp"

#include <zlib.h>

#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>

#include "error.hpp"
#include "host_memory.hpp"

namespace qmmm {
namespace {

std::string slurp(const std::string &path) {
    gzFile g = gzopen(path.c_str(), "rb");
    if (!g) throw Error(QMMM_ERR_FILE_OPEN, path + ": cannot open (" + std::strerror(errno) + ")");
    std::unique_ptr<gzFile_s, int (*)(gzFile)> guard(g, gzclose);
    std::string text;
    std::array<char, 1 << 16> buf;
    for (;;) {
        int n = gzread(g, buf.data(), static_cast<unsigned>(buf.size()));
        if (n < 0) {
            int err = 0;
            const char *msg = gzerror(g, &err);
            throw Error(err == Z_ERRNO ? QMMM_ERR_FILE_OPEN : QMMM_ERR_FILE_FORMAT,
                        path + ": read failed (" + (err == Z_ERRNO ? std::strerror(errno) : msg) + ")");
        }
        if (n == 0) break;
        text.append(buf.data(), static_cast<size_t>(n));
    }
    return text;
}

// Walks the text line by line and field by field, remembering the line for messages.
class Scanner {
public:
    Scanner(const std::string &path, const std::string &text) : path_(path), s_(text) {}

    [[noreturn]] void fail(const std::string &what, int status = QMMM_ERR_FILE_FORMAT) const {
        throw Error(status, path_ + ":" + std::to_string(line_) + ": " + what);
    }
    // Moves to the start of the next line; false at the end of the text.
    bool next_line() {
        if (pos_ >= s_.size()) return false;
        size_t e = s_.find('\n', pos_);
        pos_ = e == std::string::npos ? s_.size() : e + 1;
        ++line_;
        return pos_ < s_.size();
    }
    int line() const { return line_; }
    bool at_end() const { return pos_ >= s_.size(); }
    // Next field on the current line, or empty at the end of the line.
    std::string_view field() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
        size_t b = pos_;
        while (pos_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
        return std::string_view(s_).substr(b, pos_ - b);
    }
    double number(const char *what) {
        std::string_view f = field();
        if (f.empty()) fail(std::string("missing ") + what);
        return parse(f, what);
    }
    long long integer(const char *what) {
        std::string_view f = field();
        if (f.empty()) fail(std::string("missing ") + what);
        std::string_view g = f.size() > 1 && f[0] == '+' ? f.substr(1) : f;
        long long v = 0;
        auto r = std::from_chars(g.data(), g.data() + g.size(), v);
        if (r.ec != std::errc() || r.ptr != g.data() + g.size())
            fail(std::string(what) + " '" + std::string(f) + "' is not an integer");
        return v;
    }
    double parse(std::string_view f, const char *what) const {
        std::string_view g = f.size() > 1 && f[0] == '+' ? f.substr(1) : f;
        double v = 0;
        auto r = std::from_chars(g.data(), g.data() + g.size(), v);
        if (r.ec == std::errc::result_out_of_range) {
            // Denormal-range values (e.g. 1E-320) are zero for a density; anything larger is an overflow.
            std::string tmp(g);
            v = std::strtod(tmp.c_str(), nullptr);
            if (std::isfinite(v)) return v;
        }
        if (r.ec != std::errc() || r.ptr != g.data() + g.size())
            fail(std::string(what) + " '" + std::string(f) + "' is not a number");
        if (!std::isfinite(v)) fail(std::string(what) + " '" + std::string(f) + "' is not finite");
        return v;
    }
    void expect_line_end(const char *where) {
        std::string_view f = field();
        if (!f.empty()) fail(std::string("unexpected field '") + std::string(f) + "' after " + where);
    }

private:
    const std::string &path_;
    const std::string &s_;
    size_t pos_ = 0;
    int line_ = 1;
};

}  // namespace

CubeCells read_cube(const std::string &path, double threshold) {
    const std::string text = slurp(path);
    Scanner sc(path, text);
    if (text.empty()) sc.fail("empty file");
    // Lines 1-2: free comments.
    if (!sc.next_line() || !sc.next_line()) sc.fail("file ends inside the two comment lines");

    // Line 3: atom count, origin, optional values-per-point.
    long long natom = sc.integer("atom count");
    double origin[3];
    for (double &o : origin) o = sc.number("origin coordinate");
    if (std::string_view nval = sc.field(); !nval.empty()) {
        double nv = sc.parse(nval, "values per point");
        if (nv != 1) sc.fail("cubes with " + std::string(nval) + " values per point are not supported",
                             QMMM_ERR_UNSUPPORTED);
        sc.expect_line_end("values per point");
    }
    if (natom == LLONG_MIN) sc.fail("atom count " + std::to_string(natom) + " is out of range");  // no llabs for it
    const bool has_dset = natom < 0;
    natom = std::llabs(natom);

    // Lines 4-6: voxel counts and axes; the sign of the counts is the length unit.
    long long n[3];
    double axis[3][3];
    int sign = 0;
    for (int a = 0; a < 3; ++a) {
        if (!sc.next_line()) sc.fail("file ends before voxel axis " + std::to_string(a + 1));
        n[a] = sc.integer("voxel count");
        if (n[a] == 0) sc.fail("voxel count of axis " + std::to_string(a + 1) + " is 0 (empty grid)");
        if (n[a] < -(1LL << 40) || n[a] > (1LL << 40)) sc.fail("grid too large");  // before llabs and products
        int s = n[a] > 0 ? 1 : -1;
        if (sign != 0 && s != sign) sc.fail("voxel counts mix signs (bohr and Angstrom) across axes");
        sign = s;
        n[a] = std::llabs(n[a]);
        for (double &x : axis[a]) x = sc.number("voxel axis component");
        sc.expect_line_end("the voxel axis");
    }
    const double unit = sign < 0 ? 1.0 / kBohrAngstrom : 1.0;
    for (double &o : origin) o *= unit;
    for (auto &ax : axis)
        for (double &x : ax) x *= unit;
    // Finite numbers can still overflow: in Angstrom-to-bohr conversion, the volume, grid points, populations.
    for (int d = 0; d < 3; ++d)
        if (!std::isfinite(origin[d]) || !std::isfinite(axis[0][d]) || !std::isfinite(axis[1][d]) ||
            !std::isfinite(axis[2][d]))
            sc.fail("origin or voxel axes too large (not finite in bohr)");
    const double det = axis[0][0] * (axis[1][1] * axis[2][2] - axis[1][2] * axis[2][1]) -
                       axis[0][1] * (axis[1][0] * axis[2][2] - axis[1][2] * axis[2][0]) +
                       axis[0][2] * (axis[1][0] * axis[2][1] - axis[1][1] * axis[2][0]);
    CubeCells c;
    c.cell_volume = std::fabs(det);
    if (!(c.cell_volume > 0)) sc.fail("voxel axes are linearly dependent (cell volume 0)");
    if (!std::isfinite(c.cell_volume)) sc.fail("voxel axes too long (cell volume not finite)");
    if (n[0] > (1LL << 40) / n[1] / n[2]) sc.fail("grid too large");
    c.grid_points = n[0] * n[1] * n[2];
    // What the cells may take, said before any is read: 32 bytes a kept cell (centre and population), at most every
    // grid point; a grid beyond this machine's memory is refused here, not after minutes of reading and swapping.
    const double phys = physical_memory_bytes();
    const double need = 32.0 * static_cast<double>(c.grid_points);
    if (need > phys)
        sc.fail(strfmt("its %lld grid points may keep up to %.3g GB of cells (32 bytes each) and this machine has "
                       "%.3g GB; raise the threshold or cut the grid",
                       c.grid_points, need / 1e9, phys / 1e9),
                QMMM_ERR_OUT_OF_MEMORY);

    // Atom lines: Z, nuclear charge, x, y, z.
    for (long long i = 0; i < natom; ++i) {
        if (!sc.next_line()) sc.fail("file ends after " + std::to_string(i) + " of " + std::to_string(natom) + " atoms");
        double z = static_cast<double>(sc.integer("atomic number"));
        double charge = sc.number("nuclear charge");
        double r[3];
        for (double &x : r) x = sc.number("atom coordinate") * unit;
        sc.expect_line_end("the atom coordinates");
        if (!std::isfinite(r[0]) || !std::isfinite(r[1]) || !std::isfinite(r[2]))
            sc.fail("atom coordinate too large (not finite in bohr)");
        c.nuc_z.push_back(charge != 0 ? charge : z);
        c.nuc_xyz.insert(c.nuc_xyz.end(), r, r + 3);
    }
    if (!sc.next_line()) sc.fail("file ends before the grid values (expected " + std::to_string(c.grid_points) + ")");
    if (has_dset) {
        long long m = sc.integer("DSET_IDS count");
        if (m != 1) sc.fail("DSET_IDS lists " + std::to_string(m) + " data sets; only 1 is supported", QMMM_ERR_UNSUPPORTED);
        sc.integer("DSET_IDS identifier");
        sc.expect_line_end("DSET_IDS");
        if (!sc.next_line()) sc.fail("file ends before the grid values");
    }

    // Values, i slowest and k fastest, any number per line.
    long long idx = 0;
    for (long long i = 0; i < n[0]; ++i)
        for (long long j = 0; j < n[1]; ++j)
            for (long long k = 0; k < n[2]; ++k, ++idx) {
                std::string_view f = sc.field();
                while (f.empty()) {
                    if (!sc.next_line())
                        sc.fail("truncated: " + std::to_string(idx) + " of " + std::to_string(c.grid_points) +
                                " grid values present (counts " + std::to_string(n[0]) + " x " + std::to_string(n[1]) +
                                " x " + std::to_string(n[2]) + ")");
                    f = sc.field();
                }
                const double rho = sc.parse(f, "grid value");
                if (threshold > 0 && rho < threshold) continue;  // <= 0 keeps every point, negative ones too
                const double fi = static_cast<double>(i), fj = static_cast<double>(j), fk = static_cast<double>(k);
                for (int d = 0; d < 3; ++d)
                    c.cell_xyz.push_back(origin[d] + fi * axis[0][d] + fj * axis[1][d] + fk * axis[2][d]);
                c.cell_q.push_back(rho * c.cell_volume);
                if (!std::isfinite(c.cell_q.back()) || !std::isfinite(c.cell_xyz.end()[-1]) ||
                    !std::isfinite(c.cell_xyz.end()[-2]) || !std::isfinite(c.cell_xyz.end()[-3]))
                    sc.fail("grid point " + std::to_string(idx) + ": position or rho * dV too large (not finite)");
            }
    // Nothing but white space may follow.
    for (;;) {
        std::string_view f = sc.field();
        if (!f.empty())
            sc.fail("wrong counts: value '" + std::string(f) + "' beyond the " + std::to_string(c.grid_points) +
                    " grid values the header declares");
        if (!sc.next_line()) break;
    }
    return c;
}

}  // namespace qmmm
