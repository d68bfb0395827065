#!/usr/bin/python3
"""Builds the reference systems of data/ with psi4 (Debian's psi4 1.3.2 under /usr/bin/python3).

    /usr/bin/python3 data/psi4_systems.py water|hydrogen|water_dimer|glycine_trimer|water_mm OUTDIR

Everything psi4 is given is in bohr unless stated; geometries are written in Angstrom in the inputs
below because that is how they are published. Energies are hartree.

Embedding (water_dimer, glycine_trimer): psi4 sees the environment as exactly the point charges the
library reads from the committed cube files: one charge -q_m at each cell centre whose density is
>= THRESHOLD (q_m = rho_m * dV, the electron population, parsed from the cube text as written, so
the rounding of the file is the rounding of both), and +Z_b at each nucleus of the cube. psi4 1.3.2
adds the nucleus-charge interaction to the nuclear repulsion ("Additional nuclear repulsion" in the
output, also recomputed here); the electron-environment energy is tr[(Da+Db) V_ext] with V_ext from
ExternalPotential.computePotentialMatrix (psi4's analytic point-charge integrals).
"""
import gzip
import json
import math
import os
import sys
import time

sys.path.insert(0, '/usr/lib/x86_64-linux-gnu')
import numpy as np  # noqa: E402
import psi4  # noqa: E402

BOHR_ANG = psi4.constants.bohr2angstroms


def options(basis, reference='rhf', **extra):
    psi4.core.clean_options()
    o = {'basis': basis, 'reference': reference, 'scf_type': 'pk', 'e_convergence': 1e-10,
         'd_convergence': 1e-8, 'maxiter': 200}
    o.update(extra)
    psi4.set_options(o)
    return o


def geometry(xyz_ang, charge=0, mult=1, name='mol'):
    lines = ['%d %d' % (charge, mult)] + ['%s %.8f %.8f %.8f' % a for a in xyz_ang]
    lines += ['units angstrom', 'symmetry c1', 'no_com', 'no_reorient']
    return psi4.geometry('\n'.join(lines), name=name)


def write_json(path, obj):
    with open(path, 'w') as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write('\n')


def mol_info(mol):
    return [{'symbol': mol.symbol(i), 'Z': mol.Z(i),
             'xyz_bohr': [mol.x(i), mol.y(i), mol.z(i)]} for i in range(mol.natom())]


def molden_kind(wfn):
    # psi4's molden writer states [5D7F]-style tags only for spherical (puream) basis sets.
    return 'spherical: psi4 writes [5D] (Molden: 5D and 7F) and [9G]' if wfn.basisset().has_puream() else 'cartesian (6D/10F)'


# ---------------------------------------------------------------- cube files
def read_cube(path):
    """The same semantics as the library's reader: returns (cells_xyz[n,3] bohr, rho[n], dV, nuclei)."""
    op = gzip.open if path.endswith('.gz') else open
    with op(path, 'rt') as f:
        lines = f.read().split('\n')
    head = lines[2].split()
    natom = int(head[0])
    origin = np.array([float(x) for x in head[1:4]])
    n = []
    axes = []
    for k in range(3):
        t = lines[3 + k].split()
        n.append(int(t[0]))
        axes.append([float(x) for x in t[1:4]])
    axes = np.array(axes)
    scale = 1.0
    if n[0] < 0:  # the format's flag: negative count = Angstrom units
        scale = 1.0 / BOHR_ANG
    n = [abs(x) for x in n]
    axes *= scale
    origin *= scale
    nat = abs(natom)
    nuclei = []
    for a in range(nat):
        t = lines[6 + a].split()
        nuclei.append((int(round(float(t[0]))), np.array([float(x) for x in t[2:5]]) * scale))
    data_start = 6 + nat + (1 if natom < 0 else 0)
    vals = np.array(' '.join(lines[data_start:]).split(), dtype=float)
    assert vals.size == n[0] * n[1] * n[2], 'cube %s: %d values, expected %d' % (path, vals.size, n[0] * n[1] * n[2])
    dV = abs(np.linalg.det(axes))
    i, j, k = np.meshgrid(np.arange(n[0]), np.arange(n[1]), np.arange(n[2]), indexing='ij')
    idx = np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1).astype(float)
    xyz = origin + idx @ axes
    return xyz, vals, dV, nuclei


