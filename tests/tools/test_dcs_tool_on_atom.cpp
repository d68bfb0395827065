// test_dcs_tool_on_atom.cpp -- qmmm-dcs with default options on one ion and on a diatomic: the default lattice
// (the atoms' box plus the padding, spacing 0.5 A) puts lattice points on the atoms. The run succeeds, the map is
// finite, and its values match a direct sum written here, in which a point on an atom has the potential of the
// other atoms (the atom's own term left out).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "dcs_io.hpp"

namespace {

struct Atom {
    double x, y, z, q;
};

// Runs qmmm-dcs with its defaults (but -u au and -q) on the atoms as a PQR; returns the map read back.
dcsio::Grid run_tool(const std::string &name, const std::vector<Atom> &atoms) {
    const std::string dir = ::testing::TempDir(), pqr = dir + name + ".pqr", dx = dir + name + ".dx";
    std::remove(dx.c_str());
    {
        std::ofstream f(pqr);
        char line[128];
        for (size_t a = 0; a < atoms.size(); ++a) {
            std::snprintf(line, sizeof line, "ATOM  %5zu  X   MOL     1    %8.3f%8.3f%8.3f %7.4f 1.5000\n", a + 1,
                          atoms[a].x, atoms[a].y, atoms[a].z, atoms[a].q);
            f << line;
        }
    }
    const std::string cmd = "'" + std::string(QMMM_DCS_TOOL) + "' '" + pqr + "' -o '" + dx + "' -u au -q > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return dcsio::read_dx(dx);
}

// The potential (hartree/e) at lattice point (i, j, k) of g (Angstrom), and sum |q|/r there; atoms within
// 1e-6 A of the point are left out.
void direct(const dcsio::Grid &g, const std::vector<Atom> &atoms, int64_t i, int64_t j, int64_t k, double *phi,
            double *scale) {
    const double p[3] = {g.origin[0] + i * g.spacing[0], g.origin[1] + j * g.spacing[1], g.origin[2] + k * g.spacing[2]};
    *phi = *scale = 0;
    for (const Atom &a : atoms) {
        const double r = std::sqrt((p[0] - a.x) * (p[0] - a.x) + (p[1] - a.y) * (p[1] - a.y) + (p[2] - a.z) * (p[2] - a.z));
        if (r < 1e-6) continue;
        const double r_bohr = r * dcsio::kBohrPerAngstrom;
        *phi += a.q / r_bohr, *scale += std::fabs(a.q) / r_bohr;
    }
}

void check(const std::string &name, const std::vector<Atom> &atoms, int on_atom_points) {
    const dcsio::Grid g = run_tool(name, atoms);
    const int64_t nx = g.count[0], ny = g.count[1], nz = g.count[2];
    ASSERT_EQ(static_cast<int64_t>(g.values.size()), nx * ny * nz);
    for (double v : g.values) ASSERT_TRUE(std::isfinite(v)) << name << ": a non-finite value in the map";
    // The points on the atoms, their neighbours, the corners and the middle.
    std::vector<std::array<int64_t, 3>> pts = {{0, 0, 0}, {nx - 1, ny - 1, nz - 1}, {nx / 2, ny / 3, nz - 1}};
    int on_atom = 0;
    for (const Atom &a : atoms) {
        const int64_t i = std::lround((a.x - g.origin[0]) / g.spacing[0]), j = std::lround((a.y - g.origin[1]) / g.spacing[1]),
                      k = std::lround((a.z - g.origin[2]) / g.spacing[2]);
        const double off = std::fabs(g.origin[0] + i * g.spacing[0] - a.x) + std::fabs(g.origin[1] + j * g.spacing[1] - a.y) +
                           std::fabs(g.origin[2] + k * g.spacing[2] - a.z);
        on_atom += off < 1e-6;
        pts.push_back({i, j, k}), pts.push_back({i + 1, j, k}), pts.push_back({i, j - 1, k + 1});
    }
    EXPECT_EQ(on_atom, on_atom_points) << name << ": the default lattice should put points on the atoms";
    for (const auto &p : pts) {
        double phi, scale;
        direct(g, atoms, p[0], p[1], p[2], &phi, &scale);
        const double got = g.values[p[0] + nx * (p[1] + ny * p[2])];
        // Single precision (the default) and the 6 digits of the .dx file.
        EXPECT_NEAR(got, phi, 2e-5 * scale + 1e-300) << name << " at (" << p[0] << ", " << p[1] << ", " << p[2] << ")";
    }
}

}  // namespace

TEST(DcsToolOnAtom, OneIonDefaultOptions) {
    // The ion is the lattice's centre: its point gets the potential of the other atoms, none, so 0.
    check("one_ion", {{1.25, -3.5, 0.75, 1.0}}, 1);
}

TEST(DcsToolOnAtom, DiatomicDefaultOptions) {
    // A bond of 1.5 A along x: both atoms on lattice points; each point gets the other atom's potential.
    check("diatomic", {{0.0, 0.0, 0.0, 0.4}, {1.5, 0.0, 0.0, -0.4}}, 2);
}
