// rdf_main.cpp -- qmmm-rdf: g(r) and coordination numbers between two selections of a trajectory.
// Lengths in Angstrom (the trajectory's unit; GRO nm are converted). Prints r g(r) n(r), writes them as
// text, a JSON summary, and a PNG through gnuplot when asked; a progress bar on a terminal.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "qmmm_accel.h"
#include "rdf_io.hpp"

namespace {

using qmmm::rdfio::IoError;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void check(int status, const char *what) {
    if (status != QMMM_SUCCESS)
        throw IoError(status, std::string(what) + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
}

void progress(int64_t done, int64_t total, double elapsed) {
    const double fps = elapsed > 0 ? done / elapsed : 0;
    char eta[32] = "?";
    if (total > 0 && fps > 0) std::snprintf(eta, sizeof eta, "%.0f s", (total - done) / fps);
    const int width = 30, fill = total > 0 ? static_cast<int>(width * std::min<double>(1.0, double(done) / total)) : 0;
    std::fprintf(stderr, "\r[%s%s] %lld%s frames  %.1f frames/s  ETA %s   ", std::string(fill, '#').c_str(),
                 std::string(width - fill, '.').c_str(), static_cast<long long>(done),
                 total > 0 ? ("/" + std::to_string(total)).c_str() : "", fps, eta);
}

int run(int argc, char **argv) {
    CLI::App app{"qmmm-rdf: radial distribution function g(r) and coordination number n(r) between two selections "
                 "of a trajectory (lengths in Angstrom)"};
    std::string traj, format = "auto", topology, sel1 = "all", sel2, out, json_out, png, backend = "auto", method = "auto",
                                                  kernel = "fast";
    double rmin = 0, rmax = 10;
    int bins = 200, threads = 0;
    int64_t first = 0, last = -1, stride = 1;
    bool exclude = false, quiet = false, no_progress = false;
    std::vector<double> box_opt;
    std::vector<int> devices;
    app.add_option("trajectory", traj, "XYZ/extended XYZ, PDB, GRO, LAMMPS dump (.lammpstrj, .dump) or DCD")
        ->required()->check(CLI::ExistingFile);
    app.add_option("--format", format, "input format if not from the extension")
        ->check(CLI::IsMember({"auto", "xyz", "pdb", "gro", "lammps", "dcd"}));
    app.add_option("--top", topology, "topology for a DCD (PDB, GRO or XYZ with the same atoms), for names")
        ->check(CLI::ExistingFile);
    app.add_option("--sel1", sel1, "first selection, e.g. \"name OW\", \"resname SOL and element O\", \"index 0-99\"")
        ->capture_default_str();
    app.add_option("--sel2", sel2, "second selection (default: the first)");
    app.add_option("--rmin", rmin, "histogram start, Angstrom")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--rmax", rmax, "histogram end, Angstrom (at most half the box's smallest width)")
        ->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--bins", bins, "number of bins")->capture_default_str()->check(CLI::Range(1, 1 << 24));
    app.add_option("--first", first, "first frame (0-based)")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--last", last, "last frame, inclusive (-1: to the end)")->capture_default_str();
    app.add_option("--stride", stride, "use every n-th frame")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_flag("--exclude-same-molecule", exclude, "leave out pairs in the same molecule (residue; LAMMPS mol)");
    app.add_option("--box", box_opt, "box if the file has none: a b c [alpha beta gamma] (Angstrom, degrees) or 9 "
                                     "cell-vector components")->expected(3, 9);
    app.add_option("--backend", backend, "auto, cpu or cuda")->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--devices", devices, "GPUs to use, e.g. --devices 0 1 (default 0)")->delimiter(',');
    app.add_option("--method", method, "pair search: auto, brute or cells")->capture_default_str()
        ->check(CLI::IsMember({"auto", "brute", "cells"}));
    app.add_option("--kernel", kernel, "GPU kernel: fast or seed (the paper's scheme, for comparison)")
        ->capture_default_str()->check(CLI::IsMember({"fast", "seed"}));
    app.add_option("--threads", threads, "CPU threads (0: OpenMP default)")->check(CLI::NonNegativeNumber);
    app.add_option("-o,--output", out, "write r g(r) n(r) as text here");
    app.add_option("--json", json_out, "write a JSON summary here");
    app.add_option("--png", png, "plot g(r) and n(r) to this PNG with gnuplot");
    app.add_flag("-q,--quiet", quiet, "do not print the table");
    app.add_flag("--no-progress", no_progress, "no progress bar");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        return app.exit(e);
    }
    if (box_opt.size() != 0 && box_opt.size() != 3 && box_opt.size() != 6 && box_opt.size() != 9)
        throw IoError(QMMM_ERR_INVALID_ARG, "--box takes 3, 6 or 9 numbers");
    if (last >= 0 && last < first) throw IoError(QMMM_ERR_INVALID_ARG, "--last is before --first");

    const auto t_start = Clock::now();
    auto reader = qmmm::rdfio::open_trajectory(traj, format, topology);
    qmmm::rdfio::Frame fr;
    int64_t index = 0;  // index of the frame in fr
    bool have = false;
    for (; index <= first; ++index) {
        have = index == first ? reader->next(fr) : reader->skip();
        if (!have) throw IoError(QMMM_ERR_FILE_FORMAT, traj + ": has only " + std::to_string(index) + " frame(s); --first is " +
                                                           std::to_string(first));
    }
    index = first;
    const auto &atoms = reader->atoms();
    const auto s1 = qmmm::rdfio::select(atoms, sel1);
    const auto s2 = qmmm::rdfio::select(atoms, sel2.empty() ? sel1 : sel2);
    if (s1.empty()) throw IoError(QMMM_ERR_INVALID_ARG, "selection 1 '" + sel1 + "' matches no atom (of " + std::to_string(atoms.size()) + ")");
    if (s2.empty()) throw IoError(QMMM_ERR_INVALID_ARG, "selection 2 '" + sel2 + "' matches no atom (of " + std::to_string(atoms.size()) + ")");
    double box_fixed[9] = {0};
    if (box_opt.size() == 9) std::copy(box_opt.begin(), box_opt.end(), box_fixed);
    else if (!box_opt.empty()) {
        const bool ang = box_opt.size() == 6;
        qmmm::rdfio::box_from_lengths_angles(box_opt[0], box_opt[1], box_opt[2], ang ? box_opt[3] : 90, ang ? box_opt[4] : 90,
                                             ang ? box_opt[5] : 90, box_fixed);
    }

    qmmm_rdf_options opt;
    qmmm_rdf_options_default(&opt);
    opt.backend = backend == "cpu" ? QMMM_BACKEND_CPU : backend == "cuda" ? QMMM_BACKEND_CUDA : QMMM_BACKEND_AUTO;
    opt.method = method == "brute" ? QMMM_RDF_METHOD_BRUTE : method == "cells" ? QMMM_RDF_METHOD_CELLS : QMMM_RDF_METHOD_AUTO;
    opt.kernel = kernel == "seed" ? QMMM_RDF_KERNEL_SEED : QMMM_RDF_KERNEL_FAST;
    opt.n_threads = threads;
    if (devices.size() > QMMM_RDF_MAX_DEVICES) throw IoError(QMMM_ERR_INVALID_ARG, "too many --devices");
    opt.n_devices = static_cast<int32_t>(devices.size());
    std::copy(devices.begin(), devices.end(), opt.devices);
    qmmm_rdf h = nullptr;
    check(qmmm_rdf_create(&h, rmin, rmax, bins, &opt), "creating the RDF");
    struct Guard {
        qmmm_rdf h;
        ~Guard() { qmmm_rdf_destroy(h); }
    } guard{h};
    std::vector<int64_t> mol1, mol2;
    if (exclude) {
        for (auto i : s1) mol1.push_back(atoms[i].mol);
        for (auto i : s2) mol2.push_back(atoms[i].mol);
    }
    check(qmmm_rdf_set_selections(h, static_cast<int64_t>(s1.size()), s1.data(), exclude ? mol1.data() : nullptr,
                                  static_cast<int64_t>(s2.size()), s2.data(), exclude ? mol2.data() : nullptr),
          "selections");
    qmmm_rdf_stats st{};
    qmmm_rdf_stats_last(h, &st);

    const int64_t total_hint = [&] {
        int64_t n = reader->n_frames_hint();
        if (last >= 0) n = n < 0 ? last + 1 : std::min(n, last + 1);
        return n < 0 ? int64_t{-1} : (n - first + stride - 1) / stride;
    }();
    const bool bar = !no_progress && isatty(2);
    // Frames go to the library in batches: several GPUs then count whole frames in parallel and the
    // preparation of one frame overlaps the counting of the previous one (qmmm_rdf_add_frames). A batch
    // holds at most ~256 MB of coordinates.
    const size_t per_frame = 3 * (s1.size() + s2.size());
    const bool gpu = opt.backend != QMMM_BACKEND_CPU;
    const size_t batch = gpu ? std::max<size_t>(1, std::min<size_t>(4 * std::max<size_t>(1, devices.size()),
                                                                     (size_t(32) << 20) / per_frame))
                             : 1;
    std::vector<double> x1(3 * s1.size() * batch), x2(3 * s2.size() * batch), boxes(9 * batch);
    std::vector<int64_t> indices;
    double t_read = secs(t_start, Clock::now()), t_count = 0;
    int64_t used = 0;
    auto t_last_bar = Clock::now();
    const auto count = [&] {  // the batch; on error frame by frame, so the message names the trajectory frame
        const int64_t nb = static_cast<int64_t>(indices.size());
        if (nb == 0) return;
        const auto t0 = Clock::now();
        int s = qmmm_rdf_add_frames(h, nb, x1.data(), x2.data(), boxes.data());
        for (int64_t k = 0; s != QMMM_SUCCESS && k < nb; ++k) {
            s = qmmm_rdf_add_frame(h, &x1[3 * s1.size() * k], &x2[3 * s2.size() * k], &boxes[9 * k]);
            if (s != QMMM_SUCCESS)
                throw IoError(s, "frame " + std::to_string(indices[k]) + ": " + qmmm_status_string(s) + ": " +
                                     qmmm_error_message());
            if (k + 1 == nb) s = QMMM_SUCCESS;
        }
        const auto t1 = Clock::now();
        t_count += secs(t0, t1);
        used += nb;
        indices.clear();
        if (bar && secs(t_last_bar, t1) > 0.2) progress(used, total_hint, secs(t_start, t1)), t_last_bar = t1;
    };
    while (have) {
        const double *box = box_opt.empty() ? fr.box : box_fixed;
        if (box_opt.empty() && !fr.has_box)
            throw IoError(QMMM_ERR_FILE_FORMAT, traj + ": frame " + std::to_string(index) + " has no periodic box; give --box");
        const size_t k = indices.size();
        for (size_t a = 0; a < s1.size(); ++a)
            std::copy(&fr.xyz[3 * s1[a]], &fr.xyz[3 * s1[a]] + 3, &x1[3 * (s1.size() * k + a)]);
        for (size_t a = 0; a < s2.size(); ++a)
            std::copy(&fr.xyz[3 * s2[a]], &fr.xyz[3 * s2[a]] + 3, &x2[3 * (s2.size() * k + a)]);
        std::copy(box, box + 9, &boxes[9 * k]);
        indices.push_back(index);
        if (indices.size() == batch) count();
        // next frame to use
        have = false;
        const auto r0 = Clock::now();
        for (int64_t k = 1; k <= stride; ++k) {
            if (last >= 0 && index + k > last) break;
            const bool ok = k == stride ? reader->next(fr) : reader->skip();
            if (!ok) break;
            if (k == stride) have = true, index += stride;
        }
        t_read += secs(r0, Clock::now());
    }
    count();
    const double t_total = secs(t_start, Clock::now());
    if (bar) progress(used, used, t_total), std::fprintf(stderr, "\n");
    qmmm_rdf_stats_last(h, &st);

    std::vector<double> r(bins), g(bins), n(bins), vol(1);
    std::vector<int64_t> hist(bins);
    int64_t frames = 0;
    check(qmmm_rdf_results(h, r.data(), g.data(), n.data(), hist.data(), &frames, vol.data()), "results");
    std::ostringstream table;
    table << "# qmmm-rdf " << traj << "  sel1 '" << sel1 << "' (" << s1.size() << " atoms)  sel2 '"
          << (sel2.empty() ? sel1 : sel2) << "' (" << s2.size() << " atoms)  frames " << frames << "\n"
          << "# r (Angstrom, bin centre)  g(r)  n(r) (at the bin's upper edge)\n";
    char line[128];
    for (int k = 0; k < bins; ++k) {
        std::snprintf(line, sizeof line, "%12.6f %14.8f %14.8f\n", r[k], g[k], n[k]);
        table << line;
    }
    if (!quiet) std::fputs(table.str().c_str(), stdout);
    if (!out.empty()) {
        std::ofstream f(out);
        if (!(f << table.str())) throw IoError(QMMM_ERR_FILE_OPEN, out + ": cannot write");
    }
    if (!json_out.empty()) {
        int kmax = 0;
        for (int k = 1; k < bins; ++k) if (g[k] > g[kmax]) kmax = k;
        nlohmann::json j = {{"tool", "qmmm-rdf"}, {"version", qmmm_version_string()}, {"trajectory", traj},
                            {"length_unit", "Angstrom"}, {"sel1", sel1}, {"sel2", sel2.empty() ? sel1 : sel2},
                            {"n1", s1.size()}, {"n2", s2.size()}, {"identical", st.identical != 0},
                            {"exclude_same_molecule", exclude}, {"r_min", rmin}, {"r_max", rmax}, {"bins", bins},
                            {"frames", frames}, {"first", first}, {"last", last}, {"stride", stride},
                            {"avg_volume", vol[0]}, {"n_pairs_per_frame", st.n_pairs},
                            {"backend", st.backend == QMMM_BACKEND_CUDA ? "cuda" : "cpu"},
                            {"method", st.method == QMMM_RDF_METHOD_CELLS ? "cells" : "brute"},
                            {"seconds_total", t_total}, {"seconds_read", t_read}, {"seconds_rdf", t_count},
                            {"frames_per_second", t_total > 0 ? frames / t_total : 0.0},
                            {"peak", {{"r", r[kmax]}, {"g", g[kmax]}}},
                            {"r", r}, {"g", g}, {"n", n}, {"hist", hist}};
        std::ofstream f(json_out);
        if (!(f << j.dump(1) << "\n")) throw IoError(QMMM_ERR_FILE_OPEN, json_out + ": cannot write");
    }
    if (!png.empty()) {
        std::string data = out;
        if (data.empty()) {
            data = png + ".dat";
            std::ofstream f(data);
            f << table.str();
        }
        std::string cmd = "gnuplot 2>&1";
        FILE *p = popen(cmd.c_str(), "w");
        if (!p) throw IoError(QMMM_ERR_FILE_OPEN, "cannot run gnuplot (install gnuplot-nox)");
        std::fprintf(p,
                     "set terminal png size 900,600\nset output '%s'\nset xlabel 'r (Angstrom)'\nset ylabel 'g(r)'\n"
                     "set y2label 'n(r)'\nset ytics nomirror\nset y2tics\nset key top left\n"
                     "plot '%s' using 1:2 with lines lw 2 title 'g(r)', '' using 1:3 axes x1y2 with lines dt 2 title 'n(r)'\n",
                     png.c_str(), data.c_str());
        const int rc = pclose(p);
        if (rc != 0) throw IoError(QMMM_ERR_FILE_OPEN, "gnuplot failed (exit " + std::to_string(rc) + ") writing " + png);
    }
    if (!quiet)
        std::fprintf(stderr, "qmmm-rdf: %lld frames, %.3f s (reading %.3f s, RDF %.3f s), %.1f frames/s, %s %s\n",
                     static_cast<long long>(frames), t_total, t_read, t_count, t_total > 0 ? frames / t_total : 0.0,
                     st.backend == QMMM_BACKEND_CUDA ? "cuda" : "cpu", st.method == QMMM_RDF_METHOD_CELLS ? "cells" : "brute");
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const IoError &e) {
        std::fprintf(stderr, "qmmm-rdf: error: %s\n", e.what());
        return e.status == QMMM_ERR_INVALID_ARG ? 2 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "qmmm-rdf: error: %s\n", e.what());
        return 1;
    }
}