def density_cube(wfn, outdir, spacing, overage, name):
    """psi4 cubeprop total density (Dt.cube) on a grid of `spacing` bohr, gzipped into outdir/name."""
    tmp = os.path.join(outdir, '_cube_tmp')
    os.makedirs(tmp, exist_ok=True)
    psi4.set_options({'cubeprop_tasks': ['density'], 'cubeprop_filepath': tmp,
                      'cubic_grid_spacing': [spacing] * 3, 'cubic_grid_overage': [overage] * 3})
    psi4.cubeprop(wfn)
    src = os.path.join(tmp, 'Dt.cube')
    dst = os.path.join(outdir, name)
    with open(src, 'rb') as fi, gzip.GzipFile(dst, 'wb', mtime=0) as fo:
        fo.write(fi.read())
    for fn in os.listdir(tmp):
        os.remove(os.path.join(tmp, fn))
    os.rmdir(tmp)
    return dst


def environment_charges(cube_paths, threshold):
    """Point charges of the environment as the library reads it: -rho*dV at cells, +Z at nuclei."""
    charges = []
    stats = []
    for p in cube_paths:
        xyz, rho, dV, nuclei = read_cube(p)
        keep = rho >= threshold
        q = rho[keep] * dV
        for c, qq in zip(xyz[keep], q):
            charges.append((-qq, c[0], c[1], c[2]))
        for z, r in nuclei:
            charges.append((float(z), r[0], r[1], r[2]))
        stats.append({'file': os.path.basename(p), 'grid_points': int(rho.size), 'cells_kept': int(keep.sum()),
                      'dV_bohr3': dV, 'sum_rho_dV_all': float(rho.sum() * dV),
                      'sum_rho_dV_kept': float(q.sum()), 'n_nuclei': len(nuclei),
                      'sum_Z': int(sum(z for z, _ in nuclei))})
    return charges, stats


def add_charge_bohr(ext, q, xyz):
    # psi4 1.3.2's ExternalPotential.addCharge takes Angstrom (checked: its 'Additional nuclear repulsion'
    # for a charge at 6 units matches 6 A, not 6 bohr), although psi4.QMMM.addChargeBohr suggests bohr.
    ext.addCharge(q, xyz[0] * BOHR_ANG, xyz[1] * BOHR_ANG, xyz[2] * BOHR_ANG)


def esp_analytic(wfn, points):
    """psi4's analytic electrostatic potential of wfn's molecule (nuclei + electrons) at points (bohr):
    ESP(p) = sum_A Z_A/|p-R_A| + tr[D V_p], V_p the integrals of one unit point charge at p."""
    mol = wfn.molecule()
    D = wfn.Da().np + wfn.Db().np
    out = []
    for p in points:
        ext = psi4.core.ExternalPotential()
        add_charge_bohr(ext, 1.0, p)
        V = ext.computePotentialMatrix(wfn.basisset()).np
        nuc = sum(mol.Z(a) / math.dist(p, (mol.x(a), mol.y(a), mol.z(a))) for a in range(mol.natom()))
        out.append(nuc + float(np.sum(D * V)))
    return out


def embedded_scf(qm_xyz, charges, basis, outdir, tag):
    """HF of the QM part in the field of `charges` (Q, x, y, z in bohr); returns reference dict."""
    options(basis)
    mol = geometry(qm_xyz, name=tag)
    ext = psi4.QMMM()
    for q in charges:
        add_charge_bohr(ext.extern, q[0], q[1:])
    psi4.core.set_global_option_python('EXTERN', ext.extern)
    t0 = time.time()
    E, wfn = psi4.energy('scf', return_wfn=True)
    t_scf = time.time() - t0
    V = ext.extern.computePotentialMatrix(wfn.basisset()).np
    D = wfn.Da().np + wfn.Db().np
    e_el_env = float(np.sum(D * V))
    e_nuc_env = 0.0
    for a in range(mol.natom()):
        R = (mol.x(a), mol.y(a), mol.z(a))
        e_nuc_env += sum(mol.Z(a) * q[0] / math.dist(R, q[1:]) for q in charges)
    e_nn = mol.nuclear_repulsion_energy()
    add_nuc = [l for l in open('psi4_output.dat') if 'Additional nuclear repulsion' in l]
    psi4_nuc_env = float(add_nuc[-1].split('=')[1])
    if abs(psi4_nuc_env - e_nuc_env) > 1e-8 * max(1.0, abs(e_nuc_env)):
        raise RuntimeError('nucleus-environment energy %r differs from psi4\'s %r' % (e_nuc_env, psi4_nuc_env))
    psi4.molden(wfn, os.path.join(outdir, tag + '.molden'), dovirtual=False)
    psi4.core.set_global_option_python('EXTERN', None)
    return wfn, {
        'total_energy': E,
        'electron_environment_energy': e_el_env,
        'nucleus_environment_energy': e_nuc_env,
        'nucleus_environment_energy_psi4_printed': psi4_nuc_env,
        'nuclear_repulsion_qm': e_nn,
        'energy_without_environment_terms': E - e_el_env - e_nuc_env,
        'scf_seconds': t_scf,
        'n_point_charges': len(charges),
    }


