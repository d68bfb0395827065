#!/usr/bin/env bash
# vmc_forces_cost.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [ENERGY_EVERY] -- the cost of qmmm_vmc's key
# forces on the glycine case (fragment 1 in 268,938 cells, double precision, 'measured' field calls): the same run
# without forces, with them at every local energy, and with forces_every = 4. Same seed: the same configurations
# and bitwise the same energies. Prints a Markdown table (total, sampling and field time, their ratios to the run
# without forces: total includes the set-up, which a short run's ratio carries; sampling is the blocks alone)
# and writes OUT_DIR/vmc_forces_cost.json. BACKEND cpu (default; one core) or cuda. SWEEPS / 2 / ENERGY_EVERY (local
# energies per block) must be a multiple of 4. Each run is the median of REPEATS (default 3; bench/common/median_run.sh).
# From the repository root.
set -euo pipefail
build=${1:?usage: vmc_forces_cost.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [ENERGY_EVERY]}
out=${2:-vmc_forces_cost_out}; backend=${3:-cpu}; walkers=${4:-32}; sweeps=${5:-32}; every=${6:-4}
source "$(dirname "$0")/glycine_nml.sh"
source "$(dirname "$0")/../common/median_run.sh"
repeats=${REPEATS:-3}
exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'; }
runs="off on every4"
for r in $runs; do
  keys=""
  [[ $r == on ]] && keys="  forces = .true."
  [[ $r == every4 ]] && keys="  forces = .true., forces_every = 4"
  glycine_nml "$walkers" 10 2 $((sweeps / 2)) "$backend" double measured "$every" 1 | sed "s/^\/\$/$keys\n\//" \
    > "$out/$r.nml"
  median_run "$out/$r" "$repeats" "$exe" "$out/$r.nml"
done
base_t=$(get "$out/off.json" total); base_s=$(get "$out/off.json" sampling); base_e=$(get "$out/off.json" energy)
echo "| forces | total (s) | sampling (s) | field (s) | total / without | sampling / without | energy (hartree) | same energy as without |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
json="{\"system\": \"glycine fragment 1 + 268,938 cells\", \"backend\": \"$backend\", \"repeats\": $repeats, \"walkers\": $walkers, \"sweeps\": $sweeps, \"energy_every\": $every, \"runs\": ["
sep=""
for r in $runs; do
  t=$(get "$out/$r.json" total); sm=$(get "$out/$r.json" sampling); f=$(get "$out/$r.json" field)
  e=$(get "$out/$r.json" energy)
  same=$([ "$e" = "$base_e" ] && echo true || echo false)
  ratio=$(awk "BEGIN{printf \"%.2f\", $t/$base_t}"); sratio=$(awk "BEGIN{printf \"%.2f\", $sm/$base_s}")
  echo "| $r | $(awk "BEGIN{printf \"%.3f\", $t}") | $(awk "BEGIN{printf \"%.3f\", $sm}") | $(awk "BEGIN{printf \"%.3f\", $f}") | $ratio | $sratio | $e | $same |"
  json="$json$sep{\"forces\": \"$r\", \"total_s\": $t, \"sampling_s\": $sm, \"field_s\": $f, \"ratio_to_without\": $ratio, \"sampling_ratio_to_without\": $sratio, \"energy\": $e, \"same_energy_as_without\": $same}"
  sep=", "
done
echo "$json]}" > "$out/vmc_forces_cost.json"
echo "($walkers walkers, $sweeps accumulation sweeps, a local energy every $every sweeps, field backend $backend, one thread,"
echo " each run the median of $repeats by total time;"
echo " total includes setup (reading the cube); field: the driver's timing of its field calls and the forces' accumulator)"
