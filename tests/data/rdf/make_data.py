#!/usr/bin/env python3
"""Writes the small RDF test trajectories: 64 water molecules (192 atoms) in a 12.4 Angstrom box, 3 frames,
the same coordinates in every format (XYZ/extended XYZ, PDB, GRO, LAMMPS dump, DCD), plus a triclinic pair
(extended XYZ and LAMMPS triclinic dump with scaled coordinates) and broken files for the error tests.
Deterministic (fixed seed); run from anywhere: python3 make_data.py"""
import math, os, random, struct

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(8)
L = 12.4
N_MOL = 64

def water_frames(n_frames, cell):
    frames = []
    for f in range(n_frames):
        atoms = []
        for m in range(N_MOL):
            i, j, k = m % 4, (m // 4) % 4, m // 16
            s = [(i + 0.5 + rng.uniform(-0.2, 0.2)) / 4, (j + 0.5 + rng.uniform(-0.2, 0.2)) / 4,
                 (k + 0.5 + rng.uniform(-0.2, 0.2)) / 4]
            o = [s[0] * cell[0][d] + s[1] * cell[1][d] + s[2] * cell[2][d] for d in range(3)]
            atoms.append(("OW", "O", o))
            for h in ("HW1", "HW2"):
                u = [rng.gauss(0, 1) for _ in range(3)]
                n = math.sqrt(sum(x * x for x in u))
                atoms.append((h, "H", [o[d] + u[d] / n for d in range(3)]))
        frames.append(atoms)
    # 3 decimals everywhere so that every text format holds the same numbers (GRO: nm with 4 decimals)
    return [[(a, e, [round(x, 3) for x in r]) for a, e, r in fr] for fr in frames]

def write_xyz(path, frames, cell, extended=True):
    with open(path, "w") as f:
        for fr in frames:
            f.write(f"{len(fr)}\n")
            lat = " ".join(f"{x:.6f}" for v in cell for x in v)
            f.write(f'Lattice="{lat}" Properties=species:S:1:pos:R:3\n' if extended else "water\n")
            for a, e, r in fr:
                f.write(f"{e} {r[0]:.3f} {r[1]:.3f} {r[2]:.3f}\n")

def write_pdb(path, frames):
    with open(path, "w") as f:
        f.write(f"CRYST1{L:9.3f}{L:9.3f}{L:9.3f}{90:7.2f}{90:7.2f}{90:7.2f} P 1           1\n")
        for m, fr in enumerate(frames):
            f.write(f"MODEL     {m + 1:4d}\n")
            for i, (a, e, r) in enumerate(fr):
                f.write("ATOM  %5d %-4s %-4s%5d    %8.3f%8.3f%8.3f  1.00  0.00          %2s\n" %
                        (i + 1, a if len(a) == 4 else " " + a, "SOL", i // 3 + 1, r[0], r[1], r[2], e))
            f.write("ENDMDL\n")
        f.write("END\n")

def write_gro(path, frames, cell=None):
    with open(path, "w") as f:
        for t, fr in enumerate(frames):
            f.write(f"water t= {t}.0\n{len(fr)}\n")
            for i, (a, e, r) in enumerate(fr):
                f.write("%5d%-5s%5s%5d%9.4f%9.4f%9.4f\n" % (i // 3 + 1, "SOL", a, i + 1, r[0] / 10, r[1] / 10, r[2] / 10))
            if cell is None:
                f.write(f"{L / 10:10.5f}{L / 10:10.5f}{L / 10:10.5f}\n")
            else:  # v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y), nm
                v = [cell[0][0], cell[1][1], cell[2][2], cell[0][1], cell[0][2], cell[1][0], cell[1][2], cell[2][0], cell[2][1]]
                f.write("".join(f"{x / 10:10.5f}" for x in v) + "\n")

def write_lammps(path, frames, cell=None, scaled=False):
    with open(path, "w") as f:
        for t, fr in enumerate(frames):
            f.write(f"ITEM: TIMESTEP\n{t * 100}\nITEM: NUMBER OF ATOMS\n{len(fr)}\n")
            if cell is None:
                f.write("ITEM: BOX BOUNDS pp pp pp\n" + f"0.0 {L}\n" * 3)
            else:
                xy, xz, yz = cell[1][0], cell[2][0], cell[2][1]
                lx, ly, lz = cell[0][0], cell[1][1], cell[2][2]
                f.write("ITEM: BOX BOUNDS xy xz yz pp pp pp\n")
                f.write(f"{min(0, xy, xz, xy + xz)} {lx + max(0, xy, xz, xy + xz)} {xy}\n")
                f.write(f"{min(0, yz)} {ly + max(0, yz)} {xz}\n0.0 {lz} {yz}\n")
            f.write("ITEM: ATOMS id mol type " + ("xs ys zs\n" if scaled else "x y z\n"))
            order = list(range(len(fr)))
            rng.shuffle(order)  # dumps need not be sorted by id
            for i in order:
                a, e, r = fr[i]
                if scaled:  # s = M^-1 r for the lower-triangular cell
                    sz = r[2] / cell[2][2]
                    sy = (r[1] - sz * cell[2][1]) / cell[1][1]
                    sx = (r[0] - sy * cell[1][0] - sz * cell[2][0]) / cell[0][0]
                    r = (sx, sy, sz)
                    f.write(f"{i + 1} {i // 3 + 1} {1 if e == 'O' else 2} {r[0]:.12f} {r[1]:.12f} {r[2]:.12f}\n")
                else:
                    f.write(f"{i + 1} {i // 3 + 1} {1 if e == 'O' else 2} {r[0]:.3f} {r[1]:.3f} {r[2]:.3f}\n")

def rec(b):
    return struct.pack("<i", len(b)) + b + struct.pack("<i", len(b))

def write_dcd(path, frames, truncate=None):
    n = len(frames[0])
    icntrl = [0] * 20
    icntrl[0] = len(frames); icntrl[1] = 0; icntrl[2] = 1; icntrl[3] = len(frames)
    icntrl[10] = 1; icntrl[19] = 24  # unit cell present, CHARMM version 24
    out = rec(b"CORD" + struct.pack("<20i", *icntrl))
    out += rec(struct.pack("<i", 1) + b"qmmm-accel RDF test DCD".ljust(80))
    out += rec(struct.pack("<i", n))
    for fr in frames:
        out += rec(struct.pack("<6d", L, 0.0, L, 0.0, 0.0, L))  # A, cos gamma, B, cos beta, cos alpha, C
        for d in range(3):
            out += rec(struct.pack(f"<{n}f", *[r[d] for _, _, r in fr]))
    if truncate:
        out = out[:truncate]
    open(path, "wb").write(out)

cube = [[L, 0, 0], [0, L, 0], [0, 0, L]]
frames = water_frames(3, cube)
write_xyz(os.path.join(here, "water.xyz"), frames, cube)
write_pdb(os.path.join(here, "water.pdb"), frames)
write_gro(os.path.join(here, "water.gro"), frames)
write_lammps(os.path.join(here, "water.lammpstrj"), frames)
write_dcd(os.path.join(here, "water.dcd"), frames)
size = os.path.getsize(os.path.join(here, "water.dcd"))
write_dcd(os.path.join(here, "truncated.dcd"), frames, truncate=size - 700)
tri = [[13.0, 0, 0], [2.5, 12.5, 0], [-1.5, 2.0, 12.0]]
tframes = water_frames(2, tri)
write_xyz(os.path.join(here, "tri.xyz"), tframes, tri)
write_lammps(os.path.join(here, "tri.lammpstrj"), tframes, cell=tri, scaled=True)
write_gro(os.path.join(here, "tri.gro"), tframes, cell=tri)  # the source of tri.xtc (make_gmx_data.sh)
# frame 2 with one atom fewer: mismatched atom counts
bad = [frames[0], frames[1][:-1]]
write_xyz(os.path.join(here, "mismatch.xyz"), bad, cube)