def provenance(basis, reference, extra=None):
    p = {'program': 'psi4', 'psi4_version': psi4.__version__, 'method': 'HF', 'basis': basis,
         'reference': reference, 'scf_type': 'pk (exact integrals)', 'e_convergence': 1e-10,
         'd_convergence': 1e-8, 'symmetry': 'c1, no_com, no_reorient (input frame kept)',
         'units': 'bohr, hartree'}
    if extra:
        p.update(extra)
    return p


# ---------------------------------------------------------------- systems
def water_geometry():
    # Experimental gas-phase water: r(OH) = 0.9572 A, angle(HOH) = 104.52 deg, O at the origin, C2 axis z.
    r, th = 0.9572, math.radians(104.52)
    return [('O', 0.0, 0.0, 0.0), ('H', 0.0, r * math.sin(th / 2), r * math.cos(th / 2)),
            ('H', 0.0, -r * math.sin(th / 2), r * math.cos(th / 2))]


def gen_water(out):
    options('cc-pvdz')
    mol = geometry(water_geometry(), name='water')
    E, wfn = psi4.energy('scf', return_wfn=True)
    psi4.molden(wfn, os.path.join(out, 'water.molden'), dovirtual=False)
    write_json(os.path.join(out, 'reference.json'), {
        'system': 'one water molecule, r(OH)=0.9572 A, angle 104.52 deg',
        'geometry_angstrom': [list(a) for a in water_geometry()], 'atoms': mol_info(mol),
        'total_energy': E, 'nuclear_repulsion': mol.nuclear_repulsion_energy(),
        'n_electrons': 10, 'multiplicity': 1, 'molden': 'water.molden', 'molden_basis_functions': molden_kind(wfn),
        'provenance': provenance('cc-pVDZ', 'RHF')})


def gen_hydrogen(out):
    options('cc-pvtz', reference='uhf')
    mol = geometry([('H', 0.0, 0.0, 0.0)], mult=2, name='hydrogen')
    E, wfn = psi4.energy('scf', return_wfn=True)
    psi4.molden(wfn, os.path.join(out, 'hydrogen.molden'), dovirtual=False)
    write_json(os.path.join(out, 'reference.json'), {
        'system': 'hydrogen atom at the origin, doublet (1 alpha electron)', 'atoms': mol_info(mol),
        'total_energy': E, 'exact_energy': -0.5, 'basis_error': E + 0.5, 'nuclear_repulsion': 0.0,
        'n_electrons': 1, 'multiplicity': 2, 'molden': 'hydrogen.molden', 'molden_basis_functions': molden_kind(wfn),
        'provenance': provenance('cc-pVTZ', 'UHF (identical to ROHF for one electron)')})


# S22 water dimer (Jurecka et al. 2006), Angstrom: water 1 (donor) is QM, water 2 the environment.
DIMER_QM = [('O', -1.551007, -0.114520, 0.0), ('H', -1.934259, 0.762503, 0.0), ('H', -0.599677, 0.040712, 0.0)]
DIMER_ENV = [('O', 1.350625, 0.111469, 0.0), ('H', 1.680398, -0.373741, -0.758561),
             ('H', 1.680398, -0.373741, 0.758561)]
