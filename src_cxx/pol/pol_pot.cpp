// pol_pot.cpp -- the potential-file (.pot) reader. The text is cut into lines first (blank lines and comment lines,
// whose first non-blank character is ! or #, are skipped), so that every error names its line; each section then
// reads its lines through one cursor. Counts are checked against the lines that follow, never used to reserve
// memory, so a huge count in a short file fails at the file's end, not in an allocation.
#include "pol_pot.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "error.hpp"
#include "qmmm_accel_core.h"

namespace qmmm {
namespace {

struct Line {
    int no;                              // 1-based line number in the file
    std::vector<std::string_view> f;     // its fields
};

class Cursor {
public:
    Cursor(const std::string &path, const std::string &text) : path_(path) {
        int no = 0;
        size_t pos = 0;
        while (pos < text.size()) {
            size_t e = text.find('\n', pos);
            if (e == std::string::npos) e = text.size();
            ++no;
            Line l{no, {}};
            size_t i = pos;
            while (i < e) {
                while (i < e && is_blank(text[i])) ++i;
                size_t b = i;
                while (i < e && !is_blank(text[i])) ++i;
                if (i > b) l.f.emplace_back(text.data() + b, i - b);
            }
            const bool comment = !l.f.empty() && (l.f[0][0] == '!' || l.f[0][0] == '#');
            if (!l.f.empty() && !comment) lines_.push_back(std::move(l));
            pos = e + 1;
        }
        last_no_ = no;
    }

    [[noreturn]] void fail(int no, const std::string &what, int status = QMMM_ERR_FILE_FORMAT) const {
        throw Error(status, path_ + ":" + std::to_string(no) + ": " + what);
    }
    bool at_end() const { return next_ >= lines_.size(); }
    const Line &peek() const { return lines_[next_]; }
    // The next line; `what` says what was expected when the file ends instead.
    const Line &take(const std::string &what) {
        if (at_end()) fail(last_no_, "file ends before " + what);
        return lines_[next_++];
    }

    long long integer(const Line &l, size_t k, const char *what) const {
        if (k >= l.f.size()) fail(l.no, std::string("missing ") + what);
        std::string_view g = l.f[k];
        if (g.size() > 1 && g[0] == '+') g.remove_prefix(1);
        long long v = 0;
        auto r = std::from_chars(g.data(), g.data() + g.size(), v);
        if (r.ec != std::errc() || r.ptr != g.data() + g.size())
            fail(l.no, std::string(what) + " '" + std::string(l.f[k]) + "' is not an integer");
        return v;
    }
    double number(const Line &l, size_t k, const char *what) const {
        if (k >= l.f.size()) fail(l.no, std::string("missing ") + what);
        std::string_view g = l.f[k];
        if (g.size() > 1 && g[0] == '+') g.remove_prefix(1);
        // Fortran writers may use D exponents (1.0D-03).
        std::string s(g);
        for (char &c : s)
            if (c == 'd' || c == 'D') c = 'e';
        double v = 0;
        auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        if (r.ec == std::errc::result_out_of_range) {
            // Below the smallest normal double: zero for every quantity of the file; above the largest: refused.
            v = std::strtod(s.c_str(), nullptr);
            if (std::fabs(v) < 1) return 0.0;
            fail(l.no, std::string(what) + " '" + std::string(l.f[k]) + "' is not finite (out of range)");
        }
        if (r.ec != std::errc() || r.ptr != s.data() + s.size())
            fail(l.no, std::string(what) + " '" + std::string(l.f[k]) + "' is not a number");
        if (!std::isfinite(v)) fail(l.no, std::string(what) + " '" + std::string(l.f[k]) + "' is not finite");
        return v;
    }
    void fields(const Line &l, size_t n, const char *what) const {
        if (l.f.size() != n)
            fail(l.no, strfmt("%s: %zu fields, expected %zu", what, l.f.size(), n));
    }

private:
    static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
    const std::string &path_;
    std::vector<Line> lines_;
    size_t next_ = 0;
    int last_no_ = 0;
};

bool keyword(std::string_view f, std::string_view k) {
    if (f.size() != k.size()) return false;
    for (size_t i = 0; i < f.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(f[i])) != k[i]) return false;
    return true;
}

bool is_section(const Line &l) {
    return l.f[0][0] == '@' || keyword(l.f[0], "EXCLISTS") || keyword(l.f[0], "ORDER");
}

// A count line: one integer in [0, limit]; *no gets its line number.
long long count_line(Cursor &c, const char *what, long long limit, int *no = nullptr) {
    const Line &l = c.take(std::string("the ") + what);
    if (no) *no = l.no;
    c.fields(l, 1, what);
    long long n = c.integer(l, 0, what);
    if (n < 0 || n > limit) c.fail(l.no, strfmt("%s %lld is out of range (0 .. %lld)", what, n, limit));
    return n;
}

// A site index (1-based in the file) in [1, n]; returns it from 0.
int64_t site_index(const Cursor &c, const Line &l, size_t k, int64_t n, const char *what) {
    long long i = c.integer(l, k, what);
    if (i < 1 || i > n) c.fail(l.no, strfmt("%s %lld is not a site (1 .. %lld)", what, i, static_cast<long long>(n)));
    return i - 1;
}

constexpr long long kMaxSites = 2147483647LL;

}  // namespace

