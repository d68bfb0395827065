// dcs_main.cpp -- qmmm-dcs: electrostatic potential maps by direct Coulomb summation, and ion placement.
// Reads PQR / PDB (charges in columns 79-80) / XYZ with charges (Angstrom); writes OpenDX (Angstrom) or
// Gaussian cube (bohr). Map units: kT/e at --temperature (default, as APBS writes), V, or au (hartree/e).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <new>

#include "dcs_io.hpp"

namespace {

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

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"qmmm-dcs: electrostatic potential map by direct Coulomb summation (sum q/r), and ion placement"};
    std::string input, output = "potential.dx", format, units = "kT", backend = "auto", precision = "single";
    std::string ions_out = "ions.pdb", ion_name;
    double spacing = 0.5, padding = 10.0, temperature = 298.15, ion_charge = 1.0, dmin_atoms = 5.0, dmin_ions = 5.0;
    std::vector<double> origin;
    std::vector<int64_t> counts;
    std::vector<int> devices;
    int64_t n_ions = 0;
    bool quiet = false;
    app.add_option("input", input, "structure: .pqr, .pdb (charges in columns 79-80) or .xyz (element x y z charge)")
        ->required()->check(CLI::ExistingFile);
    app.add_option("-o,--output", output, "map file: .dx (OpenDX, Angstrom) or .cube (Gaussian cube, bohr)")->capture_default_str();
    app.add_option("--format", format, "input format if not from the extension")->check(CLI::IsMember({"pqr", "pdb", "xyz"}));
    app.add_option("-s,--spacing", spacing, "lattice spacing, Angstrom")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("-p,--padding", padding, "margin around the molecule, Angstrom")->capture_default_str()->check(CLI::NonNegativeNumber);
    app.add_option("--origin", origin, "explicit lattice origin x y z, Angstrom (with --counts)")->expected(3);
    app.add_option("--counts", counts, "explicit points per axis nx ny nz (with --origin)")->expected(3);
    app.add_option("-u,--units", units, "map units: kT (kT/e at --temperature), V, au (hartree/e)")
        ->capture_default_str()->check(CLI::IsMember({"kT", "V", "au"}));
    app.add_option("-T,--temperature", temperature, "temperature for kT/e, K")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--backend", backend, "auto, cpu or cuda")->capture_default_str()->check(CLI::IsMember({"auto", "cpu", "cuda"}));
    app.add_option("--precision", precision, "single, mixed or double")->capture_default_str()
        ->check(CLI::IsMember({"single", "mixed", "double"}));
    app.add_option("--devices", devices, "GPU indices, e.g. --devices 0 1 (default 0)")->delimiter(',');
    app.add_option("--place-ions", n_ions, "number of ions to place at potential extrema")->check(CLI::NonNegativeNumber);
    app.add_option("--ion-charge", ion_charge, "ion charge, e")->capture_default_str();
    app.add_option("--ion-name", ion_name, "ion atom/residue name in the PDB (default NA for +, CL for -)");
    app.add_option("--ion-min-dist-atoms", dmin_atoms, "minimum ion-atom distance, Angstrom")->capture_default_str();
    app.add_option("--ion-min-dist-ions", dmin_ions, "minimum ion-ion distance, Angstrom")->capture_default_str();
    app.add_option("--ions-out", ions_out, "PDB file for the placed ions")->capture_default_str();
    app.add_flag("-q,--quiet", quiet, "no progress bar");
    CLI11_PARSE(app, argc, argv);
    if (origin.empty() != counts.empty()) return die(2, "--origin and --counts go together");

    const auto t_start = std::chrono::steady_clock::now();
    try {
        const dcsio::Molecule mol = dcsio::read_structure(input, format);
        const double b = dcsio::kBohrPerAngstrom;
        qmmm_dcs_lattice lat{};
        if (!counts.empty()) {
            for (int d = 0; d < 3; ++d) lat.origin[d] = origin[d] * b, lat.spacing[d] = spacing * b, lat.count[d] = counts[d];
        } else {
            for (int d = 0; d < 3; ++d) {
                double lo = 1e300, hi = -1e300;
                for (int64_t a = 0; a < mol.n(); ++a) lo = std::min(lo, mol.xyz[3 * a + d]), hi = std::max(hi, mol.xyz[3 * a + d]);
                lat.origin[d] = (lo - padding) * b, lat.spacing[d] = spacing * b;
                lat.count[d] = static_cast<int64_t>(std::ceil((hi - lo + 2 * padding) / spacing)) + 1;
            }
        }
        std::vector<double> xyz(mol.xyz.size());
        for (size_t i = 0; i < xyz.size(); ++i) xyz[i] = mol.xyz[i] * b;

        qmmm_dcs_options o;
        qmmm_dcs_options_default(&o);
        o.backend = backend == "cpu" ? QMMM_BACKEND_CPU : backend == "cuda" ? QMMM_BACKEND_CUDA : QMMM_BACKEND_AUTO;
        o.precision = precision == "double" ? QMMM_PRECISION_DOUBLE
                      : precision == "mixed" ? QMMM_PRECISION_MIXED : QMMM_PRECISION_SINGLE;
        if (devices.size() > QMMM_DCS_MAX_DEVICES) return die(2, "too many --devices");
        o.n_devices = static_cast<int32_t>(devices.size());
        std::copy(devices.begin(), devices.end(), o.devices);
        Progress prog;
        if (!quiet && isatty(STDERR_FILENO)) o.progress = &Progress::call, o.progress_user = &prog;

        dcsio::Grid g;
        const double total_pts = static_cast<double>(lat.count[0]) * lat.count[1] * lat.count[2];
        if (total_pts * 8 > 1e15) return die(QMMM_ERR_OUT_OF_MEMORY, "lattice of " + std::to_string(total_pts) + " points is too large for memory");
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
            dcsio::write_ions_pdb(ions_out, ions, ion_charge, ion_name.empty() ? (ion_charge > 0 ? "NA" : "CL") : ion_name);
        }

        const double kT_volt = dcsio::kBoltzmannEvPerK * temperature;
        const double scale = units == "au" ? 1.0 : units == "V" ? dcsio::kVoltPerAu : dcsio::kVoltPerAu / kT_volt;
        if (scale != 1.0)
            for (double &v : g.values) v *= scale;
        char unit_text[96];
        if (units == "kT") std::snprintf(unit_text, sizeof unit_text, "kT/e at T = %.2f K", temperature);
        else std::snprintf(unit_text, sizeof unit_text, "%s", units == "V" ? "V" : "hartree/e (atomic units)");
        const bool cube = output.size() > 5 && (output.rfind(".cube") == output.size() - 5 || output.rfind(".cub") == output.size() - 4);
        const std::string comment = "qmmm-dcs potential from " + input + " in " + unit_text;
        if (cube) {
            for (int d = 0; d < 3; ++d) g.origin[d] = lat.origin[d], g.spacing[d] = lat.spacing[d], g.count[d] = lat.count[d];
            dcsio::write_cube(output, g, mol, comment);
        } else {
            for (int d = 0; d < 3; ++d) g.origin[d] = lat.origin[d] / b, g.spacing[d] = spacing, g.count[d] = lat.count[d];
            dcsio::write_dx(output, g, comment);
        }
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        std::printf("qmmm-dcs: %lld atoms, %lld x %lld x %lld = %.0f points, spacing %.3f A\n", (long long)mol.n(),
                    (long long)lat.count[0], (long long)lat.count[1], (long long)lat.count[2], total_pts, spacing);
        std::printf("  backend %s (%d worker%s), precision %s, map %.3f s, %.1f G atom-evaluations/s\n",
                    st.backend == QMMM_BACKEND_CUDA ? "CUDA" : "CPU", st.n_workers, st.n_workers == 1 ? "" : "s",
                    precision.c_str(), st.seconds, st.gevals_per_s);
        std::printf("  wrote %s (%s)%s%s; total %.3f s\n", output.c_str(), unit_text,
                    n_ions ? ", ions to " : "", n_ions ? ions_out.c_str() : "", wall);
    } catch (const dcsio::IoError &e) {
        return die(e.status, e.what());
    }
    return 0;
}