DIMER_THRESHOLD = 1e-3
DIMER_SPACINGS = [(0.4, 'water2_density.cube.gz'), (0.2, 'water2_density_fine.cube.gz')]


def esp_points(qm_mol, extra):
    pts = [(qm_mol.x(a), qm_mol.y(a), qm_mol.z(a)) for a in range(qm_mol.natom())]
    return pts + extra


def gen_water_dimer(out):
    options('cc-pvdz')
    env = geometry(DIMER_ENV, name='water2')
    E_env, wfn_env = psi4.energy('scf', return_wfn=True)
    cubes = []
    for h, name in DIMER_SPACINGS:
        density_cube(wfn_env, out, h, 4.0, name)
        cubes.append(name)
    # ESP of the environment (analytic, psi4 integrals) at water 1's nuclei and points around it (bohr).
    qm_mol = geometry(DIMER_QM, name='water1_probe')
    extra = [(-4.0, 0.0, 0.0), (-2.93, 1.5, 1.0), (-2.0, -1.5, -1.0), (-3.5, 2.5, 0.0), (-1.0, 0.0, 2.0)]
    pts = esp_points(qm_mol, extra)
    esp = esp_analytic(wfn_env, pts)
    # The environment the library reads: the coarse cube at DIMER_THRESHOLD.
    charges, stats = environment_charges([os.path.join(out, cubes[0])], DIMER_THRESHOLD)
    stats_fine = environment_charges([os.path.join(out, cubes[1])], DIMER_THRESHOLD)[1]
    wfn, ref = embedded_scf(DIMER_QM, charges, 'cc-pvdz', out, 'water1_embedded')
    options('cc-pvdz')
    mol1 = geometry(DIMER_QM, name='water1_free')
    E_free = psi4.energy('scf')
    write_json(os.path.join(out, 'reference.json'), dict(ref, **{
        'system': 'S22 water dimer; water 1 (donor, QM) in the field of water 2 (environment)',
        'qm_atoms': mol_info(mol1), 'environment_atoms': mol_info(env),
        'qm_energy_without_environment': E_free, 'environment_hf_energy': E_env,
        'environment_cubes': stats + stats_fine, 'environment_cube_used_by_psi4': cubes[0],
        'density_threshold': DIMER_THRESHOLD,
        'environment_charges': 'cells of %s with rho >= threshold as -rho*dV, nuclei of the cube as +Z' % cubes[0],
        'molden': 'water1_embedded.molden', 'molden_basis_functions': molden_kind(wfn),
        'esp_reference': {
            'what': 'psi4 analytic electrostatic potential of water 2 alone (its HF/cc-pVDZ density and nuclei), '
                    'ESP = sum Z/|p-R| - int rho/|p-r|; the library\'s U_ES = -ESP',
            'points_bohr': [list(p) for p in pts], 'esp_hartree': esp},
        'provenance': provenance('cc-pVDZ', 'RHF', {'cube_grid_overage_bohr': 4.0,
                                                    'cube_spacings_bohr': [h for h, _ in DIMER_SPACINGS]})}))


# Glycine trimer (seed 004): cut at the C-alpha(1) - C(=O)(1) bond, FMO's cut position, capped with H.
GLY_THRESHOLD = float(os.environ.get('GLY_THRESHOLD', '4.1e-4'))  # -> 268,938 cells (seed: 268,782)
GLY_SPACING = float(os.environ.get('GLY_SPACING', '0.175'))


def read_xyz(path):
    lines = open(path).read().split('\n')
    n = int(lines[0])
    return [(t[0], float(t[1]), float(t[2]), float(t[3])) for t in (l.split() for l in lines[2:2 + n])]


def gly_partition(atoms):
    """Fragment 1 = N1, CA1 and their H + a cap H on CA1 towards C1 (1.09 A): methylamine, 18 e.
    Environment = the rest (fragments 2 and 3: C1=O1 onwards, 18 atoms) + a cap H on C1 towards CA1
    (1.10 A): 19 atoms, 84 electrons, the seed's MM size."""
    heavy = [i for i, a in enumerate(atoms) if a[0] != 'H']
    N1, CA1, C1 = heavy[0], heavy[1], heavy[2]
    pos = [np.array(a[1:]) for a in atoms]

    def owner(h):
        return min(heavy, key=lambda k: np.linalg.norm(pos[k] - pos[h]))
    frag1 = [i for i, a in enumerate(atoms) if i in (N1, CA1) or (a[0] == 'H' and owner(i) in (N1, CA1))]
    env = [i for i in range(len(atoms)) if i not in frag1]

    def cap(a, b, r):
        d = pos[b] - pos[a]
        return ('H',) + tuple(pos[a] + r * d / np.linalg.norm(d))
    qm = [atoms[i] for i in frag1] + [cap(CA1, C1, 1.09)]
    en = [atoms[i] for i in env] + [cap(C1, CA1, 1.10)]
    return qm, en


