// rdf_io.cpp -- trajectory readers (XYZ/extended XYZ, PDB, GRO, LAMMPS dump, DCD) and selections.
#include "rdf_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "qmmm_accel.h"
#include "stream_store.hpp"

namespace qmmm::rdfio {
namespace {

std::string trim(const std::string &s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}
std::vector<std::string> split(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> v;
    for (std::string t; in >> t;) v.push_back(t);
    return v;
}
std::string lower(std::string s) {
    for (auto &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
// Element guessed from an atom name: its first letter (PDB names like " OW ", "HW1", "CA" -> C).
std::string element_from_name(const std::string &name) {
    for (char c : name)
        if (std::isalpha(static_cast<unsigned char>(c))) return std::string(1, static_cast<char>(std::toupper(c)));
    return "";
}

// Text lines with the file name and line number for messages.
class Lines {
public:
    explicit Lines(const std::string &path) : path_(path), in_(path) {
        if (!in_) throw Error(QMMM_ERR_FILE_OPEN, path + ": cannot open: " + std::strerror(errno));
    }
    bool get(std::string &s) {
        if (!std::getline(in_, s)) return false;
        ++line_;
        if (!s.empty() && s.back() == '\r') s.pop_back();
        return true;
    }
    void must(std::string &s, const std::string &what) {
        if (!get(s)) fail("the file ends where " + what + " was expected");
    }
    [[noreturn]] void fail(const std::string &m) const {
        throw Error(QMMM_ERR_FILE_FORMAT, path_ + ":" + std::to_string(line_) + ": " + m);
    }
    double num(const std::string &t, const char *what) const {
        char *end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        if (t.empty() || end == t.c_str() || *end != '\0' || !std::isfinite(v))
            fail(std::string("bad ") + what + " '" + t + "'");
        return v;
    }
    int64_t integer(const std::string &t, const char *what) const {
        char *end = nullptr;
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0') fail(std::string("bad ") + what + " '" + t + "'");
        return v;
    }
    const std::string &path() const { return path_; }
    int64_t line() const { return line_; }

private:
    std::string path_;
    std::ifstream in_;
    int64_t line_ = 0;
};

// Every frame must have as many atoms as the first.
void check_count(const Lines &L, size_t first, size_t now, int64_t frame) {
    if (first != now)
        L.fail("frame " + std::to_string(frame) + " has " + std::to_string(now) + " atoms, the first frame had " +
               std::to_string(first));
}

// Numbers finite in the file can still overflow on conversion (nm to Angstrom, scaled to Cartesian, cell angles).
void check_finite(const Lines &L, const Frame &f, int64_t frame) {
    const auto finite = [](double v) { return std::isfinite(v); };
    if (!std::all_of(f.xyz.begin(), f.xyz.end(), finite))
        L.fail("frame " + std::to_string(frame) + ": a coordinate is not finite after conversion to Angstrom");
    if (f.has_box && !std::all_of(f.box, f.box + 9, finite))
        L.fail("frame " + std::to_string(frame) + ": the cell is not finite (too long, or no cell at these angles)");
}

class XyzReader : public Reader {
public:
    explicit XyzReader(const std::string &p) : L_(p) {}
    bool next(Frame &f) override {
        std::string s;
        do {
            if (!L_.get(s)) return false;
        } while (trim(s).empty());
        const int64_t n = L_.integer(trim(s), "atom count");
        if (n < 1) L_.fail("atom count " + std::to_string(n) + " < 1");
        std::string comment;
        L_.must(comment, "the comment line");
        f.has_box = false;
        int pos = 1, species = 0;  // columns of the position and the species
        if (auto k = comment.find("Lattice=\""); k != std::string::npos) {
            const auto e = comment.find('"', k + 9);
            if (e == std::string::npos) L_.fail("Lattice=\" is not closed");
            const auto v = split(comment.substr(k + 9, e - k - 9));
            if (v.size() != 9) L_.fail("Lattice= needs 9 numbers, found " + std::to_string(v.size()));
            for (int i = 0; i < 9; ++i) f.box[i] = L_.num(v[i], "Lattice value");
            f.has_box = true;
        }
        if (auto k = comment.find("Properties="); k != std::string::npos) {
            auto spec = comment.substr(k + 11);
            spec = spec.substr(0, spec.find_first_of(" \t"));
            std::vector<std::string> parts;
            for (size_t a = 0, b; a <= spec.size(); a = b + 1) {
                b = spec.find(':', a);
                if (b == std::string::npos) b = spec.size();
                parts.push_back(spec.substr(a, b - a));
            }
            if (parts.size() % 3) L_.fail("Properties= is not name:type:count triples");
            int col = 0;
            pos = -1;
            for (size_t i = 0; i < parts.size(); i += 3) {
                if (parts[i] == "pos") pos = col;
                if (parts[i] == "species") species = col;
                const int64_t count = L_.integer(parts[i + 2], "Properties count");
                if (count < 1 || count > 1000) L_.fail("Properties count '" + parts[i + 2] + "' is not in 1..1000");
                col += static_cast<int>(count);
            }
            if (pos < 0) L_.fail("Properties= has no pos column");
        }
        f.xyz.clear();  // grown atom by atom: memory follows the file, not the count its header claims
        const bool first = atoms_.empty();
        for (int64_t i = 0; i < n; ++i) {
            L_.must(s, "atom " + std::to_string(i + 1) + " of " + std::to_string(n));
            const auto t = split(s);
            if (static_cast<int>(t.size()) < std::max(pos + 3, species + 1)) L_.fail("too few columns for an atom");
            for (int d = 0; d < 3; ++d) f.xyz.push_back(L_.num(t[pos + d], "coordinate"));
            if (first) {
                AtomInfo a;
                a.name = a.type = t[species];
                a.element = t[species];
                a.resid = i;
                a.mol = i;
                atoms_.push_back(a);
            }
        }
        check_count(L_, atoms_.size(), static_cast<size_t>(n), frame_);
        ++frame_;
        return true;
    }

private:
    Lines L_;
    int64_t frame_ = 0;
};

class PdbReader : public Reader {
public:
    explicit PdbReader(const std::string &p) : L_(p) {}
    bool next(Frame &f) override {
        std::string s;
        f.xyz.clear();
        const bool first = atoms_.empty();
        while (L_.get(s)) {
            const std::string rec = s.substr(0, 6);
            if (rec == "CRYST1") {
                if (s.size() < 54) L_.fail("CRYST1 record too short");
                const double a = L_.num(trim(s.substr(6, 9)), "CRYST1 a"), b = L_.num(trim(s.substr(15, 9)), "CRYST1 b"),
                             c = L_.num(trim(s.substr(24, 9)), "CRYST1 c");
                const double al = L_.num(trim(s.substr(33, 7)), "CRYST1 alpha"),
                             be = L_.num(trim(s.substr(40, 7)), "CRYST1 beta"),
                             ga = L_.num(trim(s.substr(47, 7)), "CRYST1 gamma");
                box_from_lengths_angles(a, b, c, al, be, ga, box_);
                has_box_ = true;
            } else if (rec == "ATOM  " || rec == "HETATM") {
                if (s.size() < 54) L_.fail("ATOM record shorter than 54 columns");
                for (int d = 0; d < 3; ++d) f.xyz.push_back(L_.num(trim(s.substr(30 + 8 * d, 8)), "coordinate"));
                if (first) {
                    AtomInfo a;
                    a.name = trim(s.substr(12, 4));
                    a.resname = trim(s.substr(17, 4));
                    a.resid = L_.integer(trim(s.substr(22, 4)), "residue number");
                    a.element = s.size() >= 78 ? trim(s.substr(76, 2)) : "";
                    if (a.element.empty()) a.element = element_from_name(a.name);
                    a.type = a.element;
                    atoms_.push_back(a);
                }
            } else if (rec == "ENDMDL" || rec.rfind("END", 0) == 0) {
                if (!f.xyz.empty()) break;
            }
        }
        if (f.xyz.empty()) return false;
        if (first) number_residues();
        check_count(L_, atoms_.size(), f.xyz.size() / 3, frame_);
        std::copy(box_, box_ + 9, f.box);
        f.has_box = has_box_;
        check_finite(L_, f, frame_);
        ++frame_;
        return true;
    }

protected:
    // Molecule ids: a new residue wherever the residue number or name changes along the file.
    void number_residues() {
        int64_t m = -1;
        for (size_t i = 0; i < atoms_.size(); ++i) {
            if (i == 0 || atoms_[i].resid != atoms_[i - 1].resid || atoms_[i].resname != atoms_[i - 1].resname) ++m;
            atoms_[i].mol = m;
        }
    }
    Lines L_;
    double box_[9] = {0};
    bool has_box_ = false;
    int64_t frame_ = 0;
};

class GroReader : public PdbReader {
public:
    explicit GroReader(const std::string &p) : PdbReader(p) {}
    bool next(Frame &f) override {
        std::string s;
        if (!L_.get(s)) return false;  // title
        if (trim(s).empty() && !L_.get(s)) return false;
        L_.must(s, "the atom count");
        const int64_t n = L_.integer(trim(s), "atom count");
        if (n < 1) L_.fail("atom count " + std::to_string(n) + " < 1");
        const bool first = atoms_.empty();
        f.xyz.clear();  // grown atom by atom: memory follows the file, not the count its header claims
        for (int64_t i = 0; i < n; ++i) {
            L_.must(s, "atom " + std::to_string(i + 1) + " of " + std::to_string(n));
            if (s.size() < 44) L_.fail("atom line shorter than 44 columns");
            // Field width from the distance between decimal points (GRO allows more decimals than 3).
            const auto p1 = s.find('.', 20), p2 = p1 == std::string::npos ? p1 : s.find('.', p1 + 1);
            const size_t w = (p1 != std::string::npos && p2 != std::string::npos) ? p2 - p1 : 8;
            if (s.size() < 20 + 3 * w) L_.fail("atom line too short for its coordinates");
            for (int d = 0; d < 3; ++d) f.xyz.push_back(10.0 * L_.num(trim(s.substr(20 + d * w, w)), "coordinate"));
            if (first) {
                AtomInfo a;
                a.resid = L_.integer(trim(s.substr(0, 5)), "residue number");
                a.resname = trim(s.substr(5, 5));
                a.name = trim(s.substr(10, 5));
                a.element = element_from_name(a.name);
                a.type = a.element;
                atoms_.push_back(a);
            }
        }
        L_.must(s, "the box line");
        const auto v = split(s);
        if (v.size() != 3 && v.size() != 9) L_.fail("box line needs 3 or 9 numbers");
        double b[9] = {0};
        for (size_t i = 0; i < v.size(); ++i) b[i] = 10.0 * L_.num(v[i], "box value");
        // v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)
        const double cell[9] = {b[0], b[3], b[4], b[5], b[1], b[6], b[7], b[8], b[2]};
        std::copy(cell, cell + 9, f.box);
        f.has_box = true;
        if (first) number_residues();
        check_count(L_, atoms_.size(), static_cast<size_t>(n), frame_);
        check_finite(L_, f, frame_);
        ++frame_;
        return true;
    }
};

class LammpsReader : public Reader {
public:
    explicit LammpsReader(const std::string &p) : L_(p) {}
    bool next(Frame &f) override {
        std::string s;
        do {
            if (!L_.get(s)) return false;
        } while (trim(s).empty());
        if (trim(s) != "ITEM: TIMESTEP") L_.fail("expected 'ITEM: TIMESTEP'");
        L_.must(s, "the timestep");
        L_.must(s, "ITEM: NUMBER OF ATOMS");
        if (trim(s) != "ITEM: NUMBER OF ATOMS") L_.fail("expected 'ITEM: NUMBER OF ATOMS'");
        L_.must(s, "the atom count");
        const int64_t n = L_.integer(trim(s), "atom count");
        if (n < 1) L_.fail("atom count < 1");
        L_.must(s, "ITEM: BOX BOUNDS");
        if (s.rfind("ITEM: BOX BOUNDS", 0) != 0) L_.fail("expected 'ITEM: BOX BOUNDS'");
        const bool tri = s.find("xy") != std::string::npos;
        double lo[3], hi[3], tilt[3] = {0, 0, 0};
        for (int d = 0; d < 3; ++d) {
            L_.must(s, "a box bounds line");
            const auto v = split(s);
            if (v.size() < (tri ? 3u : 2u)) L_.fail("box bounds line needs " + std::string(tri ? "3" : "2") + " numbers");
            lo[d] = L_.num(v[0], "box bound"), hi[d] = L_.num(v[1], "box bound");
            if (tri) tilt[d] = L_.num(v[2], "tilt factor");
        }
        const double xy = tilt[0], xz = tilt[1], yz = tilt[2];
        if (tri) {  // bounding box -> cell (LAMMPS documentation, "triclinic" dump box)
            lo[0] -= std::min({0.0, xy, xz, xy + xz}), hi[0] -= std::max({0.0, xy, xz, xy + xz});
            lo[1] -= std::min(0.0, yz), hi[1] -= std::max(0.0, yz);
        }
        const double cell[9] = {hi[0] - lo[0], 0, 0, xy, hi[1] - lo[1], 0, xz, yz, hi[2] - lo[2]};
        std::copy(cell, cell + 9, f.box);
        f.has_box = true;
        L_.must(s, "ITEM: ATOMS");
        if (s.rfind("ITEM: ATOMS", 0) != 0) L_.fail("expected 'ITEM: ATOMS'");
        const auto cols = split(s.substr(11));
        int id = -1, type = -1, mol = -1, elem = -1, c[3] = {-1, -1, -1};
        bool scaled = false;
        for (int k = 0; k < static_cast<int>(cols.size()); ++k) {
            const auto &x = cols[k];
            if (x == "id") id = k;
            else if (x == "type") type = k;
            else if (x == "mol") mol = k;
            else if (x == "element") elem = k;
            for (int d = 0; d < 3; ++d) {
                const std::string ax(1, "xyz"[d]);
                if (x == ax || x == ax + "u") c[d] = k;
                else if ((x == ax + "s" || x == ax + "su") && c[d] < 0) c[d] = k, scaled = true;
            }
        }
        if (c[0] < 0 || c[1] < 0 || c[2] < 0) L_.fail("ITEM: ATOMS has no x y z (or xs ys zs, xu yu zu) columns");
        struct Row {
            int64_t id;
            double r[3];
            AtomInfo a;
        };
        std::vector<Row> rows;  // grown line by line: memory follows the file, not the count its header claims
        const bool first = atoms_.empty();
        for (int64_t i = 0; i < n; ++i) {
            L_.must(s, "atom " + std::to_string(i + 1) + " of " + std::to_string(n));
            const auto t = split(s);
            if (t.size() < cols.size()) L_.fail("atom line has " + std::to_string(t.size()) + " columns, ITEM: ATOMS names " +
                                                std::to_string(cols.size()));
            Row &r = rows.emplace_back();
            r.id = id >= 0 ? L_.integer(t[id], "atom id") : i;
            double v[3];
            for (int d = 0; d < 3; ++d) v[d] = L_.num(t[c[d]], "coordinate");
            if (scaled)
                for (int d = 0; d < 3; ++d) r.r[d] = lo[d] * (d == 0) + v[0] * cell[d] + v[1] * cell[3 + d] + v[2] * cell[6 + d];
            else
                std::copy(v, v + 3, r.r);
            if (scaled) r.r[1] += lo[1], r.r[2] += lo[2];
            if (first) {
                r.a.type = type >= 0 ? t[type] : "";
                r.a.element = elem >= 0 ? t[elem] : "";
                r.a.name = !r.a.element.empty() ? r.a.element : r.a.type;
                r.a.mol = mol >= 0 ? L_.integer(t[mol], "molecule id") : r.id;
                r.a.resid = r.a.mol;
            }
        }
        std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.id < b.id; });
        if (first)
            for (auto &r : rows) atoms_.push_back(r.a);
        check_count(L_, atoms_.size(), static_cast<size_t>(n), frame_);
        f.xyz.resize(3 * n);
        for (int64_t i = 0; i < n; ++i) std::copy(rows[i].r, rows[i].r + 3, &f.xyz[3 * i]);
        check_finite(L_, f, frame_);
        ++frame_;
        return true;
    }

private:
    Lines L_;
    int64_t frame_ = 0;
};

// DCD: Fortran unformatted records (4-byte length markers around each), native or swapped byte order.
class DcdReader : public Reader {
public:
    DcdReader(const std::string &p, const std::string &topology) : path_(p), in_(p, std::ios::binary) {
        if (!in_) throw Error(QMMM_ERR_FILE_OPEN, p + ": cannot open: " + std::strerror(errno));
        in_.seekg(0, std::ios::end);
        size_ = static_cast<int64_t>(in_.tellg());
        in_.seekg(0);
        int32_t first;
        raw(&first, 4, "the header");
        swap_ = first != 84;
        if (swap_ && bswap(first) != 84) fail("not a DCD file (first record is not 84 bytes)");
        char hdr[84];
        raw(hdr, 84, "the header");
        if (std::memcmp(hdr, "CORD", 4) != 0) fail("not a DCD file (no CORD signature)");
        end_marker(84, "header");
        int32_t ic[20];
        std::memcpy(ic, hdr + 4, 80);
        for (auto &v : ic) v = fix(v);
        const bool charmm = ic[19] != 0;
        cell_ = charmm && ic[10] != 0;
        if (charmm && ic[11] != 0) fail("4-D DCD files are not supported");
        if (ic[8] != 0) fail("DCD files with fixed atoms are not supported");
        const int32_t tlen = record_start("title");
        in_.seekg(tlen, std::ios::cur);
        end_marker(tlen, "title");
        if (record_start("atom count") != 4) fail("atom count record is not 4 bytes");
        int32_t n;
        raw(&n, 4, "the atom count");
        n_ = fix(n);
        end_marker(4, "atom count");
        // A coordinate record (4 bytes per atom) must fit its 32-bit length marker.
        if (n_ < 1 || n_ > INT32_MAX / 4)
            fail("atom count " + std::to_string(n_) + " is not in 1.." + std::to_string(INT32_MAX / 4));
        data_ = static_cast<int64_t>(in_.tellg());
        frame_bytes_ = (cell_ ? 56 : 0) + 3 * (8 + 4 * int64_t{n_});
        // The atom count must agree with the file before memory is taken for it: one whole frame at least.
        if (size_ - data_ < frame_bytes_)
            fail("holds no complete frame (" + std::to_string(n_) + " atoms need " + std::to_string(frame_bytes_) +
                 " bytes a frame, " + std::to_string(size_ - data_) + " follow the header)");
        if (!topology.empty()) {
            atoms_ = atoms_from_topology(topology, n_, p);
        } else {
            atoms_.resize(n_);
            for (int32_t i = 0; i < n_; ++i) atoms_[i].resid = atoms_[i].mol = i;
        }
    }
    int64_t n_frames_hint() const override { return (size_ - data_) / frame_bytes_; }
    bool skip() override {
        if (static_cast<int64_t>(in_.tellg()) >= size_) return false;
        if (static_cast<int64_t>(in_.tellg()) + frame_bytes_ > size_) truncated();
        in_.seekg(frame_bytes_, std::ios::cur);
        ++frame_;
        return true;
    }
    bool next(Frame &f) override {
        if (in_.peek() == EOF) return false;
        if (static_cast<int64_t>(in_.tellg()) + frame_bytes_ > size_) truncated();  // before allocating for it
        f.has_box = false;
        if (cell_) {
            if (record_start("unit cell") != 48) fail("frame " + std::to_string(frame_) + ": unit cell record is not 48 bytes");
            double c[6];
            raw(c, 48, "the unit cell");
            for (auto &v : c) v = fix(v);
            end_marker(48, "unit cell");
            // CHARMM order A, gamma, B, beta, alpha, C; angles as cosines (newer writers) or degrees.
            double ang[3] = {c[4], c[3], c[1]};
            const bool cosines = std::fabs(ang[0]) <= 1 && std::fabs(ang[1]) <= 1 && std::fabs(ang[2]) <= 1;
            if (cosines)
                for (auto &v : ang) v = std::acos(v) * 180.0 / M_PI;
            box_from_lengths_angles(c[0], c[2], c[5], ang[0], ang[1], ang[2], f.box);
            f.has_box = true;
            if (!std::all_of(f.box, f.box + 9, [](double x) { return std::isfinite(x); }))
                fail("frame " + std::to_string(frame_) + ": the unit cell is not finite (or its angles give no cell)");
        }
        // The three records (x, y, z) first, then one pass that writes each atom's x y z together: three strided
        // passes over a 24 MB frame fetched every cache line three times. The buffer is kept: a fresh one per
        // frame costs its page faults every frame.
        const size_t n = size_t(n_);
        std::vector<float> &v = record_;
        v.resize(3 * n);
        const bool direct = !f.into.empty();
        for (const auto &r : f.into)
            if (r.first < 0 || r.count < 0 || r.first + r.count > n_ || (r.count > 0 && !r.dst))
                throw Error(QMMM_ERR_INTERNAL, "DCD reader: a destination range is outside the frame's atoms");
        for (int d = 0; d < 3; ++d) {
            if (record_start("coordinates") != 4 * n_) fail("frame " + std::to_string(frame_) + ": coordinate record is not 4 x natoms bytes");
            raw(v.data() + d * n, 4 * n, "coordinates");
            end_marker(4 * n_, "coordinates");
        }
        if (swap_)
            for (auto &x : v) x = fix(x);
        int bad = 0;  // every atom, whether it is written or not
        for (size_t k = 0; k < 3 * n; ++k) bad |= std::isfinite(v[k]) ? 0 : 1;
        if (bad)
            for (size_t k = 0; k < 3 * n; ++k)
                if (!std::isfinite(v[k]))
                    fail("frame " + std::to_string(frame_) + ": atom " + std::to_string(k % n + 1) + " is not finite");
        const float *x = v.data(), *y = x + n, *z = y + n;
        if (direct) {
            // Into batches far larger than the caches (qmmm-rdf): streaming stores, so writing a frame does not
            // first read it from memory (the host's memory bandwidth bounds the tool's frame rate).
            for (const auto &r : f.into)
                for (int64_t i = 0; i < r.count; ++i) {
                    const size_t a = size_t(r.first + i);
                    stream_store(r.dst + 3 * i, x[a]), stream_store(r.dst + 3 * i + 1, y[a]),
                        stream_store(r.dst + 3 * i + 2, z[a]);
                }
            stream_fence();
        } else {
            f.xyz.resize(3 * n);
            for (size_t i = 0; i < n; ++i) f.xyz[3 * i] = x[i], f.xyz[3 * i + 1] = y[i], f.xyz[3 * i + 2] = z[i];
        }
        f.into_done = direct;
        ++frame_;
        return true;
    }

private:
    template <class T>
    T fix(T v) const {
        if (!swap_) return v;
        unsigned char b[sizeof(T)];
        std::memcpy(b, &v, sizeof b);
        std::reverse(b, b + sizeof b);
        std::memcpy(&v, b, sizeof b);
        return v;
    }
    static int32_t bswap(int32_t v) { return static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(v))); }
    [[noreturn]] void fail(const std::string &m) const { throw Error(QMMM_ERR_FILE_FORMAT, path_ + ": " + m); }
    [[noreturn]] void truncated() const {
        fail("frame " + std::to_string(frame_) + " is truncated (the file ends at byte " + std::to_string(size_) + ")");
    }
    void raw(void *p, size_t n, const char *) {
        in_.read(static_cast<char *>(p), static_cast<std::streamsize>(n));
        if (static_cast<size_t>(in_.gcount()) != n) truncated();
    }
    int32_t record_start(const char *what) {
        int32_t m;
        raw(&m, 4, what);
        return fix(m);
    }
    void end_marker(int32_t len, const char *what) {
        int32_t m;
        raw(&m, 4, what);
        if (fix(m) != len) fail(std::string("corrupt record markers around the ") + what + " (frame " + std::to_string(frame_) + ")");
    }
    std::string path_;
    std::ifstream in_;
    int64_t size_ = 0, data_ = 0, frame_bytes_ = 1, frame_ = 0;
    bool swap_ = false, cell_ = false;
    int32_t n_ = 0;
    std::vector<float> record_;  // one coordinate record
};

