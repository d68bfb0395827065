// rdf_io_gmx.cpp -- XTC and TRR trajectories through GROMACS's own reader (libgromacs, Debian's
// libgromacs-dev 2022). Built only when CMake finds GROMACS (QMMM_GROMACS=AUTO|ON).
//
// Why this API: libgromacs-dev installs neither xtcio.h nor trrio.h; the reading API it does install is the
// legacy trajectory interface gromacs/fileio/trxio.h (read_first_frame / read_next_frame / close_trx on a
// t_trxframe), the one gmx's own tools use. It picks the format from the extension, reads single- and
// double-precision TRR and decompresses XTC. Its fatal errors end the process (gmx_fatal), so the file is
// checked here first (exists, readable, the format's magic number) and an incomplete last frame, which
// GROMACS reports only through t_trxframe::not_ok, becomes a qmmm::Error naming the file and the frame.
// Lengths: GROMACS files are in nm; frames come out in Angstrom (x 10) like every other reader.
#include <gromacs/fileio/oenv.h>
#include <gromacs/fileio/trxio.h>
#include <gromacs/trajectory/trajectoryframe.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include "qmmm_accel.h"
#include "rdf_io.hpp"

namespace qmmm::rdfio {
namespace {

// XDR stores the first int of an XTC (1995) or TRR (1993) frame big-endian.
void check_magic(const std::string &path, const std::string &format) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(QMMM_ERR_FILE_OPEN, path + ": cannot open: " + std::strerror(errno));
    unsigned char b[4] = {0, 0, 0, 0};
    in.read(reinterpret_cast<char *>(b), 4);
    if (in.gcount() == 0) throw Error(QMMM_ERR_FILE_FORMAT, path + ": the file is empty");
    if (in.gcount() != 4) throw Error(QMMM_ERR_FILE_FORMAT, path + ": the file ends inside the first frame header");
    const int32_t magic = static_cast<int32_t>((uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3]);
    const int32_t want = format == "xtc" ? 1995 : 1993;
    if (magic != want)
        throw Error(QMMM_ERR_FILE_FORMAT, path + ": not " + (format == "xtc" ? "an XTC" : "a TRR") +
                                              " file (magic number " + std::to_string(magic) + ", expected " +
                                              std::to_string(want) + ")");
}

// Big-endian XDR words read from the file, skipping frame bodies by seeking (trajectories may be many GB: only
// the headers are read).
struct Xdr {
    std::ifstream in;
    size_t size = 0, at = 0;
    bool has(size_t n) const { return size - at >= n; }
    int32_t i32() {
        unsigned char p[4] = {0, 0, 0, 0};
        in.seekg(static_cast<std::streamoff>(at));
        in.read(reinterpret_cast<char *>(p), 4);
        at += 4;
        return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]);
    }
};

// GROMACS ends the process (gmx_fatal) on a frame header it cannot read: a wrong magic number, version string or
// real size, or a frame with more atoms than the first. Every complete frame header is checked here, before
// GROMACS sees the file, so that such a file is a FILE_FORMAT error naming the frame. An incomplete last frame is
// left to GROMACS, which reports it through t_trxframe::not_ok (pending()).
void check_frame_headers(const std::string &path, const std::string &format) {
    Xdr x;
    x.in.open(path, std::ios::binary | std::ios::ate);
    x.size = x.in ? static_cast<size_t>(x.in.tellg()) : 0;
    auto bad = [&](int64_t frame, const std::string &what) {
        return Error(QMMM_ERR_FILE_FORMAT, path + ": frame " + std::to_string(frame) + ": " + what);
    };
    int64_t natoms0 = -1;
    for (int64_t frame = 0; x.has(4); ++frame) {
        const int32_t magic = x.i32();
        if (format == "xtc") {
            if (magic != 1995) throw bad(frame, "not an XTC frame header (magic number " + std::to_string(magic) + ")");
            if (!x.has(52)) return;
            const int32_t n = x.i32();
            x.at += 4 + 4 + 36;  // step, time, box
            const int32_t n2 = x.i32();
            if (n < 1 || n2 != n) throw bad(frame, "atom counts " + std::to_string(n) + " and " + std::to_string(n2));
            if (natoms0 < 0) natoms0 = n;
            if (n != natoms0)
                throw bad(frame, std::to_string(n) + " atoms, the first frame had " + std::to_string(natoms0));
            if (n <= 9) {  // stored uncompressed
                x.at = std::min(x.size, x.at + 12 * size_t(n));
                continue;
            }
            if (!x.has(36)) return;
            x.at += 32;  // precision, minint, maxint, smallidx
            const int32_t bytes = x.i32();
            if (bytes < 0) throw bad(frame, "negative compressed size " + std::to_string(bytes));
            x.at = std::min(x.size, x.at + ((size_t(bytes) + 3) / 4) * 4);
        } else {
            if (magic != 1993) throw bad(frame, "not a TRR frame header (magic number " + std::to_string(magic) + ")");
            if (!x.has(4 + 4 + 12)) return;
            const int32_t slen = x.i32(), len = x.i32();
            char version[12] = {};
            x.in.seekg(static_cast<std::streamoff>(x.at));
            x.in.read(version, 12);
            if (slen != 13 || len != 12 || std::memcmp(version, "GMX_trn_file", 12) != 0)
                throw bad(frame, "not a TRR frame header (version string)");
            x.at += 12;
            if (!x.has(13 * 4)) return;
            int32_t sz[13];  // ir, e, box, vir, pres, top, sym, x, v, f, natoms, step, nre
            for (int32_t &v : sz) v = x.i32();
            for (int k = 0; k < 11; ++k)
                if (sz[k] < 0) throw bad(frame, "negative block size in the frame header");
            const int32_t n = sz[10];
            int32_t real = 0;  // GROMACS's nFloatSize: from the box, else x, v or f
            if (sz[2]) real = sz[2] / 9;
            else if (sz[7] && n > 0) real = sz[7] / (3 * n);
            else if (sz[8] && n > 0) real = sz[8] / (3 * n);
            else if (sz[9] && n > 0) real = sz[9] / (3 * n);
            if (real != 4 && real != 8) throw bad(frame, "cannot tell single from double precision (real size " + std::to_string(real) + ")");
            if (natoms0 < 0) natoms0 = n;
            if (n != natoms0) throw bad(frame, std::to_string(n) + " atoms, the first frame had " + std::to_string(natoms0));
            size_t data = 2 * size_t(real);  // t, lambda
            for (int k : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) data += size_t(sz[k]);
            x.at = std::min(x.size, x.at + data);
        }
    }
}

