// rdf_main.cpp -- qmmm-rdf: g(r) and coordination numbers between pairs of selections of a trajectory.
// Lengths in Angstrom (the trajectory's unit; GRO, XTC and TRR nm are converted). Several pairs in one pass
// (--pairs "name OW:name OW" "name OW:name HW1 HW2" ...): every frame is read once and counted for each pair.
// A reader thread decodes and a gather thread copies the next frames while the library counts the previous
// ones (rdf_pipe.hpp).
// Prints r and one column set per pair, writes them as text, a JSON summary (with coordination numbers) and a
// PNG through gnuplot when asked; a progress bar on a terminal. Every output is checked (and its temporary file
// made) before the trajectory is opened, and all are renamed into place only after all are complete
// (atomic_output.hpp); an existing output is kept unless --force.
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <limits>
#include <string>
#include <vector>

#include "atomic_output.hpp"
#include "cli_checks.hpp"
#include "qmmm_accel.h"
#include "rdf_io.hpp"
#include "rdf_pipe.hpp"

namespace {

using qmmm::Error;
namespace cli = qmmm::cli;
using Clock = std::chrono::steady_clock;

double secs(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

void check(int status, const std::string &what) {
    if (status != QMMM_SUCCESS)
        throw Error(status, what + ": " + qmmm_status_string(status) + ": " + qmmm_error_message());
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

// Whether `prog` is an executable in a folder of PATH.
bool on_path(const std::string &prog) {
    const char *path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
        if (::access(((d.empty() ? "." : d) + "/" + prog).c_str(), X_OK) == 0) return true;
    return false;
}

// A gnuplot single-quoted string: a quote inside is doubled.
std::string gp_quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
    return q + "'";
}

// The plot of g(r) (or the --norm column) and n(r) of every pair from the table in `data`, by gnuplot into `png`
// (a temporary file). gnuplot's stdout goes to /dev/null: it writes the PNG there when it cannot open `png`, and
// nothing binary may reach this program's stdout; its messages (stderr) reach the user.
void plot(const std::string &data, const std::string &png, const std::string &name, const char *col_name,
          const std::vector<std::string> &labels) {
    struct sigaction ign {}, old {};
    ign.sa_handler = SIG_IGN;  // a gnuplot that exits early: EPIPE on a write here, reported below, not SIGPIPE
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    FILE *p = popen("gnuplot >/dev/null", "w");
    if (!p) {
        sigaction(SIGPIPE, &old, nullptr);
        throw Error(QMMM_ERR_FILE_OPEN, "cannot run gnuplot (install gnuplot-nox)");
    }
    std::fprintf(p, "set terminal png size 900,600\nset output %s\nset xlabel 'r (Angstrom)'\nset ylabel '%s'\n"
                    "set y2label 'n(r)'\nset ytics nomirror\nset y2tics\nset key top left\nplot ",
                 gp_quote(png).c_str(), col_name);
    for (size_t q = 0; q < labels.size(); ++q)
        std::fprintf(p, "%s%s using 1:%zu with lines lw 2 title %s, '' using 1:%zu axes x1y2 with lines dt 2 title %s",
                     q ? ", " : "", gp_quote(data).c_str(), 2 + 2 * q, gp_quote(labels[q]).c_str(), 3 + 2 * q,
                     gp_quote("n " + labels[q]).c_str());
    std::fprintf(p, "\n");
    const int rc = pclose(p);
    sigaction(SIGPIPE, &old, nullptr);
    struct stat st {};
    if (rc != 0 || ::stat(png.c_str(), &st) != 0 || st.st_size == 0)
        throw Error(QMMM_ERR_FILE_OPEN, "gnuplot failed (exit status " + std::to_string(rc) + ") writing " + name);
}

// "A:B" -> (A, B); "A" -> (A, A). The colon separates the two selections (no selection keyword uses one).
std::pair<std::string, std::string> split_pair(const std::string &p) {
    const auto c = p.find(':');
    if (c == std::string::npos) return {p, p};
    if (p.find(':', c + 1) != std::string::npos)
        throw Error(QMMM_ERR_INVALID_ARG, "--pairs '" + p + "': one ':' between the two selections");
    return {p.substr(0, c), p.substr(c + 1)};
}

// What one pair of selections accumulates.
struct Pair {
    std::string label, expr1, expr2;
    int sel1 = 0, sel2 = 0;  // indices into the gathered selections
    bool identical = false;
    qmmm_rdf h = nullptr;
    std::vector<double> r, g, n, dens, count;
    std::vector<int64_t> hist;
    int64_t frames = 0;
    double volume = 0;
    qmmm_rdf_stats st{};
    double seconds = 0;
};

int run(int argc, char **argv) {
    CLI::App app{"qmmm-rdf: radial distribution functions g(r) and coordination numbers n(r) between pairs of "
                 "selections of a trajectory (lengths in Angstrom)"};
    app.name("qmmm-rdf");
    std::string traj, format = "auto", topology, sel1 = "all", sel2, out, json_out, png, backend = "auto",
                      method = "auto", norm = "rdf";
    std::vector<std::string> pair_specs;
    double rmin = 0, rmax = 10, cut = 0;
    int bins = 200, threads = 0;
    int64_t first = 0, last = -1, stride = 1;
    bool exclude = false, quiet = false, no_progress = false, read_only = false, force = false;
    std::vector<double> box_opt;
    std::vector<int> devices;
    app.add_option("trajectory", traj, "XYZ/extended XYZ, PDB, GRO, LAMMPS dump (.lammpstrj, .dump), DCD, XTC or TRR "
                                       "(XTC/TRR: builds with GROMACS's library)")
        ->required()->check(CLI::ExistingFile);
    app.add_option("--format", format, "input format if not from the extension")
        ->check(CLI::IsMember({"auto", "xyz", "pdb", "gro", "lammps", "dcd", "xtc", "trr"}));
    app.add_option("--top", topology, "topology for a DCD, XTC or TRR (PDB, GRO or XYZ with the same atoms), for names")
        ->check(CLI::ExistingFile);
    app.add_option("--sel1", sel1, "first selection, e.g. \"name OW\", \"resname SOL and element O\", \"index 0-99\"")
        ->capture_default_str();
    app.add_option("--sel2", sel2, "second selection (default: the first)");
    app.add_option("--pairs", pair_specs,
                   "several pairs in one pass, each \"SEL1:SEL2\" (or one selection paired with itself), e.g. "
                   "--pairs \"name OW:name OW\" \"name OW:name HW1 HW2\"; replaces --sel1/--sel2");
    app.add_option("--rmin", rmin, "histogram start, Angstrom")->capture_default_str()->check(cli::finite_in(0, 1e6, "Angstrom"));
    app.add_option("--rmax", rmax, "histogram end, Angstrom (at most half the box's smallest width)")
        ->capture_default_str()->check(cli::positive_up_to(1e6, "Angstrom"));
    app.add_option("--cut", cut, "leave out pairs closer than this, Angstrom (gmx rdf -cut; their bins stay 0, the "
                                 "normalisation is unchanged)")
        ->capture_default_str()->check(cli::finite_in(0, 1e6, "Angstrom"));
    app.add_option("--bins", bins, "number of bins")->capture_default_str()->check(cli::int_in(1, 1 << 24));
    app.add_option("--norm", norm, "normalisation of the second column: rdf (g(r)), number_density (sel2 atoms per "
                                   "Angstrom^3 around a sel1 atom) or none (sel2 atoms per bin around a sel1 atom), "
                                   "as gmx rdf -norm")
        ->capture_default_str()->check(CLI::IsMember({"rdf", "number_density", "none"}));
    app.add_option("--first", first, "first frame (0-based)")->capture_default_str()->check(cli::int_in(0, INT64_MAX));
    app.add_option("--last", last, "last frame, inclusive (-1: to the end)")->capture_default_str()->check(cli::int_in(-1, INT64_MAX));
    app.add_option("--stride", stride, "use every n-th frame")->capture_default_str()->check(cli::int_in(1, INT64_MAX));
    app.add_flag("--exclude-same-molecule", exclude, "leave out pairs in the same molecule (residue; LAMMPS mol)");
    app.add_option("--box", box_opt, "box if the file has none: a b c [alpha beta gamma] (Angstrom, degrees) or 9 "
                                     "cell-vector components")
        ->expected(3, 9)->check(cli::finite_in(-1e6, 1e6));
    app.add_option("--backend", backend, "auto, cpu or cuda")->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--devices", devices, "GPUs to use, e.g. --devices 0 1 (default 0)")->delimiter(',')->check(cli::int_in(0, 1023));
    app.add_option("--method", method, "pair search: auto, brute or cells")->capture_default_str()
        ->check(CLI::IsMember({"auto", "brute", "cells"}));
    app.add_option("--threads", threads, "CPU threads (0: every core; with a GPU, all but five, kept for reading and gathering frames)")->check(cli::int_in(0, 4096));
    app.add_option("-o,--output", out, "write r and the columns of every pair as text here");
    app.add_option("--json", json_out, "write a JSON summary here");
    app.add_option("--png", png, "plot g(r) and n(r) to this PNG with gnuplot");
    app.add_flag("--force", force, "replace existing output files (otherwise an existing -o, --json or --png is an "
                                   "error); outputs are written to a temporary file and renamed when all are complete");
    app.add_flag("-q,--quiet", quiet, "do not print the table");
    app.add_flag("--no-progress", no_progress, "no progress bar");
    app.add_flag("--read-only", read_only, "read and gather the frames but count nothing (the reader's own speed)");
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    if (box_opt.size() != 0 && box_opt.size() != 3 && box_opt.size() != 6 && box_opt.size() != 9)
        throw Error(QMMM_ERR_INVALID_ARG, "--box takes 3, 6 or 9 numbers");
    if (last >= 0 && last < first) throw Error(QMMM_ERR_INVALID_ARG, "--last is before --first");
    if (!(rmax > rmin)) throw Error(QMMM_ERR_INVALID_ARG, "--rmax must be larger than --rmin");
    if (!pair_specs.empty() && (app.count("--sel1") || app.count("--sel2")))
        throw Error(QMMM_ERR_INVALID_ARG, "give either --pairs or --sel1/--sel2");
    if (devices.size() > QMMM_RDF_MAX_DEVICES) throw Error(QMMM_ERR_INVALID_ARG, "too many --devices");
    const auto same = [](const std::string &a, const std::string &b) {
        return !a.empty() && !b.empty() && qmmm::tools::same_path(a, b);
    };
    if (same(out, json_out) || same(out, png) || same(json_out, png))
        throw Error(QMMM_ERR_INVALID_ARG, "-o, --json and --png name the same file: give each its own");
    // Every output before any work: the folders and names, the temporary files, gnuplot.
    std::unique_ptr<qmmm::tools::AtomicOutput> out_file, json_file, png_file;
    if (!out.empty()) out_file = std::make_unique<qmmm::tools::AtomicOutput>(out, force);
    if (!json_out.empty()) json_file = std::make_unique<qmmm::tools::AtomicOutput>(json_out, force);
    if (!png.empty()) png_file = std::make_unique<qmmm::tools::AtomicOutput>(png, force);
    if (!png.empty() && !on_path("gnuplot"))
        throw Error(QMMM_ERR_FILE_OPEN, "--png " + png + ": gnuplot is not on PATH (install gnuplot-nox)");

    const auto t_start = Clock::now();
    auto reader = qmmm::rdfio::open_trajectory(traj, format, topology);
    qmmm::rdfio::Frame fr;
    for (int64_t k = 0; k < first; ++k)
        if (!reader->skip())
            throw Error(QMMM_ERR_FILE_FORMAT, traj + ": has only " + std::to_string(k) + " frame(s); --first is " +
                                                  std::to_string(first));
    if (!reader->next(fr))
        throw Error(QMMM_ERR_FILE_FORMAT, traj + ": has only " + std::to_string(first) + " frame(s); --first is " +
                                              std::to_string(first));
    const auto &atoms = reader->atoms();

    // Pairs and the distinct selections they use (each gathered once per frame).
    std::vector<Pair> pairs;
    if (pair_specs.empty()) pair_specs.push_back(sel1 + ":" + (sel2.empty() ? sel1 : sel2));
    std::vector<std::string> sel_exprs;
    std::vector<std::vector<int64_t>> sel_atoms;
    const auto sel_index = [&](const std::string &e) {
        for (size_t k = 0; k < sel_exprs.size(); ++k)
            if (sel_exprs[k] == e) return static_cast<int>(k);
        auto s = qmmm::rdfio::select(atoms, e);
        if (s.empty())
            throw Error(QMMM_ERR_INVALID_ARG, "selection '" + e + "' matches no atom (of " + std::to_string(atoms.size()) + ")");
        sel_exprs.push_back(e), sel_atoms.push_back(std::move(s));
        return static_cast<int>(sel_exprs.size() - 1);
    };
    for (const auto &spec : pair_specs) {
        Pair p;
        std::tie(p.expr1, p.expr2) = split_pair(spec);
        p.sel1 = sel_index(p.expr1), p.sel2 = sel_index(p.expr2);
        p.identical = p.sel1 == p.sel2;
        p.label = p.expr1 + " : " + p.expr2;
        pairs.push_back(std::move(p));
    }
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
    opt.n_threads = threads;
    // On a GPU the library's threads only prepare frames, beside this tool's reader and gather threads: by
    // default leave cores for those (on 16 cores, the 3-pair DCD rate was half the reader's with every core asked).
    if (threads == 0 && backend != "cpu") {
        int n_dev = 0;
        std::string env = std::getenv("QMMM_BACKEND") ? std::getenv("QMMM_BACKEND") : "";
        for (auto &c : env) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const bool env_cpu = env == "cpu";
        if (backend == "cuda" || (!env_cpu && qmmm_cuda_device_count(&n_dev) == QMMM_SUCCESS && n_dev > 0))
            opt.n_threads = std::max(2, omp_get_num_procs() - 5);
    }
    opt.n_devices = static_cast<int32_t>(devices.size());
    std::copy(devices.begin(), devices.end(), opt.devices);
    struct Guard {
        std::vector<Pair> &p;
        ~Guard() {
            for (auto &x : p)
                if (x.h) qmmm_rdf_destroy(x.h);
        }
    } guard{pairs};
    for (auto &p : pairs) {
        check(qmmm_rdf_create(&p.h, rmin, rmax, bins, &opt), "creating the RDF for '" + p.label + "'");
        if (cut > 0) check(qmmm_rdf_set_cut(p.h, cut), "--cut");
        const auto &a1 = sel_atoms[p.sel1], &a2 = sel_atoms[p.sel2];
        std::vector<int64_t> mol1, mol2;
        if (exclude) {
            for (auto i : a1) mol1.push_back(atoms[i].mol);
            for (auto i : a2) mol2.push_back(atoms[i].mol);
        }
        check(qmmm_rdf_set_selections(p.h, static_cast<int64_t>(a1.size()), a1.data(), exclude ? mol1.data() : nullptr,
                                      static_cast<int64_t>(a2.size()), a2.data(), exclude ? mol2.data() : nullptr),
              "selections of '" + p.label + "'");
    }

    const int64_t total_hint = [&] {
        // Frames [first, min(n, last + 1)) every stride-th, without overflow for --last or --stride near 2^63.
        int64_t n = reader->n_frames_hint();
        if (last >= 0 && last < std::numeric_limits<int64_t>::max()) n = n < 0 ? last + 1 : std::min(n, last + 1);
        if (n < 0) return int64_t{-1};
        const int64_t span = n - first;
        return span <= 0 ? int64_t{0} : span / stride + (span % stride != 0 ? 1 : 0);
    }();
    const bool bar = !no_progress && isatty(2);
    // Frames go to the library in batches: several GPUs then count whole frames in parallel and the preparation of
    // a frame overlaps the counting of the previous one (qmmm_rdf_add_frames); a call drains the GPU at its end,
    // so a batch is 16 frames per GPU where they fit in ~512 MB (3 batches circulate through the gather thread;
    // with 3 pairs, each batch fills and drains the GPU 3 times).
    size_t per_frame = 0;
    for (const auto &s : sel_atoms) per_frame += 3 * s.size();
    const bool batch_gpu = opt.backend != QMMM_BACKEND_CPU;
    const size_t batch = batch_gpu ? std::max<size_t>(1, std::min<size_t>(16 * std::max<size_t>(1, devices.size()),
                                                                          (size_t(64) << 20) / per_frame))
                                   : 1;
    cli::check_fits_memory(3.0 * double(batch) * double(per_frame), 8.0, "the frame buffers");

    qmmm::rdfpipe::Source src;
    src.reader = reader.get();
    src.traj = traj;
    src.first = first, src.last = last, src.stride = stride;
    src.box_fixed = box_opt.empty() ? nullptr : box_fixed;
    src.selections = &sel_atoms;
    qmmm::rdfpipe::Pipe pipe(src, std::move(fr), batch);
    double t_count = 0;
    int64_t used = 0;
    auto t_last_bar = Clock::now();
    for (qmmm::rdfpipe::Batch *b; (b = pipe.pop());) {
        const int64_t nb = static_cast<int64_t>(b->indices.size());
        const auto t0 = Clock::now();
        for (auto &p : pairs) {
            if (read_only) break;
            const auto tp = Clock::now();
            const double *x2 = p.identical ? nullptr : b->xyz[p.sel2].data();
            int s = qmmm_rdf_add_frames(p.h, nb, b->xyz[p.sel1].data(), x2, b->boxes.data());
            if (s != QMMM_SUCCESS) {  // again frame by frame, so the message names the trajectory frame
                const size_t n1 = sel_atoms[p.sel1].size(), n2 = sel_atoms[p.sel2].size();
                for (int64_t k = 0; k < nb; ++k) {
                    s = qmmm_rdf_add_frame(p.h, &b->xyz[p.sel1][3 * n1 * k], p.identical ? nullptr : &b->xyz[p.sel2][3 * n2 * k],
                                           &b->boxes[9 * k]);
                    if (s != QMMM_SUCCESS)
                        throw Error(s, "frame " + std::to_string(b->indices[k]) + " ('" + p.label + "'): " +
                                           qmmm_status_string(s) + ": " + qmmm_error_message());
                }
            }
            p.seconds += secs(tp, Clock::now());
        }
        const auto t1 = Clock::now();
        t_count += secs(t0, t1);
        used += nb;
        pipe.done(b);
        if (bar && secs(t_last_bar, t1) > 0.2) progress(used, total_hint, secs(t_start, t1)), t_last_bar = t1;
    }
    pipe.rethrow();
    const double t_total = secs(t_start, Clock::now());
    const double t_read = pipe.read_seconds();
    if (bar) progress(used, used, t_total), std::fprintf(stderr, "\n");

    // Results: the library's g and n; number_density and none from the integer histogram (gmx rdf -norm).
    const double dr = (rmax - rmin) / bins;
    for (auto &p : pairs) {
        p.r.resize(bins), p.g.resize(bins), p.n.resize(bins), p.hist.resize(bins), p.dens.resize(bins), p.count.resize(bins);
        check(qmmm_rdf_results(p.h, p.r.data(), p.g.data(), p.n.data(), p.hist.data(), &p.frames, &p.volume), "results");
        qmmm_rdf_stats_last(p.h, &p.st);
        const double n1 = double(sel_atoms[p.sel1].size()), per_pair = p.identical ? 2.0 : 1.0;
        for (int k = 0; k < bins; ++k) {
            const double lo = rmin + k * dr, hi = lo + dr;
            const double c = p.frames ? double(p.hist[k]) * per_pair / (double(p.frames) * n1) : 0.0;
            p.count[k] = c;
            p.dens[k] = c / (4.18879020478639098 * (hi * hi * hi - lo * lo * lo));
        }
    }
    const auto &col = [&](const Pair &p) -> const std::vector<double> & {
        return norm == "rdf" ? p.g : norm == "number_density" ? p.dens : p.count;
    };
    const char *col_name = norm == "rdf" ? "g(r)" : norm == "number_density" ? "rho(r) (1/Angstrom^3)" : "N(r) per bin";
    std::ostringstream table;
    table << "# qmmm-rdf " << traj << "  frames " << (pairs.empty() ? 0 : pairs[0].frames) << "  norm " << norm;
    if (cut > 0) table << "  cut " << cut;
    table << "\n";
    for (size_t q = 0; q < pairs.size(); ++q)
        table << "# pair " << q + 1 << ": sel1 '" << pairs[q].expr1 << "' (" << sel_atoms[pairs[q].sel1].size()
              << " atoms)  sel2 '" << pairs[q].expr2 << "' (" << sel_atoms[pairs[q].sel2].size() << " atoms)\n";
    table << "# r (Angstrom, bin centre)";
    for (size_t q = 0; q < pairs.size(); ++q)
        table << "  " << col_name << "[" << q + 1 << "]  n(r)[" << q + 1 << "] (at the bin's upper edge)";
    table << "\n";
    char line[64];
    for (int k = 0; k < bins; ++k) {
        std::snprintf(line, sizeof line, "%12.6f", pairs[0].r[k]);
        table << line;
        for (const auto &p : pairs) {
            std::snprintf(line, sizeof line, " %14.8g %14.8f", col(p)[k], p.n[k]);
            table << line;
        }
        table << "\n";
    }
    if (!quiet) std::fputs(table.str().c_str(), stdout);
    if (out_file) out_file->write(table.str());
    const int64_t frames = pairs[0].frames;
    if (!json_out.empty()) {
        nlohmann::json jp = nlohmann::json::array();
        for (const auto &p : pairs) {
            int kmax = 0;
            for (int k = 1; k < bins; ++k)
                if (p.g[k] > p.g[kmax]) kmax = k;
            // Coordination number at the first minimum of g after its highest peak (the first shell).
            int kmin = kmax;
            while (kmin + 1 < bins && p.g[kmin + 1] <= p.g[kmin]) ++kmin;
            jp.push_back({{"sel1", p.expr1}, {"sel2", p.expr2}, {"n1", sel_atoms[p.sel1].size()},
                          {"n2", sel_atoms[p.sel2].size()}, {"identical", p.identical},
                          {"n_pairs_per_frame", p.st.n_pairs}, {"avg_volume", p.volume}, {"seconds_rdf", p.seconds},
                          {"peak", {{"r", p.r[kmax]}, {"g", p.g[kmax]}}},
                          {"first_minimum", {{"r_upper_edge", rmin + (kmin + 1) * dr}, {"g", p.g[kmin]},
                                             {"coordination_number", p.n[kmin]}}},
                          {"g", p.g}, {"n", p.n}, {"number_density", p.dens}, {"count_per_bin", p.count},
                          {"hist", p.hist}});
        }
        const auto &p0 = pairs[0];
        nlohmann::json j = {{"tool", "qmmm-rdf"}, {"version", qmmm_version_string()}, {"trajectory", traj},
                            {"length_unit", "Angstrom"}, {"norm", norm}, {"cut", cut},
                            {"exclude_same_molecule", exclude}, {"r_min", rmin}, {"r_max", rmax}, {"bins", bins},
                            {"frames", frames}, {"first", first}, {"last", last}, {"stride", stride},
                            {"backend", p0.st.backend == QMMM_BACKEND_CUDA ? "cuda" : "cpu"},
                            {"method", p0.st.method == QMMM_RDF_METHOD_CELLS ? "cells" : "brute"},
                            {"read_only", read_only}, {"seconds_total", t_total}, {"seconds_read", t_read},
                            {"seconds_rdf", t_count}, {"frames_read", used},
                            {"frames_per_second", t_total > 0 ? double(used) / t_total : 0.0},
                            {"r", p0.r}, {"pairs", jp}};
        // One pair: its columns also at the top level, as before several pairs existed.
        if (pairs.size() == 1)
            for (const char *k : {"sel1", "sel2", "n1", "n2", "identical", "peak", "g", "n", "hist"}) j[k] = jp[0][k];
        if (pairs.size() == 1) j["avg_volume"] = p0.volume, j["n_pairs_per_frame"] = p0.st.n_pairs;
        json_file->write(j.dump(1) + "\n");
    }
    if (png_file) {
        // gnuplot reads the table from -o's temporary file, or from a scratch file beside the PNG.
        std::unique_ptr<qmmm::tools::TempFile> scratch;
        std::string data;
        if (out_file) {
            out_file->finish();
            data = out_file->temp_path();
        } else {
            scratch = std::make_unique<qmmm::tools::TempFile>(png);
            const std::string t = table.str();
            if (std::fwrite(t.data(), 1, t.size(), scratch->file()) != t.size())
                throw Error(QMMM_ERR_FILE_OPEN, png + ": cannot write gnuplot's data beside it");
            scratch->close(png + " (gnuplot's data)");
            data = scratch->path();
        }
        png_file->finish();
        std::vector<std::string> labels;
        for (const auto &p : pairs) labels.push_back(p.label);
        plot(data, png_file->temp_path(), png, col_name, labels);
    }
    // Every output complete: only now do they replace anything.
    for (auto *f : {out_file.get(), json_file.get(), png_file.get()})
        if (f) f->commit();
    if (!quiet)
        std::fprintf(stderr, "qmmm-rdf: %lld frames, %zu pair(s), %.3f s (reading %.3f s, RDF %.3f s), %.1f frames/s, %s %s\n",
                     static_cast<long long>(used), pairs.size(), t_total, t_read, t_count,
                     t_total > 0 ? used / t_total : 0.0, pairs[0].st.backend == QMMM_BACKEND_CUDA ? "cuda" : "cpu",
                     pairs[0].st.method == QMMM_RDF_METHOD_CELLS ? "cells" : "brute");
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const Error &e) {  // readers, selections, arguments, library calls and cli::check_fits_memory
        std::fprintf(stderr, "qmmm-rdf: error: %s\n", e.what());
        return e.status == QMMM_ERR_INVALID_ARG ? cli::kUsageError : e.status;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "qmmm-rdf: error: %s\n", e.what());
        return 99;
    }
}