def gen_glycine_trimer(out):
    timings = {}
    qm, envat = gly_partition(read_xyz(os.path.join(out, 'gly3_mmff94.xyz')))
    t0 = time.time()
    options('6-31g*')
    env = geometry(envat, name='fragments23')
    E_env, wfn_env = psi4.energy('scf', return_wfn=True)
    timings['environment_scf_s'] = time.time() - t0
    t0 = time.time()
    cube = 'fragments23_density.cube.gz'
    density_cube(wfn_env, out, GLY_SPACING, 4.0, cube)
    timings['cube_s'] = time.time() - t0
    qm_mol = geometry(qm, name='frag1_probe')
    c = np.array([[qm_mol.x(a), qm_mol.y(a), qm_mol.z(a)] for a in range(qm_mol.natom())]).mean(axis=0)
    extra = [tuple(c + d) for d in ([0, 0, 0], [2.0, 0, 0], [-2.0, 0, 0], [0, 2.0, 0], [0, -2.0, 0], [0, 0, 2.0])]
    pts = esp_points(qm_mol, extra)
    esp = esp_analytic(wfn_env, pts)
    t0 = time.time()
    charges, stats = environment_charges([os.path.join(out, cube)], GLY_THRESHOLD)
    timings['charges_s'] = time.time() - t0
    print('cells kept:', stats[0]['cells_kept'], flush=True)
    ref = {}
    if os.environ.get('GLY_EMBED', '1') == '1':
        wfn, ref = embedded_scf(qm, charges, '6-31g*', out, 'frag1_embedded')
        ref['molden'] = 'frag1_embedded.molden'
        ref['molden_basis_functions'] = molden_kind(wfn)
    options('6-31g*')
    mol1 = geometry(qm, name='frag1_free')
    E_free = psi4.energy('scf')
    write_json(os.path.join(out, 'reference.json'), dict(ref, **{
        'system': 'Gly-Gly-Gly (neutral), MMFF94 geometry (openbabel); fragment 1 (H2N-CH2-, capped: methylamine) '
                  'QM in the field of fragments 2+3 (one H-capped molecule, 19 atoms, 84 electrons)',
        'qm_atoms': mol_info(mol1), 'environment_atoms': mol_info(env),
        'qm_energy_without_environment': E_free, 'environment_hf_energy': E_env,
        'environment_cubes': stats, 'environment_cube_used_by_psi4': cube, 'density_threshold': GLY_THRESHOLD,
        'environment_charges': 'cells of %s with rho >= threshold as -rho*dV, nuclei of the cube as +Z' % cube,
        'esp_reference': {'what': 'psi4 analytic ESP of fragments 2+3 alone; U_ES = -ESP',
                          'points_bohr': [list(map(float, p)) for p in pts], 'esp_hartree': esp},
        'timings_seconds_2_cores': timings,
        'provenance': provenance('6-31G*', 'RHF', {'cube_grid_overage_bohr': 4.0, 'cube_spacing_bohr': GLY_SPACING})}))


# Water among TIP3P-like MM point charges (forces reference): the QM water of gen_water, and MM waters of the
# TIP3P geometry and charges placed at random (fixed seed, numpy's RandomState: its stream is frozen) in a
# sphere around it. Every MM site keeps MM_MIN_QM bohr from every QM nucleus (the HF density there is < ~1e-3
# e/bohr^3, so a site's field estimator has a small variance), MM oxygens keep 2.7 A from each other.
MM_SEED = 20261204
MM_WATERS = 100
MM_RADIUS_ANG = 9.0
MM_MIN_QM = 4.0
MM_MIN_OO_ANG = 2.7
TIP3P_Q = {'O': -0.834, 'H': 0.417}