class GmxReader : public Reader {
public:
    GmxReader(const std::string &path, const std::string &format, const std::string &topology) : path_(path) {
        check_magic(path, format);
        check_frame_headers(path, format);
        output_env_init_default(&oenv_);
        clear_trxframe(&fr_, true);
        have_ = read_first_frame(oenv_, &status_, path.c_str(), &fr_, TRX_NEED_X);
        if (!have_) {
            const int bad = fr_.not_ok;
            release();
            throw Error(QMMM_ERR_FILE_FORMAT, path + ": no frame with coordinates" +
                                                  (bad ? std::string(" (the first frame is incomplete)") : ""));
        }
        n_ = fr_.natoms;
        if (n_ < 1) {
            release();
            throw Error(QMMM_ERR_FILE_FORMAT, path + ": frame 0 has " + std::to_string(n_) + " atoms");
        }
        try {
            atoms_ = topology.empty() ? numbered_atoms(n_) : atoms_from_topology(topology, n_, path);
        } catch (...) {
            release();
            throw;
        }
    }
    ~GmxReader() override { release(); }
    GmxReader(const GmxReader &) = delete;
    GmxReader &operator=(const GmxReader &) = delete;

    bool next(Frame &f) override {
        if (!pending()) return false;
        if (fr_.natoms != n_)
            throw Error(QMMM_ERR_FILE_FORMAT, path_ + ": frame " + std::to_string(frame_) + " has " +
                                                  std::to_string(fr_.natoms) + " atoms, the first frame had " +
                                                  std::to_string(n_));
        f.xyz.resize(3 * size_t(n_));
        for (int64_t i = 0; i < n_; ++i)
            for (int d = 0; d < 3; ++d) f.xyz[3 * i + d] = 10.0 * double(fr_.x[i][d]);
        for (int r = 0; r < 3; ++r)
            for (int d = 0; d < 3; ++d) f.box[3 * r + d] = 10.0 * double(fr_.box[r][d]);
        const double det = f.box[0] * (f.box[4] * f.box[8] - f.box[5] * f.box[7]) - f.box[1] * (f.box[3] * f.box[8] - f.box[5] * f.box[6]) +
              f.box[2] * (f.box[3] * f.box[7] - f.box[4] * f.box[6]);
        f.has_box = fr_.bBox && det != 0;  // GROMACS writes a zero box for a frame without one
        advance();
        return true;
    }
    bool skip() override {
        if (!pending()) return false;
        advance();
        return true;
    }

private:
    static std::vector<AtomInfo> numbered_atoms(int64_t n) {
        std::vector<AtomInfo> a(n);
        for (int64_t i = 0; i < n; ++i) a[i].resid = a[i].mol = i;
        return a;
    }
    // The frame in fr_ is the next one to hand out; an incomplete frame stops the file with an error.
    bool pending() {
        if (have_) return true;
        if (bad_)
            throw Error(QMMM_ERR_FILE_FORMAT, path_ + ": frame " + std::to_string(frame_) +
                                                  " is incomplete (truncated or corrupt file)");
        return false;
    }
    void advance() {
        ++frame_;
        have_ = read_next_frame(oenv_, status_, &fr_);
        bad_ = !have_ && fr_.not_ok != 0;
    }
    void release() noexcept {
        if (status_) close_trx(status_);
        status_ = nullptr;
        done_frame(&fr_);  // close_trx leaves the frame's coordinate array
        clear_trxframe(&fr_, true);
        if (oenv_) output_env_done(oenv_);
        oenv_ = nullptr;
    }

    std::string path_;
    gmx_output_env_t *oenv_ = nullptr;
    t_trxstatus *status_ = nullptr;
    t_trxframe fr_{};
    bool have_ = false, bad_ = false;
    int64_t n_ = 0, frame_ = 0;
};

}  // namespace

std::unique_ptr<Reader> open_gromacs(const std::string &path, const std::string &format, const std::string &topology) {
    return std::make_unique<GmxReader>(path, format, topology);
}

}  // namespace qmmm::rdfio
