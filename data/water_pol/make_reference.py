#!/usr/bin/python3
"""data/water_pol: the polarizable version of data/water_mm, and its independent reference.

    /usr/bin/python3 data/water_pol/make_reference.py [OUTDIR]      (default: this folder)

The QM molecule, its HF/cc-pVDZ orbitals (water_mm.molden) and psi4's field of its HF density and nuclei at the
300 MM sites (oeprop GRID_FIELD, in ../water_mm/reference.json) are data/water_mm's (psi4_systems.py water_mm;
../water_mm/generate.sh rebuilds them with Debian's psi4 1.3.2). Here the 100 TIP3P-like waters become a potential
file, water_pol.pot: the same charges, isotropic polarizabilities on every site (O 5.7, H 2.0 bohr^3: a water's
~9.7 bohr^3 shared over its atoms), each molecule excluding itself, no damping (CPPE's and PElib's defaults).

The reference solves mu_i = alpha_i (E_qm,i + E_mm,i + sum_j T_ij mu_j) for that fixed density with a dense
direct solve (numpy.linalg.solve of the 900 x 900 system (alpha^-1 - T) mu = E_qm + E_mm), written without the
library: its own static field, dipole tensor and exclusions. With a fixed HF wavefunction the VMC average of the
electrons' field at the sites is the HF density's, so the driver's dipoles must equal these within their error bars.
"""
import json
import os
import sys

sys.path.insert(0, '/usr/lib/x86_64-linux-gnu')
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA = {'O': 5.7, 'H': 2.0}


def main(out):
    mm = json.load(open(os.path.join(HERE, '..', 'water_mm', 'reference.json')))
    xyz = np.array(mm['mm_sites_bohr'])
    q = np.array(mm['mm_q'])
    n = len(q)
    label = ['O' if qq < 0 else 'H' for qq in q]
    if n % 3 or any(label[3 * w:3 * w + 3] != ['O', 'H', 'H'] for w in range(n // 3)):
        raise RuntimeError('expected the sites as O H H per water')
    alpha = np.array([ALPHA[s] for s in label])
    mol = np.arange(n) // 3
    e_qm = np.array(mm['field_at_sites']['total'])        # psi4 GRID_FIELD: HF density + nuclei, a.u.
    e_nuc = np.array(mm['field_at_sites']['nuclei'])

    # Pairs of different molecules interact; a molecule's own sites are excluded.
    d = xyz[:, None, :] - xyz[None, :, :]                  # r_i - r_j
    r = np.linalg.norm(d, axis=2)
    inter = mol[:, None] != mol[None, :]
    rr = np.where(inter, r, 1.0)
    e_mm = np.einsum('ij,ijc->ic', np.where(inter, q[None, :] / rr ** 3, 0.0), d)
    T = (3 * d[:, :, :, None] * d[:, :, None, :] / rr[:, :, None, None] ** 5
         - np.eye(3)[None, None] / rr[:, :, None, None] ** 3)
    T[~inter] = 0.0
    B = -T.transpose(0, 2, 1, 3).reshape(3 * n, 3 * n)
    B[np.arange(3 * n), np.arange(3 * n)] += np.repeat(1.0 / alpha, 3)
    rhs = (e_qm + e_mm).reshape(3 * n)
    mu = np.linalg.solve(B, rhs)
    resid = np.linalg.norm(B @ mu - rhs) / np.linalg.norm(rhs)
    mu = mu.reshape(n, 3)
    e_pol_qm = -0.5 * np.sum(mu * e_qm)
    e_pol_mm = -0.5 * np.sum(mu * e_mm)
    # The induced dipoles' interaction with the QM charges, -mu . E_qm (in the VMC local energy), and its nuclei's part.
    e_int = -np.sum(mu * e_qm)
    e_int_nuc = -np.sum(mu * e_nuc)

    with open(os.path.join(out, 'water_pol.pot'), 'w') as f:
        f.write('! data/water_pol: 100 TIP3P-like waters around data/water_mm/water_mm.molden\'s water (sites and\n'
                '! charges of ../water_mm/mm_charges.txt), isotropic polarizabilities O %.1f, H %.1f bohr^3, each\n'
                '! molecule excluding itself. Written by make_reference.py.\n' % (ALPHA['O'], ALPHA['H']))
        f.write('@COORDINATES\n%d\nAU\n' % n)
        for i in range(n):
            f.write('%s %.12f %.12f %.12f %d\n' % (label[i], xyz[i, 0], xyz[i, 1], xyz[i, 2], i + 1))
        f.write('@MULTIPOLES\nORDER 0\n%d\n' % n)
        for i in range(n):
            f.write('%d %.3f\n' % (i + 1, q[i]))
        f.write('@POLARIZABILITIES\nORDER 1 1\n%d\n' % n)
        for i in range(n):
            a = alpha[i]
            f.write('%d %.4f 0.0 0.0 %.4f 0.0 %.4f\n' % (i + 1, a, a, a))
        f.write('EXCLISTS\n%d 3\n' % n)
        for i in range(n):
            w = 3 * (i // 3)
            f.write('%d %s\n' % (i + 1, ' '.join(str(j + 1) for j in range(w, w + 3) if j != i)))
    ref = {
        'system': 'water (QM, HF/cc-pVDZ of data/water_mm, polarised by the charges) among 100 polarizable '
                  'TIP3P-like waters: water_pol.pot (300 sites, alpha O %.1f, H %.1f bohr^3, molecules '
                  'excluded, no damping)' % (ALPHA['O'], ALPHA['H']),
        'what': 'induced dipoles (e bohr) of the fixed HF density: mu = alpha (E_qm + E_mm + T mu), E_qm = psi4 '
                'GRID_FIELD of the HF density and nuclei (../water_mm/reference.json field_at_sites.total), solved '
                'densely with numpy; energies hartree: e_pol = -1/2 mu.(E_qm + E_mm), its parts, e_induced_qm = '
                '-mu.E_qm',
        'pot_file': 'water_pol.pot', 'molden': '../water_mm/water_mm.molden', 'n_sites': n,
        'mu': mu.reshape(-1).tolist(), 'field_qm': e_qm.reshape(-1).tolist(), 'field_mm': e_mm.reshape(-1).tolist(),
        'e_pol': e_pol_qm + e_pol_mm, 'e_pol_qm': e_pol_qm, 'e_pol_mm': e_pol_mm,
        'e_induced_qm': e_int, 'e_induced_qm_nuclei': e_int_nuc,
        'solve_relative_residual': resid,
        'psi4_polarizable_embedding': 'none: Debian\'s psi4 1.3.2 has no PE module (CPPE came with psi4 1.4)',
    }
    with open(os.path.join(out, 'reference.json'), 'w') as f:
        json.dump(ref, f, indent=2, sort_keys=True)
        f.write('\n')
    print('sites %d, rms |mu| %.6e, E_pol %.10f (QM %.10f, MM %.10f), -mu.E_qm %.10f, residual %.1e'
          % (n, np.sqrt(np.mean(mu ** 2)), e_pol_qm + e_pol_mm, e_pol_qm, e_pol_mm, e_int, resid))


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