// A number or an a-b range of a selection; indices (non_negative) count from 0. A range must not be empty, and a
// negative index is an error, never read as part of a range ("index -5-3" is not 0-3).
bool in_ranges(int64_t v, const std::string &spec, const std::string &expr, bool non_negative) {
    const auto dash = spec.find('-', 1);
    char *e1 = nullptr, *e2 = nullptr;
    errno = 0;
    if (dash == std::string::npos) {
        const long long a = std::strtoll(spec.c_str(), &e1, 10);
        if (*e1 || spec.empty() || errno == ERANGE)
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': bad number '" + spec + "'");
        if (non_negative && a < 0)
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': index " + spec + " is negative (indices count from 0)");
        return v == a;
    }
    // Named strings: the end pointers must not outlive what they point into ("5-" has an empty upper bound).
    const std::string lo = spec.substr(0, dash), hi = spec.substr(dash + 1);
    const long long a = std::strtoll(lo.c_str(), &e1, 10);
    const long long b = std::strtoll(hi.c_str(), &e2, 10);
    if (*e1 || *e2 || hi.empty() || errno == ERANGE)
        throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': bad range '" + spec + "'");
    if (non_negative && (a < 0 || b < 0))
        throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': range '" + spec + "' has a negative index (indices count from 0)");
    if (b < a)
        throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': range '" + spec + "' is empty (" + lo + " > " + hi + ")");
    return v >= a && v <= b;
}

