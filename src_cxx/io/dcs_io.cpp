// dcs_io.cpp -- see dcs_io.hpp.
#include "dcs_io.hpp"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace dcsio {
namespace {

[[noreturn]] void bad(const std::string &path, int64_t line, const std::string &what) {
    throw qmmm::Error(QMMM_ERR_FILE_FORMAT, path + ":" + std::to_string(line) + ": " + what);
}

std::ifstream open_in(const std::string &path) {
    std::ifstream f(path);
    if (!f) throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": cannot open for reading (" + std::strerror(errno) + ")");
    return f;
}

std::string lower(std::string s) {
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string trim(const std::string &s) {
    const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool parse_double(const std::string &s, double *v) {
    const std::string t = trim(s);
    if (t.empty()) return false;
    char *end = nullptr;
    *v = std::strtod(t.c_str(), &end);
    return end == t.c_str() + t.size() && std::isfinite(*v);
}

int element_z(std::string e) {
    static const char *table[] = {"H", "HE", "LI", "BE", "B", "C", "N", "O", "F", "NE", "NA", "MG", "AL", "SI", "P",
                                  "S", "CL", "AR", "K", "CA"};
    e = trim(e);
    for (auto &c : e) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (int i = 0; i < 20; ++i)
        if (e == table[i]) return i + 1;
    if (e == "FE") return 26;
    if (e == "ZN") return 30;
    if (e == "BR") return 35;
    if (e == "I") return 53;
    return 0;
}

// Atom name to element: the first letter that is not a digit (PDB convention for names without element).
int name_z(const std::string &name) {
    for (char c : name)
        if (std::isalpha(static_cast<unsigned char>(c))) return element_z(std::string(1, c));
    return 0;
}

std::vector<std::string> split(const std::string &s) {
    std::istringstream is(s);
    std::vector<std::string> t;
    for (std::string w; is >> w;) t.push_back(w);
    return t;
}

bool is_atom_record(const std::string &line) { return line.rfind("ATOM", 0) == 0 || line.rfind("HETATM", 0) == 0; }

// PQR (pdb2pqr): whitespace-separated; the last five fields are x y z charge radius (chain optional).
Molecule read_pqr(const std::string &path) {
    auto f = open_in(path);
    Molecule m;
    std::string line;
    for (int64_t ln = 1; std::getline(f, line); ++ln) {
        if (!is_atom_record(line)) continue;
        const auto t = split(line);
        if (t.size() < 9) bad(path, ln, "PQR atom record has " + std::to_string(t.size()) + " fields, need at least 9");
        static const char *kField[5] = {"x", "y", "z", "charge", "radius"};
        double v[5];
        for (int i = 0; i < 5; ++i)
            if (!parse_double(t[t.size() - 5 + i], &v[i]))
                bad(path, ln, "PQR " + std::string(kField[i]) + " '" + t[t.size() - 5 + i] + "' is not a finite number");
        m.xyz.insert(m.xyz.end(), {v[0], v[1], v[2]});
        m.q.push_back(v[3]);
        m.name.push_back(t[2]);
        m.z.push_back(name_z(t[2]));
    }
    return m;
}

// PDB: fixed columns; x 31-38, y 39-46, z 47-54, element 77-78, formal charge 79-80 ("1-", "2+").
Molecule read_pdb(const std::string &path) {
    auto f = open_in(path);
    Molecule m;
    std::string line;
    bool any_charge = false;
    for (int64_t ln = 1; std::getline(f, line); ++ln) {
        if (!is_atom_record(line)) continue;
        if (line.size() < 54) bad(path, ln, "PDB atom record shorter than 54 columns (no coordinates)");
        double v[3];
        for (int d = 0; d < 3; ++d)
            if (!parse_double(line.substr(30 + 8 * d, 8), &v[d]))
                bad(path, ln, std::string("PDB ") + "xyz"[d] + " (columns " + std::to_string(31 + 8 * d) + "-" +
                                  std::to_string(38 + 8 * d) + ") is not a number: '" + line.substr(30 + 8 * d, 8) + "'");
        double q = 0;
        if (line.size() >= 80) {
            const std::string c = trim(line.substr(78, 2));
            if (!c.empty()) {
                if (c.size() != 2 || !std::isdigit(static_cast<unsigned char>(c[0])) || (c[1] != '+' && c[1] != '-'))
                    bad(path, ln, "PDB charge (columns 79-80) '" + c + "' is not like 1+ or 2-");
                q = (c[0] - '0') * (c[1] == '-' ? -1.0 : 1.0);
                any_charge = true;
            }
        }
        const std::string name = trim(line.substr(12, 4));
        int z = line.size() >= 78 ? element_z(line.substr(76, 2)) : 0;
        m.xyz.insert(m.xyz.end(), {v[0], v[1], v[2]});
        m.q.push_back(q);
        m.name.push_back(name);
        m.z.push_back(z ? z : name_z(name));
    }
    if (!m.q.empty() && !any_charge)
        throw qmmm::Error(QMMM_ERR_FILE_FORMAT, path + ": no atom has a charge in columns 79-80; the potential would be "
                                                       "zero (use a PQR file for partial charges)");
    return m;
}

// XYZ with charges: count, comment, then "element x y z charge" lines.
Molecule read_xyz(const std::string &path) {
    auto f = open_in(path);
    Molecule m;
    std::string line;
    if (!std::getline(f, line)) bad(path, 1, "empty file (expected the atom count)");
    int64_t n = 0;
    {
        const std::string t = trim(line);
        auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
        if (ec != std::errc() || p != t.data() + t.size() || n < 0) bad(path, 1, "atom count '" + t + "' is not a count");
    }
    std::getline(f, line);
    for (int64_t a = 0; a < n; ++a) {
        const int64_t ln = a + 3;
        if (!std::getline(f, line)) bad(path, ln, "file ends after " + std::to_string(a) + " of " + std::to_string(n) + " atoms");
        const auto t = split(line);
        if (t.size() < 5) bad(path, ln, "XYZ line needs element x y z charge, has " + std::to_string(t.size()) + " fields");
        double v[4];
        for (int i = 0; i < 4; ++i)
            if (!parse_double(t[1 + i], &v[i])) bad(path, ln, "'" + t[1 + i] + "' is not a finite number");
        m.xyz.insert(m.xyz.end(), {v[0], v[1], v[2]});
        m.q.push_back(v[3]);
        m.name.push_back(t[0]);
        m.z.push_back(element_z(t[0]));
    }
    return m;
}

std::unique_ptr<FILE, int (*)(FILE *)> open_out(const std::string &path) {
    FILE *f = std::fopen(path.c_str(), "wb");
    if (!f) throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": cannot open for writing (" + std::strerror(errno) + ")");
    return {f, &std::fclose};
}

void put(FILE *f, const std::string &s, const std::string &path) {
    if (std::fwrite(s.data(), 1, s.size(), f) != s.size())
        throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": write failed (" + std::strerror(errno) + ")");
}