def random_rotation(rng):
    # A uniform rotation from a uniform unit quaternion (Shoemake).
    u1, u2, u3 = rng.random_sample(3)
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    w, x, y, z = a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2), \
        b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def mm_waters(qm_bohr):
    """MM_WATERS waters (O, H, H; bohr) and their charges; returns (sites[n,3] bohr, q[n], waters[k,3,3])."""
    rng = np.random.RandomState(MM_SEED)
    local = np.array([a[1:] for a in water_geometry()]) / BOHR_ANG   # O at the origin
    qm = np.array(qm_bohr)
    waters = []
    tries = 0
    while len(waters) < MM_WATERS:
        tries += 1
        if tries > 1000000:
            raise RuntimeError('cannot place %d MM waters' % MM_WATERS)
        o = (rng.random_sample(3) * 2 - 1) * MM_RADIUS_ANG / BOHR_ANG
        rot = random_rotation(rng)
        if np.linalg.norm(o) > MM_RADIUS_ANG / BOHR_ANG:
            continue
        w = o + local @ rot.T
        if min(np.linalg.norm(s - a) for s in w for a in qm) < MM_MIN_QM:
            continue
        if any(np.linalg.norm(o - v[0]) < MM_MIN_OO_ANG / BOHR_ANG for v in waters):
            continue
        waters.append(w)
    waters = np.array(waters)
    sites = waters.reshape(-1, 3)
    q = np.array([TIP3P_Q[s] for _ in range(MM_WATERS) for s in ('O', 'H', 'H')])
    return sites, q, waters


def read_grid_values(path, ncol):
    vals = np.array(open(path).read().split(), dtype=float)
    return vals.reshape(-1, ncol)


