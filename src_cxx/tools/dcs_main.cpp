// dcs_main.cpp -- qmmm-dcs: electrostatic potential maps by direct Coulomb summation, and ion placement.
// Reads PQR / PDB (charges in columns 79-80) / XYZ with charges (Angstrom); writes OpenDX (Angstrom) or
// Gaussian cube (bohr). Map units: kT/e at --temperature (default, as APBS writes), V, or au (hartree/e).
// Every number option is checked (finite, in range) by cli_checks.hpp before use, and the lattice size before
// allocation. A lattice point on an atom gets the potential of the other atoms (QMMM_DCS_ON_ATOM_OTHERS). Outputs
// are written all or nothing (atomic_output.hpp): an existing file is kept unless --force.
// Exit codes: 0 success; 2 usage error (bad option or value, unknown map extension); otherwise the
// library status (qmmm_accel.h): 3 non-finite input, 8 map too large for memory, 9 file cannot be opened,
// 10 malformed structure file (file:line), 5/6 --backend cuda without CUDA/GPU, 99 unexpected internal error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <new>

#include "atomic_output.hpp"
#include "cli_checks.hpp"
#include "dcs_io.hpp"

namespace {

namespace cli = qmmm::cli;

struct Progress {
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    static int call(int64_t done, int64_t total, void *self) {
        auto *p = static_cast<Progress *>(self);
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - p->t0).count();
        const double f = total ? static_cast<double>(done) / total : 1;
        const int w = 40, fill = static_cast<int>(f * w);
        std::fprintf(stderr, "\r[%.*s%*s] %5.1f%%  ETA %6.1f s ", fill, "########################################", w - fill,
                     "", 100 * f, f > 0 ? el * (1 - f) / f : 0.0);
        if (done == total) std::fputc('\n', stderr);
        std::fflush(stderr);
        return 0;
    }
};

int die(int status, const std::string &msg) {
    std::fprintf(stderr, "qmmm-dcs: error: %s\n", msg.c_str());
    return status ? status : 1;
}