PotSites parse_pot(const std::string &path, const std::string &text) {
    Cursor c(path, text);
    PotSites s;
    if (c.at_end()) c.fail(1, "empty file (no @COORDINATES section)");
    bool have_coords = false, have_mult = false, have_pol = false, have_excl = false;
    bool have_order[2] = {false, false};
    std::vector<char> listed;  // per site: already given in the current block
    while (!c.at_end()) {
        const Line &h = c.take("a section");
        const std::string_view k = h.f[0];
        if (keyword(k, "@COORDINATES")) {
            if (have_coords) c.fail(h.no, "a second @COORDINATES section");
            c.fields(h, 1, "@COORDINATES");
            have_coords = true;
            int count_no = 0;
            const long long n = count_line(c, "site count", kMaxSites, &count_no);
            if (n == 0) c.fail(count_no, "site count 0 (a potential needs at least one site)");
            const Line &u = c.take("the unit line (AA or AU)");
            c.fields(u, 1, "unit line");
            double unit = 0;
            if (keyword(u.f[0], "AA")) unit = 1.0 / QMMM_BOHR_ANGSTROM;
            else if (keyword(u.f[0], "AU")) unit = 1.0;
            else c.fail(u.no, "unit '" + std::string(u.f[0]) + "' is neither AA (Angstrom) nor AU (bohr)");
            for (long long i = 0; i < n; ++i) {
                const Line &l = c.take(strfmt("site %lld of %lld", i + 1, n));
                // label x y z, and PyFraME's optional site number after them
                if (l.f.size() != 4 && l.f.size() != 5)
                    c.fail(l.no, strfmt("site line has %zu fields, expected 'label x y z' (and an optional index)",
                                        l.f.size()));
                if (is_section(l)) c.fail(l.no, strfmt("section '%s' after %lld of %lld sites",
                                                       std::string(l.f[0]).c_str(), i, n));
                if (l.f.size() == 5 && c.integer(l, 4, "site number") != i + 1)
                    c.fail(l.no, strfmt("site number %s, expected %lld", std::string(l.f[4]).c_str(), i + 1));
                for (int d = 1; d <= 3; ++d) {
                    const double x = c.number(l, d, "coordinate") * unit;
                    if (!std::isfinite(x)) c.fail(l.no, "coordinate too large (not finite in bohr)");
                    s.xyz.push_back(x);
                }
            }
            s.n = n;
            s.charge.assign(n, 0.0);
            s.dipole.assign(3 * n, 0.0);
            s.alpha.assign(6 * n, 0.0);
            continue;
        }
        if (!have_coords) c.fail(h.no, "'" + std::string(k) + "' before @COORDINATES (the sites come first)");
        if (keyword(k, "@MULTIPOLES")) {
            if (have_mult) c.fail(h.no, "a second @MULTIPOLES section");
            c.fields(h, 1, "@MULTIPOLES");
            have_mult = true;
            // ORDER blocks until the next section
            while (!c.at_end() && keyword(c.peek().f[0], "ORDER")) {
                const Line &o = c.take("ORDER");
                c.fields(o, 2, "multipole ORDER line");
                const long long order = c.integer(o, 1, "multipole order");
                if (order < 0) c.fail(o.no, strfmt("multipole order %lld", order));
                if (order > 1)
                    c.fail(o.no, strfmt("multipoles of order %lld are not supported (charges and dipoles only)", order),
                           QMMM_ERR_UNSUPPORTED);
                if (have_order[order]) c.fail(o.no, strfmt("a second ORDER %lld block", order));
                have_order[order] = true;
                const size_t ncomp = order == 0 ? 1 : 3;
                const long long m = count_line(c, "multipole count", s.n);
                listed.assign(s.n, 0);
                for (long long j = 0; j < m; ++j) {
                    const Line &l = c.take(strfmt("multipole %lld of %lld", j + 1, m));
                    if (is_section(l)) c.fail(l.no, strfmt("section '%s' after %lld of %lld multipoles",
                                                           std::string(l.f[0]).c_str(), j, m));
                    c.fields(l, 1 + ncomp, order == 0 ? "charge line 'site q'" : "dipole line 'site x y z'");
                    const int64_t i = site_index(c, l, 0, s.n, "site");
                    if (listed[i]) c.fail(l.no, strfmt("site %lld listed twice", static_cast<long long>(i + 1)));
                    listed[i] = 1;
                    for (size_t d = 0; d < ncomp; ++d) {
                        const double v = c.number(l, 1 + d, order == 0 ? "charge" : "dipole component");
                        (order == 0 ? s.charge[i] : s.dipole[3 * i + d]) = v;
                    }
                }
            }
            continue;
        }
        if (keyword(k, "@POLARIZABILITIES")) {
            if (have_pol) c.fail(h.no, "a second @POLARIZABILITIES section");
            c.fields(h, 1, "@POLARIZABILITIES");
            have_pol = true;
            const Line &o = c.take("ORDER 1 1");
            if (!keyword(o.f[0], "ORDER") || o.f.size() != 3)
                c.fail(o.no, "expected 'ORDER 1 1' after @POLARIZABILITIES");
            const long long o1 = c.integer(o, 1, "polarizability order"), o2 = c.integer(o, 2, "polarizability order");
            if (o1 != 1 || o2 != 1)
                c.fail(o.no, strfmt("polarizabilities of order %lld %lld are not supported (1 1 only)", o1, o2),
                       QMMM_ERR_UNSUPPORTED);
            const long long m = count_line(c, "polarizability count", s.n);
            listed.assign(s.n, 0);
            for (long long j = 0; j < m; ++j) {
                const Line &l = c.take(strfmt("polarizability %lld of %lld", j + 1, m));
                if (is_section(l)) c.fail(l.no, strfmt("section '%s' after %lld of %lld polarizabilities",
                                                       std::string(l.f[0]).c_str(), j, m));
                c.fields(l, 7, "polarizability line 'site xx xy xz yy yz zz'");
                const int64_t i = site_index(c, l, 0, s.n, "site");
                if (listed[i]) c.fail(l.no, strfmt("site %lld listed twice", static_cast<long long>(i + 1)));
                listed[i] = 1;
                for (int d = 0; d < 6; ++d) s.alpha[6 * i + d] = c.number(l, 1 + d, "polarizability component");
            }
            continue;
        }
        if (keyword(k, "EXCLISTS") || keyword(k, "@EXCLISTS")) {
            if (have_excl) c.fail(h.no, "a second EXCLISTS section");
            c.fields(h, 1, "EXCLISTS");
            have_excl = true;
            const Line &cl = c.take("the EXCLISTS counts 'lists length'");
            c.fields(cl, 2, "EXCLISTS counts 'lists length'");
            const long long m = c.integer(cl, 0, "exclusion list count");
            const long long len = c.integer(cl, 1, "exclusion list length");
            if (m < 0 || m > s.n) c.fail(cl.no, strfmt("exclusion list count %lld is out of range (0 .. %lld)", m,
                                                       static_cast<long long>(s.n)));
            if (len < 1 || len > 4096)
                c.fail(cl.no, strfmt("exclusion list length %lld is out of range (1 .. 4096)", len));
            // The padded table holds n * (len - 1) indices: at most 2^24 (128 MB), far above a real file's need.
            if (static_cast<double>(s.n) * static_cast<double>(len - 1) > 16777216.0)
                c.fail(cl.no, strfmt("exclusion lists of length %lld for %lld sites are too large (n x (length - 1) "
                                     "above 2^24)", len, static_cast<long long>(s.n)));
            s.excl_width = static_cast<int32_t>(len - 1);
            s.excl.assign(static_cast<size_t>(s.n) * s.excl_width, -1);
            listed.assign(s.n, 0);
            for (long long j = 0; j < m; ++j) {
                const Line &l = c.take(strfmt("exclusion list %lld of %lld", j + 1, m));
                if (is_section(l)) c.fail(l.no, strfmt("section '%s' after %lld of %lld exclusion lists",
                                                       std::string(l.f[0]).c_str(), j, m));
                if (l.f.size() > static_cast<size_t>(len))
                    c.fail(l.no, strfmt("exclusion list has %zu fields, more than the length %lld", l.f.size(), len));
                const int64_t i = site_index(c, l, 0, s.n, "site");
                if (listed[i]) c.fail(l.no, strfmt("site %lld has two exclusion lists", static_cast<long long>(i + 1)));
                listed[i] = 1;
                for (size_t e = 1; e < l.f.size(); ++e) {
                    const long long x = c.integer(l, e, "excluded site");
                    if (x == 0) continue;  // padding
                    if (x < 0 || x > s.n)
                        c.fail(l.no, strfmt("excluded site %lld is not a site (1 .. %lld, 0 pads)", x,
                                            static_cast<long long>(s.n)));
                    s.excl[static_cast<size_t>(i) * s.excl_width + (e - 1)] = x - 1;
                }
            }
            continue;
        }
        if (keyword(k, "ORDER"))
            c.fail(h.no, "ORDER outside @MULTIPOLES or @POLARIZABILITIES (or a second ORDER after polarizabilities)");
        c.fail(h.no, "unknown section '" + std::string(k) + "' (expected @COORDINATES, @MULTIPOLES, "
                     "@POLARIZABILITIES or EXCLISTS)");
    }
    if (!have_coords) c.fail(1, "no @COORDINATES section");
    return s;
}

PotSites read_pot(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(QMMM_ERR_FILE_OPEN, path + ": cannot open (" + std::strerror(errno) + ")");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error(QMMM_ERR_FILE_OPEN, path + ": read failed");
    return parse_pot(path, ss.str());
}

}  // namespace qmmm