def gen_water_mm(out):
    options('cc-pvdz')
    probe = geometry(water_geometry(), name='water_probe')
    qm_bohr = [(probe.x(a), probe.y(a), probe.z(a)) for a in range(probe.natom())]
    Z = np.array([probe.Z(a) for a in range(probe.natom())])
    R = np.array(qm_bohr)
    sites, q, waters = mm_waters(qm_bohr)
    charges = [(float(qq), s[0], s[1], s[2]) for qq, s in zip(q, sites)]
    wfn, ref = embedded_scf(water_geometry(), charges, 'cc-pvdz', out, 'water_mm')
    # psi4's oeprop on the embedded density: grid.dat is read in the molecule's input units (Angstrom here);
    # grid_esp.dat and grid_field.dat are in atomic units and hold the molecule's density and nuclei only
    # (checked below against psi4's analytic integrals of D and the nuclei, which exclude the external charges).
    with open('grid.dat', 'w') as f:
        for s in sites:
            f.write('%.12f %.12f %.12f\n' % tuple(s * BOHR_ANG))
    psi4.oeprop(wfn, 'GRID_ESP', 'GRID_FIELD', 'DIPOLE', title='water_mm')
    esp = read_grid_values('grid_esp.dat', 1)[:, 0]
    field = read_grid_values('grid_field.dat', 3)
    for fn in ('grid.dat', 'grid_esp.dat', 'grid_field.dat'):
        os.remove(fn)
    if field.shape != (len(sites), 3) or esp.shape != (len(sites),):
        raise RuntimeError('grid_field.dat / grid_esp.dat: %s / %s values for %d sites'
                           % (field.shape, esp.shape, len(sites)))
    # Independent checks: the ESP from psi4's point-charge integrals tr[D V_p] + nuclei, and the field as its
    # central difference (h = 1e-3 bohr: the O(h^2) error is ~1e-9 a.u. here).
    esp_int = np.array(esp_analytic(wfn, [tuple(s) for s in sites]))
    h = 1e-3
    field_fd = np.zeros_like(field)
    for c in range(3):
        d = np.zeros(3)
        d[c] = h
        plus = np.array(esp_analytic(wfn, [tuple(s + d) for s in sites]))
        minus = np.array(esp_analytic(wfn, [tuple(s - d) for s in sites]))
        field_fd[:, c] = -(plus - minus) / (2 * h)
    # The nuclei's exact field at the sites, and the electrons' part as psi4's total minus it.
    dr = sites[:, None, :] - R[None, :, :]
    dist = np.linalg.norm(dr, axis=2)
    field_nuc = np.einsum('a,kac->kc', Z, dr / dist[:, :, None] ** 3)
    esp_nuc = (Z[None, :] / dist).sum(axis=1)
    field_el = field - field_nuc
    # Dipole moment (a.u.) of the HF density + nuclei, about the origin (the molecule is neutral).
    mints = psi4.core.MintsHelper(wfn.basisset())
    D = wfn.Da().np + wfn.Db().np
    # psi4's dipole integrals carry the electron's charge (-1): mu = tr[D M] + sum_A Z_A R_A.
    mu = np.array([np.sum(D * m.np) for m in mints.ao_dipole()]) + Z @ R
    mu_psi4 = np.array([wfn.variable('WATER_MM DIPOLE ' + c) for c in 'XYZ']) / psi4.constants.dipmom_au2debye
    # Far-field check: the field of the point dipole mu at the sites, relative deviation by distance.
    rr = np.linalg.norm(sites, axis=1)
    rhat = sites / rr[:, None]
    field_dip = (3 * rhat * (rhat @ mu)[:, None] - mu[None, :]) / rr[:, None] ** 3
    # With the quadrupole too (second moments M_ij = tr[D M_ij] + sum Z R_i R_j, Q = 3M - tr(M) 1,
    # phi = mu.r/r^3 + r.Q.r/(2 r^5)), the rest falls as 1/r^2 instead of 1/r: the far field is the molecule's.
    quad = [np.sum(D * m.np) for m in mints.ao_quadrupole()]   # xx xy xz yy yz zz
    M2 = np.array([[quad[0], quad[1], quad[2]], [quad[1], quad[3], quad[4]], [quad[2], quad[4], quad[5]]])
    M2 += np.einsum('a,ai,aj->ij', Z, R, R)
    Q2 = 3 * M2 - np.trace(M2) * np.eye(3)

    def phi_multipole(p):
        r = np.linalg.norm(p, axis=-1)
        return (p @ mu) / r ** 3 + 0.5 * np.einsum('ki,ij,kj->k', p, Q2, p) / r ** 5
    field_mp = np.zeros_like(field)
    for c in range(3):
        d = np.zeros(3)
        d[c] = 1e-4
        field_mp[:, c] = -(phi_multipole(sites + d) - phi_multipole(sites - d)) / 2e-4
    dev = np.linalg.norm(field - field_dip, axis=1) / np.linalg.norm(field_dip, axis=1)
    dev_mp = np.linalg.norm(field - field_mp, axis=1) / np.linalg.norm(field_dip, axis=1)
    far = rr > 15.0
    near = rr < 8.0
    # Forces: F_k = q_k E_k on each MM charge (the QM molecule's field), and on each QM nucleus from the MM
    # charges, F_A = Z_A sum_k q_k (R_A - r_k)/|R_A - r_k|^3 (exact, classical).
    f_mm = q[:, None] * field
    f_mm_el = q[:, None] * field_el
    f_mm_nuc = q[:, None] * field_nuc
    f_qm_nuc = np.einsum('a,k,akc->ac', Z, q, -dr.transpose(1, 0, 2) / dist.T[:, :, None] ** 3)
    checks = {
        'max_abs_field_psi4_minus_fd_of_integrals': float(np.abs(field - field_fd).max()),
        'max_abs_esp_psi4_minus_integrals': float(np.abs(esp - esp_int).max()),
        'dipole_au': mu.tolist(), 'dipole_au_psi4_printed': mu_psi4.tolist(),
        'quadrupole_au_traceless_3M': Q2.tolist(),
        'median_rel_field_minus_dipole_field': {'below_8_bohr': float(np.median(dev[near])),
                                                'beyond_15_bohr': float(np.median(dev[far]))},
        'median_rel_field_minus_dipole_quadrupole_field': {'below_8_bohr': float(np.median(dev_mp[near])),
                                                           'beyond_15_bohr': float(np.median(dev_mp[far]))},
        'n_sites_below_8_beyond_15_bohr': [int(near.sum()), int(far.sum())],
        'newton_nuclei_sum_f_mm_nuc_plus_f_qm_nuc': np.abs(f_mm_nuc.sum(axis=0) + f_qm_nuc.sum(axis=0)).max(),
        'min_site_qm_distance_bohr': float(dist.min()),
    }
    checks['newton_nuclei_sum_f_mm_nuc_plus_f_qm_nuc'] = float(checks['newton_nuclei_sum_f_mm_nuc_plus_f_qm_nuc'])
    if checks['max_abs_field_psi4_minus_fd_of_integrals'] > 1e-7 or checks['max_abs_esp_psi4_minus_integrals'] > 1e-8:
        raise RuntimeError('psi4 GRID_FIELD/GRID_ESP differ from its integrals: %r' % checks)
    if np.abs(mu - mu_psi4).max() > 1e-5:
        raise RuntimeError('dipole %r differs from psi4\'s %r' % (mu, mu_psi4))
    with open(os.path.join(out, 'mm_charges.txt'), 'w') as f:
        f.write('# %d TIP3P-like MM point charges around data/water_mm/water_mm.molden\'s water: x y z (bohr) q (e)\n'
                % len(q))
        for s, qq in zip(sites, q):
            f.write('%.12f %.12f %.12f %.3f\n' % (s[0], s[1], s[2], qq))
    write_json(os.path.join(out, 'reference.json'), dict(ref, **{
        'system': 'water (QM, HF/cc-pVDZ polarised by the MM charges) among %d TIP3P-like waters (%d MM point '
                  'charges, O %.3f, H %.3f; seed %d in a %.1f A sphere, every site >= %.1f bohr from the QM nuclei)'
                  % (MM_WATERS, len(q), TIP3P_Q['O'], TIP3P_Q['H'], MM_SEED, MM_RADIUS_ANG, MM_MIN_QM),
        'qm_atoms': mol_info(probe), 'molden': 'water_mm.molden', 'molden_basis_functions': molden_kind(wfn),
        'mm_charges_file': 'mm_charges.txt',
        'mm_sites_bohr': sites.tolist(), 'mm_q': q.tolist(),
        'field_at_sites': {
            'what': 'electric field (hartree/(e bohr)) of the QM molecule alone (its HF density + nuclei; not the '
                    'MM charges) at each MM site: total = psi4 oeprop GRID_FIELD, nuclei = sum_A Z_A (r_k - '
                    'R_A)/|r_k - R_A|^3 (exact), electrons = total - nuclei',
            'total': field.tolist(), 'nuclei': field_nuc.tolist(), 'electrons': field_el.tolist()},
        'esp_at_sites': {'what': 'psi4 oeprop GRID_ESP (hartree/e): the QM molecule\'s potential at each site; '
                                 'nuclei part exact, electrons = total - nuclei',
                         'total': esp.tolist(), 'nuclei': esp_nuc.tolist(), 'electrons': (esp - esp_nuc).tolist()},
        'forces': {
            'what': 'hartree/bohr. mm: F_k = q_k E_k on each MM charge from the QM molecule (total, electrons, '
                    'nuclei); qm_nuclei: the force of the MM charges on each QM nucleus (exact, classical); sums',
            'mm_total': f_mm.tolist(), 'mm_electrons': f_mm_el.tolist(), 'mm_nuclei': f_mm_nuc.tolist(),
            'qm_nuclei': f_qm_nuc.tolist(),
            'sum_mm_total': f_mm.sum(axis=0).tolist(), 'sum_mm_electrons': f_mm_el.sum(axis=0).tolist(),
            'sum_mm_nuclei': f_mm_nuc.sum(axis=0).tolist(), 'sum_qm_nuclei': f_qm_nuc.sum(axis=0).tolist()},
        'checks': checks,
        'provenance': provenance('cc-pVDZ', 'RHF', {'grid_properties': 'oeprop GRID_ESP, GRID_FIELD'})}))


if __name__ == '__main__':
    system, out = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    os.chdir(out)
    psi4.set_output_file(os.path.join(out, 'psi4_output.dat'), False)
    psi4.set_memory('2 GB')
    psi4.set_num_threads(int(os.environ.get('PSI4_THREADS', '2')))
    t0 = time.time()
    {'water': gen_water, 'hydrogen': gen_hydrogen, 'water_dimer': gen_water_dimer,
     'glycine_trimer': gen_glycine_trimer, 'water_mm': gen_water_mm}[system](out)
    print('%s: done in %.1f s' % (system, time.time() - t0))
