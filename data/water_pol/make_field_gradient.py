#!/usr/bin/python3
"""data/water_pol: the field gradient of the fixed HF density at the 300 sites (the dipoles' forces' reference).

    /usr/bin/python3 data/water_pol/make_field_gradient.py [OUTDIR]      (default: this folder)

Writes field_gradient.json: dE_a/dR_b at each site (xx xy xz yy yz zz, hartree/(e bohr^2)) of water_mm's HF/cc-pVDZ
density polarised by the MM charges (the SCF of data/water_mm, done again here with the same inputs: its psi4
field at the sites must equal ../water_mm/reference.json's), as central differences of psi4's oeprop GRID_FIELD at
the sites displaced by +-h along x, y and z (h = 1e-3 bohr; the O(h^2) error is ~1e-9 a.u. here, measured against
h = 2e-3 in the checks). The nuclei's part is exact (analytic); the electrons' part is the total minus it.
The density reaches the sites, so the gradient of its field has the trace 4 pi rho_charge(R_k) (div E); the VMC
estimator sums point electrons' gradients, each traceless, and averages to the principal value, which lacks the
contact term (4 pi / 3) rho_charge(R_k) delta_ab: 'electrons_point_estimator' is the electrons' part less trace / 3
on the diagonal. With the fixed HF wavefunction and no Jastrow the driver's electrons' field gradient (key forces
with pol_file) must equal that within its error bars, and (mu . grad) E with the run's dipoles too.
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
import psi4_systems as ps  # noqa: E402
from psi4_systems import np, psi4  # noqa: E402

H = 1e-3
PAIRS = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]   # xx xy xz yy yz zz


def grid_field(wfn, points):
    """psi4's GRID_FIELD of wfn's density and nuclei at points (bohr), n x 3 (atomic units)."""
    with open('grid.dat', 'w') as f:
        for s in points:
            f.write('%.14f %.14f %.14f\n' % tuple(s * ps.BOHR_ANG))
    psi4.oeprop(wfn, 'GRID_FIELD', title='water_pol_grad')
    field = ps.read_grid_values('grid_field.dat', 3)
    for fn in ('grid.dat', 'grid_field.dat'):
        os.remove(fn)
    if field.shape != (len(points), 3):
        raise RuntimeError('grid_field.dat: %s values for %d points' % (field.shape, len(points)))
    return field


def central(wfn, sites, h):
    """J[k, a, b] = dE_a/dR_b at site k from GRID_FIELD at sites +- h e_b."""
    J = np.zeros((len(sites), 3, 3))
    for b in range(3):
        d = np.zeros(3)
        d[b] = h
        J[:, :, b] = (grid_field(wfn, sites + d) - grid_field(wfn, sites - d)) / (2 * h)
    return J


def main(out):
    mm = json.load(open(os.path.join(HERE, '..', 'water_mm', 'reference.json')))
    work = tempfile.mkdtemp(prefix='water_pol_grad_')
    os.chdir(work)
    psi4.set_output_file(os.path.join(work, 'psi4_output.dat'), False)
    psi4.set_memory('2 GB')
    psi4.set_num_threads(int(os.environ.get('PSI4_THREADS', '2')))
    ps.options('cc-pvdz')
    probe = ps.geometry(ps.water_geometry(), name='water_probe')
    qm_bohr = [(probe.x(a), probe.y(a), probe.z(a)) for a in range(probe.natom())]
    Z = np.array([probe.Z(a) for a in range(probe.natom())])
    R = np.array(qm_bohr)
    sites, q, _ = ps.mm_waters(qm_bohr)
    if np.abs(sites - np.array(mm['mm_sites_bohr'])).max() > 1e-12:
        raise RuntimeError('the MM sites differ from data/water_mm/reference.json')
    charges = [(float(qq), s[0], s[1], s[2]) for qq, s in zip(q, sites)]
    wfn, _ = ps.embedded_scf(ps.water_geometry(), charges, 'cc-pvdz', work, 'water_mm')
    field = grid_field(wfn, sites)
    same_scf = float(np.abs(field - np.array(mm['field_at_sites']['total'])).max())
    if same_scf > 1e-8:
        raise RuntimeError('the field at the sites differs from data/water_mm by %g' % same_scf)
    J = central(wfn, sites, H)
    J2 = central(wfn, sites, 2 * H)   # the O(h^2) error: (J2 - J) / 3 estimates J - exact
    # The nuclei's exact gradient: sum_A Z_A (delta_ab / d^3 - 3 d_a d_b / d^5), d = R_k - R_A.
    d = sites[:, None, :] - R[None, :, :]
    r = np.linalg.norm(d, axis=2)
    Jn = (np.einsum('a,ka->k', Z, 1 / r ** 3)[:, None, None] * np.eye(3)[None]
          - 3 * np.einsum('a,kai,kaj->kij', Z, d / r[:, :, None] ** 5, d))
    sym = 0.5 * (J + J.transpose(0, 2, 1))
    total = np.array([[sym[k, a, b] for a, b in PAIRS] for k in range(len(sites))])
    nuclei = np.array([[Jn[k, a, b] for a, b in PAIRS] for k in range(len(sites))])
    electrons = total - nuclei
    trace = electrons[:, 0] + electrons[:, 3] + electrons[:, 5]
    point = electrons - np.outer(trace / 3, [1, 0, 0, 1, 0, 1])
    scale = np.abs(total).max()
    checks = {
        'max_abs_field_minus_water_mm_reference': same_scf,
        'max_abs_asymmetry_dEa_dRb_minus_dEb_dRa': float(np.abs(J - J.transpose(0, 2, 1)).max()),
        'max_abs_trace': float(np.abs(np.trace(J, axis1=1, axis2=2)).max()),
        'max_abs_contact_term_trace_over_3': float(np.abs(trace / 3).max()),
        'max_rel_contact_term_per_site': float((np.abs(trace / 3) / np.abs(electrons).max(axis=1)).max()),
        'max_abs_h2_minus_h_over_3': float(np.abs(J2 - J).max() / 3),
        'max_abs_gradient': float(scale),
    }
    ps.write_json(os.path.join(out, 'field_gradient.json'), {
        'what': 'gradient of the field of water_mm\'s HF/cc-pVDZ density and nuclei (polarised by the MM charges) '
                'at the 300 MM sites of data/water_mm (the sites of water_pol.pot), dE_a/dR_b per site as xx xy xz '
                'yy yz zz (hartree/(e bohr^2)): central differences (h = %g bohr) of psi4 oeprop GRID_FIELD, '
                'symmetrised; nuclei: exact; electrons: total - nuclei; electrons_point_estimator: electrons less '
                'its trace / 3 on the diagonal (the contact term (4 pi / 3) rho(R_k) that point electrons\' '
                'traceless gradients do not sample)' % H,
        'n_sites': len(sites),
        'h_bohr': H,
        'total': total.tolist(),
        'nuclei': nuclei.tolist(),
        'electrons': electrons.tolist(),
        'electrons_point_estimator': point.tolist(),
        'checks': checks,
        'provenance': ps.provenance('cc-pVDZ', 'RHF', {'grid_properties': 'oeprop GRID_FIELD at the sites +- h'}),
    })
    os.chdir(HERE)
    shutil.rmtree(work)
    print(json.dumps(checks, indent=1))


if __name__ == '__main__':
    main(os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else HERE)
