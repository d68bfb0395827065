#!/usr/bin/env bash
# vmc_pol_cost.sh BUILD_DIR [OUT_DIR] [BACKEND] [N_WATERS] [WALKERS] [BLOCKS] -- the cost of qmmm_vmc's polarizable
# MM: data/water_mm's water (HF orbitals, no Jastrow) among N_WATERS TIP3P-like waters as polarizable sites (key
# pol_file; O 5.7, H 2.0 bohr^3, each molecule excluding itself), self-consistent (pol_mode 'scf', 2 blocks an
# update, at most 4) and from the first update ('first'), BLOCKS blocks of 64 steps after the updates; each against
# a fixed-charge run (key mm_charges, the same sites' charges) that samples as many blocks (the update blocks are
# sampling too), same seed; each run the median of REPEATS by total time (default 3; bench/common/median_run.sh).
# Prints a Markdown table and writes OUT_DIR/vmc_pol_cost.json.
#   BACKEND cpu (default; one thread) or cuda. N_WATERS 100 (default: data/water_pol's sites) or more: waters on a
#   cubic lattice of 5.86 bohr (liquid water's density) around the QM water, random orientations (fixed seed).
# From the repository root.
set -euo pipefail
build=${1:?usage: vmc_pol_cost.sh BUILD_DIR [OUT_DIR] [BACKEND] [N_WATERS] [WALKERS] [BLOCKS]}
out=${2:-vmc_pol_cost_out}; backend=${3:-cpu}; waters=${4:-100}; walkers=${5:-64}; blocks=${6:-8}
exe="$build/vmc_driver/qmmm_vmc"
source "$(dirname "$0")/../common/median_run.sh"
repeats=${REPEATS:-3}
mkdir -p "$out"
if ((waters == 100)); then
  pot=data/water_pol/water_pol.pot charges=data/water_mm/mm_charges.txt
else
  pot=$out/waters.pot charges=$out/waters_charges.txt
  python3 - "$waters" "$pot" "$charges" <<'PY'
import math, random, sys
n, pot, chg = int(sys.argv[1]), sys.argv[2], sys.argv[3]
random.seed(11)
qm = [(0.0, 0.0, 0.0), (0.0, 1.430428814275, 1.107157050959), (0.0, -1.430428814275, 1.107157050959)]
a, r = 5.86, 1.8088  # lattice spacing; TIP3P O-H (0.9572 A) in bohr
th = math.radians(104.52) / 2
side = 1
while (side ** 3) < 1.2 * n + 8: side += 1
sites = []
cells = sorted(((i, j, k) for i in range(side) for j in range(side) for k in range(side)),
               key=lambda c: sum((x - (side - 1) / 2) ** 2 for x in c))
for c in cells:
    if len(sites) == 3 * n: break
    o = [a * (x - (side - 1) / 2) for x in c]
    if min(math.dist(o, p) for p in qm) < 5.0: continue
    u = [random.gauss(0, 1) for _ in range(3)]; u = [x / math.hypot(*u) for x in u]   # bisector
    v = [random.gauss(0, 1) for _ in range(3)]; d = sum(x * y for x, y in zip(u, v))
    v = [x - d * y for x, y in zip(v, u)]; v = [x / math.hypot(*v) for x in v]        # in-plane normal
    hs = [[o[k] + r * (math.cos(th) * u[k] + s * math.sin(th) * v[k]) for k in range(3)] for s in (1, -1)]
    sites += [('O', o, -0.834, 5.7), ('H', hs[0], 0.417, 2.0), ('H', hs[1], 0.417, 2.0)]