void append_number(std::string &s, double v) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, 6);
    s.append(buf, r.ptr);
}

// Values in "x slowest, z fastest" order, `per_line` a line, one block per x index formatted in parallel.
void write_z_fastest(FILE *f, const Grid &g, int per_line, const std::string &path) {
    const int64_t nx = g.count[0], ny = g.count[1], nz = g.count[2];
    const int64_t block = 64;
    for (int64_t i0 = 0; i0 < nx; i0 += block) {
        const int64_t m = std::min(block, nx - i0);
        std::vector<std::string> out(m);
#pragma omp parallel for schedule(dynamic)
        for (int64_t b = 0; b < m; ++b) {
            std::string &s = out[b];
            s.reserve(static_cast<size_t>(ny * nz * 14));
            const int64_t i = i0 + b;
            int64_t col = 0;
            for (int64_t j = 0; j < ny; ++j)
                for (int64_t k = 0; k < nz; ++k) {
                    append_number(s, g.values[i + nx * (j + ny * k)]);
                    if (++col == per_line) s += '\n', col = 0;
                    else s += ' ';
                }
            if (col) s += '\n';
        }
        for (auto &s : out) put(f, s, path);
    }
}

}  // namespace

Molecule read_structure(const std::string &path, const std::string &format) {
    std::string fmt = lower(format);
    if (fmt.empty()) {
        const auto dot = path.find_last_of('.');
        fmt = dot == std::string::npos ? "" : lower(path.substr(dot + 1));
        if (fmt == "ent") fmt = "pdb";
    }
    Molecule m;
    if (fmt == "pqr") m = read_pqr(path);
    else if (fmt == "pdb") m = read_pdb(path);
    else if (fmt == "xyz") m = read_xyz(path);
    else
        throw qmmm::Error(QMMM_ERR_INVALID_ARG, path + ": unknown structure format '" + fmt + "' (pqr, pdb, xyz; or set --format)");
    if (m.n() == 0) throw qmmm::Error(QMMM_ERR_FILE_FORMAT, path + ": no atoms (no ATOM/HETATM records or zero count)");
    return m;
}