int run(int argc, char **argv) {
    CLI::App app{"qmmm-dcs: electrostatic potential map by direct Coulomb summation (sum q/r), and ion placement", "qmmm-dcs"};
    app.footer("A lattice point on an atom (within 1e-10 bohr; e.g. the centre of the default lattice around one ion) "
               "gets the potential of the other atoms there: the atom's own q/r, infinite at r = 0, is left out, as "
               "quantum chemistry codes report the potential at a nucleus. Points nearer an atom than single "
               "precision resolves are computed in double.\n"
               "Outputs are written to a temporary file in their folder and renamed when complete: a failed or "
               "interrupted run leaves no partial file, and an existing output is kept unless --force.\n"
               "Exit codes: 0 success, 2 usage error, else the library status (qmmm_accel.h: 3 non-finite input, "
               "5 no CUDA in this build, 6 no GPU, 8 out of memory, 9 cannot open a file (also an existing output "
               "without --force), 10 malformed file).");
    std::string input, output = "potential.dx", format, out_format, units = "kT", backend = "auto", precision = "single";
    std::string ions_out = "ions.pdb", ion_name;
    double spacing = 0.5, padding = 10.0, temperature = 298.15, ion_charge = 1.0, dmin_atoms = 5.0, dmin_ions = 5.0;
    std::vector<double> origin;
    std::vector<int64_t> counts;
    std::vector<int> devices;
    int64_t n_ions = 0;
    bool quiet = false, force = false;
    app.add_option("input", input, "structure: .pqr, .pdb (charges in columns 79-80) or .xyz (element x y z charge)")
        ->required()->check(CLI::ExistingFile);
    app.add_option("-o,--output", output, "map file: .dx (OpenDX, Angstrom) or .cube/.cub (Gaussian cube, bohr)")
        ->capture_default_str();
    app.add_option("--output-format", out_format, "map format if not from the -o extension: dx or cube")
        ->check(CLI::IsMember({"dx", "cube"}));
    app.add_option("--format", format, "input format if not from the extension")->check(CLI::IsMember({"pqr", "pdb", "xyz"}));
    // Ranges: lengths up to 1e4 Angstrom (1 micrometre); the lattice size is checked against memory below.
    app.add_option("-s,--spacing", spacing, "lattice spacing, Angstrom")->capture_default_str()
        ->check(cli::positive_up_to(1e4, "Angstrom"));
    app.add_option("-p,--padding", padding, "margin around the molecule, Angstrom")->capture_default_str()
        ->check(cli::finite_in(0, 1e4, "Angstrom"));
    app.add_option("--origin", origin, "explicit lattice origin x y z, Angstrom (with --counts)")->expected(3)
        ->check(cli::finite_in(-1e6, 1e6, "Angstrom"));
    app.add_option("--counts", counts, "explicit points per axis nx ny nz (with --origin)")->expected(3)
        ->check(cli::int_in(1, 1 << 30));
    app.add_option("-u,--units", units, "map units: kT (kT/e at --temperature), V, au (hartree/e)")
        ->capture_default_str()->check(CLI::IsMember({"kT", "V", "au"}));
    app.add_option("-T,--temperature", temperature, "temperature for kT/e, K")->capture_default_str()
        ->check(cli::positive_up_to(1e6, "K"));
    app.add_option("--backend", backend, "auto, cpu or cuda")->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--precision", precision, "single, mixed or double")->capture_default_str()
        ->check(CLI::IsMember({"single", "mixed", "double"}));
    app.add_option("--devices", devices, "GPU indices, e.g. --devices 0 1 (default 0)")->delimiter(',')
        ->check(cli::int_in(0, 1023));
    app.add_option("--place-ions", n_ions, "number of ions to place at potential extrema")->check(cli::int_in(0, 1000000));
    app.add_option("--ion-charge", ion_charge, "ion charge, e (nonzero)")->capture_default_str()
        ->check(cli::finite_in(-100, 100, "e"));
    app.add_option("--ion-name", ion_name, "ion atom/residue name in the PDB (default NA for +, CL for -)");
    app.add_option("--ion-min-dist-atoms", dmin_atoms, "minimum ion-atom distance, Angstrom")->capture_default_str()
        ->check(cli::finite_in(0, 1e4, "Angstrom"));
    app.add_option("--ion-min-dist-ions", dmin_ions, "minimum ion-ion distance, Angstrom")->capture_default_str()
        ->check(cli::finite_in(0, 1e4, "Angstrom"));
    app.add_option("--ions-out", ions_out, "PDB file for the placed ions")->capture_default_str();
    app.add_flag("-q,--quiet", quiet, "no progress bar");
    app.add_flag("--force", force, "replace existing output files (otherwise an existing -o or --ions-out is an error)");
    if (int rc = cli::parse(app, argc, argv); rc >= 0) return rc;
    // Usage errors that no single option shows; all before the structure is read.
    if (origin.empty() != counts.empty()) return die(cli::kUsageError, "--origin and --counts go together");
    if (devices.size() > QMMM_DCS_MAX_DEVICES)
        return die(cli::kUsageError, "--devices lists " + std::to_string(devices.size()) + " GPUs; at most " +
                                         std::to_string(QMMM_DCS_MAX_DEVICES));
    if (n_ions > 0 && ion_charge == 0) return die(cli::kUsageError, "--ion-charge 0: placed ions need a nonzero charge");
    const dcsio::MapFormat map_fmt = dcsio::map_format(output, out_format);
    if (n_ions > 0 && qmmm::tools::same_path(ions_out, output))
        return die(cli::kUsageError, "-o and --ions-out name the same file: give each its own");
    // The outputs' folders, names and temporary files, before any work.
    qmmm::tools::AtomicOutput map_file(output, force);
    std::unique_ptr<qmmm::tools::AtomicOutput> ions_file;
    if (n_ions > 0) ions_file = std::make_unique<qmmm::tools::AtomicOutput>(ions_out, force);

    const auto t_start = std::chrono::steady_clock::now();
    {
        const dcsio::Molecule mol = dcsio::read_structure(input, format);
        const double b = dcsio::kBohrPerAngstrom;
        // Points per axis in double first: a tiny spacing or a huge extent overflows any integer.
        double count[3];
        qmmm_dcs_lattice lat{};
        for (int d = 0; d < 3; ++d) {
            lat.spacing[d] = spacing * b;
            if (!counts.empty()) {
                lat.origin[d] = origin[d] * b, count[d] = static_cast<double>(counts[d]);
            } else {
                double lo = HUGE_VAL, hi = -HUGE_VAL;
                for (int64_t a = 0; a < mol.n(); ++a) lo = std::min(lo, mol.xyz[3 * a + d]), hi = std::max(hi, mol.xyz[3 * a + d]);
                lat.origin[d] = (lo - padding) * b;
                count[d] = std::ceil((hi - lo + 2 * padding) / spacing) + 1;
            }
        }
        const double total_pts = count[0] * count[1] * count[2];
        // The map, and for --place-ions its working copy and the library's exclusion mask.
        cli::check_fits_memory(total_pts, n_ions > 0 ? 17 : 8,
                               "a " + cli::num(count[0], 3) + " x " + cli::num(count[1], 3) + " x " + cli::num(count[2], 3) +
                                   " map at --spacing " + cli::num(spacing) + " A",
                               counts.empty() ? "use a coarser --spacing or less --padding" : "use smaller --counts");
        for (int d = 0; d < 3; ++d) lat.count[d] = static_cast<int64_t>(count[d]);
        if (static_cast<double>(n_ions) > total_pts)
            return die(cli::kUsageError, "--place-ions " + std::to_string(n_ions) + " is more than the map's " +
                                             cli::num(total_pts) + " lattice points");
        std::vector<double> xyz(mol.xyz.size());
        for (size_t i = 0; i < xyz.size(); ++i) xyz[i] = mol.xyz[i] * b;

        qmmm_dcs_options o;
        qmmm_dcs_options_default(&o);
        o.backend = backend == "cpu" ? QMMM_BACKEND_CPU : backend == "cuda" ? QMMM_BACKEND_CUDA : QMMM_BACKEND_AUTO;
        o.precision = precision == "double" ? QMMM_PRECISION_DOUBLE
                      : precision == "mixed" ? QMMM_PRECISION_MIXED : QMMM_PRECISION_SINGLE;
        o.on_atom = QMMM_DCS_ON_ATOM_OTHERS;
        o.n_devices = static_cast<int32_t>(devices.size());
        std::copy(devices.begin(), devices.end(), o.devices);
        Progress prog;
        if (!quiet && isatty(STDERR_FILENO)) o.progress = &Progress::call, o.progress_user = &prog;

        dcsio::Grid g;
        try {
            g.values.resize(static_cast<size_t>(total_pts));
        } catch (const std::bad_alloc &) {
            return die(QMMM_ERR_OUT_OF_MEMORY, "cannot allocate the map: " + std::to_string(lat.count[0]) + " x " +
                                                   std::to_string(lat.count[1]) + " x " + std::to_string(lat.count[2]) +
                                                   " doubles; use a coarser --spacing or less --padding");
        }
        qmmm_dcs_stats st{};
        if (int s = qmmm_dcs_map(mol.n(), xyz.data(), mol.q.data(), &lat, g.values.data(), &o, &st))
            return die(s, qmmm_error_message());

        std::vector<double> ions;
        if (n_ions > 0) {
            std::vector<double> work = g.values, ion_b(3 * n_ions);
            if (int s = qmmm_dcs_place_ions(mol.n(), xyz.data(), mol.q.data(), &lat, work.data(), n_ions, ion_charge,
                                            dmin_atoms * b, dmin_ions * b, ion_b.data(), nullptr))
                return die(s, qmmm_error_message());
            for (double v : ion_b) ions.push_back(v / b);
            dcsio::write_ions_pdb(ions_file->file(), ions_out, ions, ion_charge,
                                  ion_name.empty() ? (ion_charge > 0 ? "NA" : "CL") : ion_name);
        }

        const double kT_volt = dcsio::kBoltzmannEvPerK * temperature;
        const double scale = units == "au" ? 1.0 : units == "V" ? dcsio::kVoltPerAu : dcsio::kVoltPerAu / kT_volt;
        if (scale != 1.0)
            for (double &v : g.values) v *= scale;
        // A map the library kept finite may leave the double range in kT/e at a tiny -T.
        for (double v : g.values)
            if (!std::isfinite(v))
                return die(QMMM_ERR_NONFINITE, "the map in " + units + " exceeds the double range (at -T " +
                                                   cli::num(temperature) + " K); use -u au or a higher -T");
        char unit_text[96];
        if (units == "kT") std::snprintf(unit_text, sizeof unit_text, "kT/e at T = %.2f K", temperature);
        else std::snprintf(unit_text, sizeof unit_text, "%s", units == "V" ? "V" : "hartree/e (atomic units)");
        const std::string comment = "qmmm-dcs potential from " + input + " in " + unit_text;
        if (map_fmt == dcsio::MapFormat::cube) {
            for (int d = 0; d < 3; ++d) g.origin[d] = lat.origin[d], g.spacing[d] = lat.spacing[d], g.count[d] = lat.count[d];
            dcsio::write_cube(map_file.file(), output, g, mol, comment);
        } else {
            for (int d = 0; d < 3; ++d) g.origin[d] = lat.origin[d] / b, g.spacing[d] = spacing, g.count[d] = lat.count[d];
            dcsio::write_dx(map_file.file(), output, g, comment);
        }
        // Every output complete: only now do they replace anything.
        map_file.commit();
        if (ions_file) ions_file->commit();
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        std::printf("qmmm-dcs: %lld atoms, %lld x %lld x %lld = %.0f points, spacing %g A\n", (long long)mol.n(),
                    (long long)lat.count[0], (long long)lat.count[1], (long long)lat.count[2], total_pts, spacing);
        std::printf("  backend %s (%d worker%s), precision %s, map %.3f s, %.1f G atom-evaluations/s\n",
                    st.backend == QMMM_BACKEND_CUDA ? "CUDA" : "CPU", st.n_workers, st.n_workers == 1 ? "" : "s",
                    precision.c_str(), st.seconds, st.gevals_per_s);
        std::printf("  wrote %s (%s, %s)%s%s; total %.3f s\n", output.c_str(),
                    map_fmt == dcsio::MapFormat::cube ? "Gaussian cube" : "OpenDX", unit_text,
                    n_ions ? ", ions to " : "", n_ions ? ions_out.c_str() : "", wall);
    }
    return 0;
}

}  // namespace

// Every failure ends here with its status and one message line; nothing escapes as an abort (exit 134).
int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const qmmm::Error &e) {  // the file readers and writers, and cli::check_fits_memory
        return die(e.status, e.what());
    } catch (const std::bad_alloc &) {
        return die(QMMM_ERR_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception &e) {
        return die(QMMM_ERR_INTERNAL, std::string("internal error: ") + e.what());
    }
}