m = len(sites)
with open(pot, 'w') as f:
    f.write(f'! {m // 3} TIP3P-like waters (vmc_pol_cost.sh)\n@COORDINATES\n{m}\nAU\n')
    f.writelines(f'{e} {p[0]:.10f} {p[1]:.10f} {p[2]:.10f} {i + 1}\n' for i, (e, p, q, al) in enumerate(sites))
    f.write(f'@MULTIPOLES\nORDER 0\n{m}\n')
    f.writelines(f'{i + 1} {q}\n' for i, (e, p, q, al) in enumerate(sites))
    f.write(f'@POLARIZABILITIES\nORDER 1 1\n{m}\n')
    f.writelines(f'{i + 1} {al} 0.0 0.0 {al} 0.0 {al}\n' for i, (e, p, q, al) in enumerate(sites))
    f.write(f'EXCLISTS\n{m} 3\n')
    for i in range(m):
        w = 3 * (i // 3) + 1
        f.write(' '.join(str(k) for k in [i + 1] + [k for k in (w, w + 1, w + 2) if k != i + 1]) + '\n')
with open(chg, 'w') as f:
    f.write(f'# {m} charges of vmc_pol_cost.sh\'s waters: x y z (bohr) q (e)\n')
    f.writelines(f'{p[0]:.10f} {p[1]:.10f} {p[2]:.10f} {q}\n' for e, p, q, al in sites)
PY
fi
get() { { grep -o "\"$2\": [^,}]*" "$1" || true; } | head -1 | sed 's/.*: //'; }
# One run: name, environment keys, blocks.
run() {
  cat > "$out/$1.nml" <<NML
&vmc
  molden = 'data/water_mm/water_mm.molden'
$2
  jastrow = .false., cusp_correction = .false.
  n_walkers = $walkers, n_equil = 20, n_blocks = $3, steps_per_block = 64, energy_every = 4
  seed = 2027, n_threads = 1, backend = '$backend'
/
NML
  median_run "$out/$1" "$repeats" "$exe" "$out/$1.nml"
}
fixed="  mm_charges = '$charges'"
run scf "  pol_file = '$pot', pol_mode = 'scf', pol_blocks = 2, pol_max_updates = 4" "$blocks"
run first "  pol_file = '$pot', pol_mode = 'first', pol_blocks = 2" "$blocks"
u_scf=$(get "$out/scf.json" updates); u_first=$(get "$out/first.json" updates)
# The fixed-charge runs as long as each: the polarizable runs' update blocks are sampling too.
len_scf=$((blocks + 2 * u_scf)); len_first=$((blocks + 2 * u_first))
run fixed_scf "$fixed" "$len_scf"
run fixed_first "$fixed" "$len_first"
sites=$(grep -c . "$charges"); sites=$((sites - 1))
echo "| environment | blocks sampled | total (s) | field (s) | fixed charges, as many blocks (s) | total / fixed charges | sampling / fixed charges |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
json="{\"system\": \"water (HF) + $sites TIP3P-like sites\", \"backend\": \"$backend\", \"repeats\": $repeats, \"walkers\": $walkers, \"steps_per_block\": 64, \"runs\": ["
sep=""
for r in scf first; do
  t=$(get "$out/$r.json" total); f=$(get "$out/$r.json" field); tb=$(get "$out/fixed_$r.json" total)
  len=$([ $r = scf ] && echo $len_scf || echo $len_first)
  sm=$(get "$out/$r.json" sampling); smb=$(get "$out/fixed_$r.json" sampling)
  ratio=$(awk "BEGIN{printf \"%.2f\", $t/$tb}"); sratio=$(awk "BEGIN{printf \"%.2f\", $sm/$smb}")
  echo "| $r | $len | $(awk "BEGIN{printf \"%.3f\", $t}") | $(awk "BEGIN{printf \"%.3f\", $f}") | $(awk "BEGIN{printf \"%.3f\", $tb}") | $ratio | $sratio |"
  json="$json$sep{\"pol_mode\": \"$r\", \"blocks_sampled\": $len, \"total_s\": $t, \"field_s\": $f, \"fixed_total_s\": $tb, \"ratio_to_fixed\": $ratio, \"sampling_s\": $sm, \"fixed_sampling_s\": $smb, \"sampling_ratio_to_fixed\": $sratio}"
  sep=", "
done
echo "$json]}" > "$out/vmc_pol_cost.json"
echo "($sites sites, $walkers walkers, blocks of 64 steps, $blocks after the dipole updates, field backend $backend, one thread,"
echo " each run the median of $repeats by total time; sampling: the run without its set-up, which reads and builds the sites)"
