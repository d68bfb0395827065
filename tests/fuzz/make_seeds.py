#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/ (deterministic; run from anywhere:
python3 tests/fuzz/make_seeds.py). Small files, each a valid input of one format or one variant the readers
handle (Angstrom cubes, DSET_IDS, gzip, triclinic boxes, byte-swapped DCD, ...), so the fuzzers start at the
interesting paths. A leading selector byte picks the format where a target reads several (README.md)."""
import gzip, os, random, struct

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
rng = random.Random(18)


def put(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- Gaussian cubes ----
def cube(natoms_field, counts, axes, atoms, values, origin=(-1.0, -1.5, -2.0), extra_line3="", dset=None):
    s = "fuzz seed cube\nOUTER LOOP: X, MIDDLE LOOP: Y, INNER LOOP: Z\n"
    s += "%5d %12.6f %12.6f %12.6f%s\n" % ((natoms_field,) + tuple(origin) + (extra_line3,))
    for n, ax in zip(counts, axes):
        s += "%5d %12.6f %12.6f %12.6f\n" % ((n,) + tuple(ax))
    for z, q, x, y, w in atoms:
        s += "%5d %12.6f %12.6f %12.6f %12.6f\n" % (z, q, x, y, w)
    if dset:
        s += dset + "\n"
    for i, v in enumerate(values):
        s += " %12.5E" % v + ("\n" if i % 6 == 5 else "")
    return s + "\n"

water = [(8, 0.0, 0.0, 0.0, 0.2), (1, 0.0, 1.43, 0.0, -0.9), (1, 0.0, -1.43, 0.0, -0.9)]
vals = [rng.uniform(0, 0.3) for _ in range(2 * 2 * 3)]
orth = [(0.5, 0, 0), (0, 0.5, 0), (0, 0, 0.5)]
put("fuzz_cube", "bohr.cube", cube(3, (2, 2, 3), orth, water, vals))
put("fuzz_cube", "angstrom.cube", cube(3, (-2, -2, -3), orth, water, vals))
put("fuzz_cube", "dset_ids.cube", cube(-1, (2, 2, 3), orth, water[:1], vals, extra_line3="    1", dset="    1    7"))
put("fuzz_cube", "nonorthogonal.cube",
    cube(1, (3, 2, 2), [(0.4, 0.1, 0), (0.05, 0.45, 0), (0.0, 0.1, 0.5)], [(6, 4.0, 0.1, 0.2, 0.3)], vals))
put("fuzz_cube", "bohr.cube.gz", gzip.compress(cube(3, (2, 2, 3), orth, water, vals).encode(), mtime=0))
# psi4's water density (data/water_dimer), every 6th point per axis: a real header and real numbers.
with gzip.open(os.path.join(root, "data", "water_dimer", "water2_density.cube.gz"), "rt") as f:
    lines = f.read().split("\n")
head = [l.split() for l in lines[2:6]]
nat = int(head[0][0])
n = [int(h[0]) for h in head[1:]]
values = [float(v) for l in lines[6 + nat:] for v in l.split()]
step = 6
keep = [values[(i * n[1] + j) * n[2] + k] for i in range(0, n[0], step) for j in range(0, n[1], step)
        for k in range(0, n[2], step)]
m = [len(range(0, x, step)) for x in n]
atoms = [tuple([int(t[0])] + [float(x) for x in t[1:]]) for t in (l.split() for l in lines[6:6 + nat])]
put("fuzz_cube", "psi4_water_coarse.cube",
    cube(nat, m, [(0.4 * step, 0, 0), (0, 0.4 * step, 0), (0, 0, 0.4 * step)], atoms, keep,
         origin=tuple(float(x) for x in head[0][1:4])))

# ---- DCS structures (selector: '0' pqr, '1' pdb, '2' xyz, '3' dx) ----
for sel, name in (("0", "small.pqr"), ("1", "small.pdb"), ("2", "small.xyz")):
    with open(os.path.join(root, "tests", "data", "dcs", name)) as f:
        put("fuzz_dcs_io", name, sel + f.read())
put("fuzz_dcs_io", "hetatm.pdb", "1REMARK ions\nHETATM    1 NA    NA I   1       0.000   0.000   0.000  1.00  0.00          NA1+\n"
    "HETATM    2 CL    CL I   2       2.500   0.000   0.000  1.00  0.00          CL1-\nEND\n")
dx = "3# map\nobject 1 class gridpositions counts 2 2 2\norigin -1.0 -1.0 -1.0\ndelta 1.0 0 0\ndelta 0 1.0 0\n" \
     "delta 0 0 1.0\nobject 2 class gridconnections counts 2 2 2\n" \
     "object 3 class array type double rank 0 items 8 data follows\n" + \
     "1.0e-01 2.0e-01 3.0e-01\n4.0e-01 5.0e-01 6.0e-01\n7.0e-01 8.0e-01\n" + \
     'attribute "dep" string "positions"\n'
put("fuzz_dcs_io", "small.dx", dx)

# ---- RDF trajectories: 2 water molecules, 2 frames (selector: see README.md) ----
L = 6.2
def frames(cell, nf=2):
    out = []
    for _ in range(nf):
        fr = []
        for m in range(2):
            o = [rng.uniform(0.5, 5.5) for _ in range(3)]
            fr.append(("OW", "O", o))
            fr.append(("HW1", "H", [o[0] + 0.96, o[1], o[2]]))
            fr.append(("HW2", "H", [o[0] - 0.24, o[1] + 0.93, o[2]]))
        out.append([(a, e, [round(x, 3) for x in r]) for a, e, r in fr])
    return out

F, tri = frames(None), [[6.5, 0, 0], [1.2, 6.0, 0], [-0.8, 1.0, 6.1]]
sel = {"xyz": "F", "pdb": "G", "gro": "H", "lammps": "I", "dcd": "J"}
skip = {"xyz": "M", "pdb": "N", "gro": "O", "lammps": "P", "dcd": "Q"}

s = ""
for fr in F:
    s += "%d\nLattice=\"%g 0 0 0 %g 0 0 0 %g\" Properties=species:S:1:pos:R:3 time=0\n" % (len(fr), L, L, L)
    s += "".join("%s %.3f %.3f %.3f\n" % (e, *r) for a, e, r in fr)
put("fuzz_rdf_io", "water.extxyz", sel["xyz"] + s)
put("fuzz_rdf_io", "water_skip.extxyz", skip["xyz"] + s)
s = ""
for fr in F:
    s += "%d\nplain xyz\n" % len(fr) + "".join("%s %.3f %.3f %.3f\n" % (a, *r) for a, e, r in fr)
put("fuzz_rdf_io", "plain.xyz", sel["xyz"] + s)
s = "%d\nLattice=\"%s\" Properties=id:I:1:species:S:1:pos:R:3:charge:R:1\n" % (
    len(F[0]), " ".join(str(x) for v in tri for x in v))
s += "".join("%d %s %.3f %.3f %.3f %.2f\n" % (i, e, *r, 0.4) for i, (a, e, r) in enumerate(F[0]))
put("fuzz_rdf_io", "triclinic_props.extxyz", sel["xyz"] + s)

s = "CRYST1%9.3f%9.3f%9.3f%7.2f%7.2f%7.2f P 1           1\n" % (L, L, L, 90, 90, 90)
for k, fr in enumerate(F):
    s += "MODEL     %4d\n" % (k + 1)
    for i, (a, e, r) in enumerate(fr):
        s += "ATOM  %5d %-4s %-4s%5d    %8.3f%8.3f%8.3f  1.00  0.00          %2s\n" % (
            i + 1, " " + a, "SOL", i // 3 + 1, *r, e)
    s += "ENDMDL\n"
put("fuzz_rdf_io", "water.pdb", sel["pdb"] + s + "END\n")
put("fuzz_rdf_io", "water_skip.pdb", skip["pdb"] + s + "END\n")

s = ""
for k, fr in enumerate(F):
    s += "water t= %d.0\n%d\n" % (k, len(fr))
    s += "".join("%5d%-5s%5s%5d%8.3f%8.3f%8.3f\n" % (i // 3 + 1, "SOL", a, i + 1, r[0] / 10, r[1] / 10, r[2] / 10)
                 for i, (a, e, r) in enumerate(fr))
    s += "%10.5f%10.5f%10.5f\n" % (L / 10, L / 10, L / 10)
put("fuzz_rdf_io", "water.gro", sel["gro"] + s)
s = "triclinic\n%d\n" % len(F[0]) + "".join(
    "%5d%-5s%5s%5d%10.5f%10.5f%10.5f\n" % (i // 3 + 1, "SOL", a, i + 1, r[0] / 10, r[1] / 10, r[2] / 10)
    for i, (a, e, r) in enumerate(F[0]))
s += " ".join("%.5f" % (x / 10) for x in (tri[0][0], tri[1][1], tri[2][2], 0, 0, tri[1][0], 0, tri[2][0], tri[2][1])) + "\n"
put("fuzz_rdf_io", "triclinic.gro", sel["gro"] + s)

s = ""
for k, fr in enumerate(F):
    s += "ITEM: TIMESTEP\n%d\nITEM: NUMBER OF ATOMS\n%d\nITEM: BOX BOUNDS pp pp pp\n" % (k * 10, len(fr))
    s += ("0.0 %g\n" % L) * 3 + "ITEM: ATOMS id mol type element x y z\n"
    order = list(range(len(fr)))
    rng.shuffle(order)
    s += "".join("%d %d %d %s %.3f %.3f %.3f\n" % (i + 1, i // 3 + 1, 1 if fr[i][1] == "O" else 2, fr[i][1], *fr[i][2])
                 for i in order)
put("fuzz_rdf_io", "water.lammpstrj", sel["lammps"] + s)
put("fuzz_rdf_io", "water_skip.lammpstrj", skip["lammps"] + s)
xy, xz, yz = tri[1][0], tri[2][0], tri[2][1]
s = "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n%d\nITEM: BOX BOUNDS xy xz yz pp pp pp\n" % len(F[0])
s += "%g %g %g\n%g %g %g\n0.0 %g %g\n" % (min(0, xy, xz, xy + xz), tri[0][0] + max(0, xy, xz, xy + xz), xy,
                                         min(0, yz), tri[1][1] + max(0, yz), xz, tri[2][2], yz)
s += "ITEM: ATOMS id type xs ys zs\n" + "".join("%d 1 %.6f %.6f %.6f\n" % (i + 1, rng.random(), rng.random(), rng.random())
                                                for i in range(len(F[0])))
put("fuzz_rdf_io", "triclinic_scaled.lammpstrj", sel["lammps"] + s)


def dcd(fr_list, endian="<", cell=True, charmm=24):
    n = len(fr_list[0])
    rec = lambda b: struct.pack(endian + "i", len(b)) + b + struct.pack(endian + "i", len(b))
    ic = [0] * 20
    ic[0], ic[2], ic[3], ic[10], ic[19] = len(fr_list), 1, len(fr_list), 1 if cell else 0, charmm
    out = rec(b"CORD" + struct.pack(endian + "20i", *ic))
    out += rec(struct.pack(endian + "i", 1) + b"fuzz seed".ljust(80))
    out += rec(struct.pack(endian + "i", n))
    for fr in fr_list:
        if cell:
            out += rec(struct.pack(endian + "6d", L, 0.0, L, 0.0, 0.0, L))
        for d in range(3):
            out += rec(struct.pack(endian + "%df" % n, *[r[d] for _, _, r in fr]))
    return out

put("fuzz_rdf_io", "water.dcd", sel["dcd"].encode() + dcd(F))
put("fuzz_rdf_io", "water_skip.dcd", skip["dcd"].encode() + dcd(F))
put("fuzz_rdf_io", "big_endian.dcd", sel["dcd"].encode() + dcd(F, endian=">"))
put("fuzz_rdf_io", "no_cell.dcd", sel["dcd"].encode() + dcd(F, cell=False, charmm=0))

# ---- selections ----
for i, e in enumerate(["all", "name OW", "resname SOL and name H*", "index 0-3 5", "resid 1-2 and element o",
                       "type OW HW and resid -4", "name", "foo 1", "index 3-"]):
    put("fuzz_rdf_select", "expr%d" % i, e)

# ---- the C API: byte strings the FuzzedDataProvider turns into calls ----
for i, size in enumerate((64, 256, 1024, 4096)):
    put("fuzz_capi", "random%d" % i, bytes(rng.randrange(256) for _ in range(size)))

# ---- magnitudes and the tools' command lines: also FuzzedDataProvider bytes ----
for i, size in enumerate((16, 64, 256, 1024)):
    put("fuzz_magnitudes", "random%d" % i, bytes(rng.randrange(256) for _ in range(size)))
for i, size in enumerate((8, 24, 64, 160)):
    put("fuzz_tool_cli", "random%d" % i, bytes(rng.randrange(256) for _ in range(size)))

# ---- potential files (.pot): the test's water trimer, bohr with partial lists and padding, a site without
# polarizability, an unsupported order, a truncated file (no random numbers: the seeds above stay as they were) ----
with open(os.path.join(root, "tests", "data", "pol", "water3.pot")) as f:
    put("fuzz_pot", "water3.pot", f.read())
put("fuzz_pot", "bohr_partial.pot",
    "! partial lists\n@COORDINATES\n4\nAU\nX 0.0 0.0 0.0\nX 0.0 0.0 4.0\nX 5.0 0.0 0.0\nX 0.0 6.0 1.5D+00\n"
    "@MULTIPOLES\nORDER 0\n2\n1 0.5\n4 -0.25\nORDER 1\n1\n3 0.1 0.2 0.3\n@POLARIZABILITIES\nORDER 1 1\n3\n"
    "1 3.0 0 0 3.0 0 3.0\n2 2.0 0.1 0 2.5 0 2.2\n4 1.0d0 0 0 1.0 0 1.0\nEXCLISTS\n4 3\n1 2 0\n2 1 0\n3 0 0\n4 0 0\n")
put("fuzz_pot", "close_pair.pot",
    "@COORDINATES\n2\nAA\nA 0 0 0 1\nB 0 0 0.5 2\n@POLARIZABILITIES\nORDER 1 1\n2\n1 5 0 0 5 0 5\n2 5 0 0 5 0 5\n")
put("fuzz_pot", "quadrupoles.pot", "@COORDINATES\n1\nAU\nA 0 0 0\n@MULTIPOLES\nORDER 2\n1\n1 1 0 0 1 0 1\n")
put("fuzz_pot", "truncated.pot", "@COORDINATES\n3\nAA\nO 0 0 0\nH 0 0 1\n")
