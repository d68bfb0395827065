#!/usr/bin/env bash
# vmc_field_modes.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [ENERGY_EVERY] -- field time of qmmm_vmc's
# field modes on the glycine case (fragment 1 in 268,938 cells, double precision): 'batched' (the moved
# electron of every walker at every step, the baseline) and 'per_walker' (one call per walker and step;
# CPU only: on the GPU it is seed 004's slow structure) against 'measured' (all electrons of all walkers in
# one call per measurement, every ENERGY_EVERY sweeps; default 4). Same seed: the same configurations, and on
# the CPU field bitwise the same energies. Prints a Markdown table (field time per sweep, ratio to batched,
# energy) and writes OUT_DIR/vmc_field_modes.json. BACKEND cpu (default; one core) or cuda. From the repository root.
set -euo pipefail
build=${1:?usage: vmc_field_modes.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [ENERGY_EVERY]}
out=${2:-vmc_field_modes_out}; backend=${3:-cpu}; walkers=${4:-32}; sweeps=${5:-16}; every=${6:-4}
source "$(dirname "$0")/glycine_nml.sh"
exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
modes="batched measured"
[[ $backend == cpu ]] && modes="batched per_walker measured"
get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'; }
for m in $modes; do
  glycine_nml "$walkers" 10 2 $((sweeps / 2)) "$backend" double "$m" "$every" 1 > "$out/$m.nml"
  OMP_NUM_THREADS=1 "$exe" "$out/$m.nml" "$out/$m.json" > "$out/$m.log"
done
base_f=$(get "$out/batched.json" field); base_e=$(get "$out/batched.json" energy)
echo "| field_calls | field time (s) | per sweep (ms) | batched / this | energy (hartree) | same energy as batched |"
echo "| --- | --- | --- | --- | --- | --- |"
json="{\"system\": \"glycine fragment 1 + 268,938 cells\", \"backend\": \"$backend\", \"walkers\": $walkers, \"sweeps\": $sweeps, \"energy_every\": $every, \"runs\": ["
sep=""
for m in $modes; do
  f=$(get "$out/$m.json" field); e=$(get "$out/$m.json" energy)
  same=$([ "$e" = "$base_e" ] && echo true || echo false)
  ratio=$(awk "BEGIN{printf \"%.2f\", $base_f/$f}")
  echo "| $m | $(awk "BEGIN{printf \"%.3f\", $f}") | $(awk "BEGIN{printf \"%.3f\", 1000*$f/$sweeps}") | $ratio | $e | $same |"
  json="$json$sep{\"field_calls\": \"$m\", \"field_s\": $f, \"field_ms_per_sweep\": $(awk "BEGIN{printf \"%.6f\", 1000*$f/$sweeps}"), \"ratio_to_batched\": $ratio, \"energy\": $e, \"same_energy_as_batched\": $same}"
  sep=", "
done
echo "$json]}" > "$out/vmc_field_modes.json"
echo "($walkers walkers, $sweeps accumulation sweeps, a local energy every $every sweeps, field backend $backend, one thread;"
echo " field time: the driver's own timing of its field calls, exposed time for asynchronous CUDA calls)"