bool str_match(const std::string &v, const std::string &pat) {
    if (!pat.empty() && pat.back() == '*') return v.compare(0, pat.size() - 1, pat, 0, pat.size() - 1) == 0;
    return v == pat;
}

}  // namespace

const char *const kSelectionHelp =
    "a selection is clauses joined by 'and', each 'all' or a keyword with one or more values (any of them "
    "matches): name, element, resname, type (exact, '*' at the end for a prefix), index (0-based), resid "
    "(numbers or a-b ranges); e.g. \"name OW\", \"resname SOL and element H\", \"index 0-99\"";

bool have_gromacs() {
#ifdef QMMM_RDF_GROMACS
    return true;
#else
    return false;
#endif
}

std::vector<AtomInfo> atoms_from_topology(const std::string &topology, int64_t n, const std::string &traj) {
    auto top = open_trajectory(topology);
    Frame f;
    if (!top->next(f)) throw Error(QMMM_ERR_FILE_FORMAT, topology + ": the topology file has no atoms");
    auto atoms = top->atoms();
    if (static_cast<int64_t>(atoms.size()) != n)
        throw Error(QMMM_ERR_FILE_FORMAT, topology + ": has " + std::to_string(atoms.size()) + " atoms but " + traj +
                                              " has " + std::to_string(n));
    return atoms;
}