MapFormat map_format(const std::string &path, const std::string &format) {
    const std::string f = lower(format);
    if (f == "dx") return MapFormat::dx;
    if (f == "cube") return MapFormat::cube;
    if (!f.empty()) throw qmmm::Error(QMMM_ERR_INVALID_ARG, "map format '" + format + "' is not dx or cube");
    const auto slash = path.find_last_of('/'), dot = path.find_last_of('.');
    const std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : lower(path.substr(dot));
    if (ext == ".dx") return MapFormat::dx;
    if (ext == ".cube" || ext == ".cub") return MapFormat::cube;
    throw qmmm::Error(QMMM_ERR_INVALID_ARG, path + ": " + (ext.empty() ? "no file extension" : "unknown map extension '" + ext + "'") +
                                                "; use .dx (OpenDX) or .cube/.cub (Gaussian cube), or --output-format dx|cube");
}

void write_dx(const std::string &path, const Grid &g, const std::string &comment) {
    auto f = open_out(path);
    write_dx(f.get(), path, g, comment);
}

void write_dx(FILE *f, const std::string &path, const Grid &g, const std::string &comment) {
    char buf[512];
    std::string h = "# " + comment + "\n";
    std::snprintf(buf, sizeof buf,
                  "object 1 class gridpositions counts %lld %lld %lld\norigin %.10e %.10e %.10e\n"
                  "delta %.10e 0 0\ndelta 0 %.10e 0\ndelta 0 0 %.10e\n"
                  "object 2 class gridconnections counts %lld %lld %lld\n"
                  "object 3 class array type double rank 0 items %lld data follows\n",
                  (long long)g.count[0], (long long)g.count[1], (long long)g.count[2], g.origin[0], g.origin[1],
                  g.origin[2], g.spacing[0], g.spacing[1], g.spacing[2], (long long)g.count[0], (long long)g.count[1],
                  (long long)g.count[2], (long long)(g.count[0] * g.count[1] * g.count[2]));
    put(f, h + buf, path);
    write_z_fastest(f, g, 3, path);
    put(f,
        "attribute \"dep\" string \"positions\"\nobject \"regular positions regular connections\" class field\n"
        "component \"positions\" value 1\ncomponent \"connections\" value 2\ncomponent \"data\" value 3\n",
        path);
    if (std::fflush(f) != 0) throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": write failed");
}

Grid read_dx(const std::string &path) {
    auto f = open_in(path);
    Grid g;
    std::string line;
    int64_t ln = 0, items = -1;
    int deltas = 0;
    bool counts = false, origin = false;
    while (items < 0 && std::getline(f, line)) {
        ++ln;
        if (line.empty() || line[0] == '#') continue;
        const auto t = split(line);
        if (t.size() >= 8 && t[0] == "object" && t[3] == "gridpositions") {
            for (int d = 0; d < 3; ++d) g.count[d] = std::atoll(t[5 + d].c_str());
            counts = true;
        } else if (!t.empty() && t[0] == "origin") {
            if (t.size() != 4) bad(path, ln, "origin needs 3 numbers");
            for (int d = 0; d < 3; ++d)
                if (!parse_double(t[1 + d], &g.origin[d])) bad(path, ln, "origin value '" + t[1 + d] + "'");
            origin = true;
        } else if (!t.empty() && t[0] == "delta") {
            if (t.size() != 4 || deltas >= 3) bad(path, ln, "bad delta line");
            if (!parse_double(t[1 + deltas], &g.spacing[deltas])) bad(path, ln, "delta value");
            ++deltas;
        } else if (t.size() >= 10 && t[0] == "object" && t[3] == "array") {
            items = std::atoll(t[9].c_str());
        }
    }
    if (!counts || !origin || deltas != 3 || items < 0) bad(path, ln, "incomplete OpenDX header");
    const int64_t nx = g.count[0], ny = g.count[1], nz = g.count[2];
    // Products checked before they are formed; values kept in file order first, so memory grows with the data
    // the file really has, not with what its header claims.
    if (nx < 1 || ny < 1 || nz < 1 || ny > INT64_MAX / nz || nx > INT64_MAX / (ny * nz) || items != nx * ny * nz)
        bad(path, ln, "items does not match counts");
    std::vector<double> zfast;
    while (static_cast<int64_t>(zfast.size()) < items && std::getline(f, line)) {
        ++ln;
        for (const auto &w : split(line)) {
            double v;
            if (static_cast<int64_t>(zfast.size()) >= items || !parse_double(w, &v))
                bad(path, ln, "bad or extra data value '" + w + "'");
            zfast.push_back(v);
        }
    }
    const int64_t n = static_cast<int64_t>(zfast.size());
    if (n != items) bad(path, ln, "file ends after " + std::to_string(n) + " of " + std::to_string(items) + " values");
    g.values.resize(items);
    for (int64_t p = 0; p < n; ++p) {
        const int64_t i = p / (ny * nz), j = (p / nz) % ny, k = p % nz;
        g.values[i + nx * (j + ny * k)] = zfast[p];
    }
    return g;
}