void box_from_lengths_angles(double a, double b, double c, double alpha, double beta, double gamma, double box[9]) {
    const double d2r = M_PI / 180.0;
    const double ca = std::cos(alpha * d2r), cb = std::cos(beta * d2r), cg = std::cos(gamma * d2r);
    const double sg = std::sin(gamma * d2r);
    // Right angles exactly: cos(90 deg) is 6e-17, which would make an orthorhombic cell triclinic.
    const auto clean = [](double x) { return std::fabs(x) < 1e-12 ? 0.0 : x; };
    const double cx = clean(c * cb), cy = clean(c * (ca - cb * cg) / sg);
    const double cell[9] = {a, 0, 0, clean(b * cg), b * sg, 0, cx, cy, std::sqrt(std::max(0.0, c * c - cx * cx - cy * cy))};
    std::copy(cell, cell + 9, box);
}

std::unique_ptr<Reader> open_trajectory(const std::string &path, const std::string &format, const std::string &topology) {
    std::string f = lower(format);
    if (f == "auto") {
        const auto dot = path.find_last_of('.');
        const std::string ext = dot == std::string::npos ? "" : lower(path.substr(dot + 1));
        if (ext == "xyz" || ext == "extxyz") f = "xyz";
        else if (ext == "pdb" || ext == "ent") f = "pdb";
        else if (ext == "gro") f = "gro";
        else if (ext == "dcd") f = "dcd";
        else if (ext == "lammpstrj" || ext == "dump" || ext == "lammps") f = "lammps";
        else if (ext == "xtc" || ext == "trr") f = ext;
        else
            throw Error(QMMM_ERR_INVALID_ARG, path + ": cannot tell the format from the extension '" + ext +
                                                  "' (use --format xyz|pdb|gro|lammps|dcd|xtc|trr)");
    }
    if (f == "xyz") return std::make_unique<XyzReader>(path);
    if (f == "pdb") return std::make_unique<PdbReader>(path);
    if (f == "gro") return std::make_unique<GroReader>(path);
    if (f == "lammps") return std::make_unique<LammpsReader>(path);
    if (f == "dcd") return std::make_unique<DcdReader>(path, topology);
    if (f == "xtc" || f == "trr") {
#ifdef QMMM_RDF_GROMACS
        return open_gromacs(path, f, topology);
#else
        throw Error(QMMM_ERR_UNSUPPORTED, path + ": XTC and TRR are read through GROMACS's library, and this build "
                                                 "has none (install libgromacs-dev and configure with "
                                                 "-DQMMM_GROMACS=ON); without it: xyz, pdb, gro, lammps, dcd");
#endif
    }
    throw Error(QMMM_ERR_INVALID_ARG, "unknown format '" + format + "' (xyz, pdb, gro, lammps, dcd, xtc, trr)");
}

std::vector<int64_t> select(const std::vector<AtomInfo> &atoms, const std::string &expr) {
    const auto tok = split(expr);
    if (tok.empty()) throw Error(QMMM_ERR_INVALID_ARG, std::string("empty selection: ") + kSelectionHelp);
    std::vector<std::vector<std::string>> clauses(1);
    for (const auto &t : tok) {
        if (lower(t) == "and") clauses.emplace_back();
        else clauses.back().push_back(t);
    }
    for (const auto &c : clauses) {
        if (c.empty())
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': empty clause around 'and'; " + kSelectionHelp);
        const std::string k = lower(c[0]);
        // The keyword first: "nonsense" is an unknown keyword, not a keyword without values.
        if (k != "all" && k != "name" && k != "element" && k != "resname" && k != "type" && k != "index" && k != "resid")
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': unknown keyword '" + c[0] + "'; " + kSelectionHelp);
        if (k == "all" ? c.size() != 1 : c.size() < 2)
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + expr + "': '" + c[0] + "' needs " +
                                                  (k == "all" ? "no values" : "at least one value") + "; " + kSelectionHelp);
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < atoms.size(); ++i) {
        const auto &a = atoms[i];
        bool ok = true;
        for (const auto &c : clauses) {
            const std::string k = lower(c[0]);
            if (k == "all") continue;
            bool any = false;
            for (size_t v = 1; v < c.size() && !any; ++v) {
                if (k == "name") any = str_match(a.name, c[v]);
                else if (k == "element") any = lower(a.element) == lower(c[v]);
                else if (k == "resname") any = str_match(a.resname, c[v]);
                else if (k == "type") any = str_match(a.type, c[v]);
                else if (k == "index") any = in_ranges(static_cast<int64_t>(i), c[v], expr, true);
                else if (k == "resid") any = in_ranges(a.resid, c[v], expr, false);
            }
            ok = ok && any;
        }
        if (ok) out.push_back(static_cast<int64_t>(i));
    }
    return out;
}

}  // namespace qmmm::rdfio