void write_cube(const std::string &path, const Grid &g, const Molecule &m, const std::string &comment) {
    auto f = open_out(path);
    write_cube(f.get(), path, g, m, comment);
    if (std::fflush(f.get()) != 0) throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": write failed");
}

void write_cube(FILE *f, const std::string &path, const Grid &g, const Molecule &m, const std::string &comment) {
    std::string h = "qmmm-dcs potential map\n" + comment + "\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%5lld %12.6f %12.6f %12.6f\n", (long long)m.n(), g.origin[0], g.origin[1], g.origin[2]);
    h += buf;
    for (int d = 0; d < 3; ++d) {
        std::snprintf(buf, sizeof buf, "%5lld %12.6f %12.6f %12.6f\n", (long long)g.count[d], d == 0 ? g.spacing[0] : 0.0,
                      d == 1 ? g.spacing[1] : 0.0, d == 2 ? g.spacing[2] : 0.0);
        h += buf;
    }
    for (int64_t a = 0; a < m.n(); ++a) {
        std::snprintf(buf, sizeof buf, "%5d %12.6f %12.6f %12.6f %12.6f\n", m.z[a], m.q[a],
                      m.xyz[3 * a] * kBohrPerAngstrom, m.xyz[3 * a + 1] * kBohrPerAngstrom,
                      m.xyz[3 * a + 2] * kBohrPerAngstrom);
        h += buf;
    }
    put(f, h, path);
    // Cube rows: for each (x, y), the z values, 6 a line.
    const int64_t nx = g.count[0], ny = g.count[1], nz = g.count[2];
    for (int64_t i = 0; i < nx; ++i) {
        std::string s;
        for (int64_t j = 0; j < ny; ++j) {
            for (int64_t k = 0; k < nz; ++k) {
                append_number(s, g.values[i + nx * (j + ny * k)]);
                s += (k % 6 == 5 || k == nz - 1) ? '\n' : ' ';
            }
        }
        put(f, s, path);
    }
}

void write_ions_pdb(const std::string &path, const std::vector<double> &xyz, double charge, const std::string &name) {
    auto f = open_out(path);
    write_ions_pdb(f.get(), path, xyz, charge, name);
    if (std::fflush(f.get()) != 0) throw qmmm::Error(QMMM_ERR_FILE_OPEN, path + ": write failed");
}

void write_ions_pdb(FILE *f, const std::string &path, const std::vector<double> &xyz, double charge,
                    const std::string &name) {
    std::string s = "REMARK   qmmm-dcs ion placement (coordinates in Angstrom)\n";
    char buf[128];
    const int qi = static_cast<int>(std::lround(std::fabs(charge)));
    const std::string qs = qi >= 1 && qi <= 9 ? std::to_string(qi) + (charge < 0 ? "-" : "+") : "  ";
    const std::string el = name.substr(0, 2);
    for (size_t a = 0; a < xyz.size() / 3; ++a) {
        std::snprintf(buf, sizeof buf, "HETATM%5zu %-4s %3s I%4zu    %8.3f%8.3f%8.3f%6.2f%6.2f          %2s%2s\n",
                      (a + 1) % 100000, name.substr(0, 4).c_str(), name.substr(0, 3).c_str(), (a + 1) % 10000,
                      xyz[3 * a], xyz[3 * a + 1], xyz[3 * a + 2], 1.0, 0.0, el.c_str(), qs.c_str());
        s += buf;
    }
    s += "END\n";
    put(f, s, path);
}

}  // namespace dcsio
