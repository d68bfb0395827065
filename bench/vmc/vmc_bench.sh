#!/usr/bin/env bash
# vmc_bench.sh BUILD_DIR [OUT_DIR] [WALKERS] [SWEEPS] -- seed 004's Table 4 for qmmm_vmc: glycine fragment 1
# in the field of fragments 2+3 (268,938 cells), fixed seed and steps, run as CPU double on one core and
# CUDA single/double/mixed (batched field calls, asynchronous on the GPU). Prints a Markdown table
# (wall time, speed-up over CPU double, energy, deviation from CPU double, field share of the time) and
# writes OUT_DIR/vmc_bench.json. Same seed => same configurations, so deviations are exact differences.
# Run from the repository root.
set -euo pipefail
build=${1:?usage: vmc_bench.sh BUILD_DIR [OUT_DIR] [WALKERS] [SWEEPS]}
out=${2:-vmc_bench_out}; walkers=${3:-128}; sweeps=${4:-20}
source "$(dirname "$0")/glycine_nml.sh"
exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
runs=${VMC_BENCH_RUNS:-"cpu_double cuda_single cuda_double cuda_mixed"}
for r in $runs; do
  be=${r%_*}; pr=${r#*_}
  glycine_nml "$walkers" 10 2 $((sweeps / 2)) "$be" "$pr" > "$out/$r.nml"
  "$exe" "$out/$r.nml" "$out/$r.json" > "$out/$r.log"
done
get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'; }
awk_num() { awk "BEGIN{printf \"$1\", $2}"; }
base_t=$(get "$out/cpu_double.json" total); base_e=$(get "$out/cpu_double.json" energy)
base_s=$(awk_num %.6f "$base_t-$(get "$out/cpu_double.json" setup)")
echo "| run | wall (s) | speed-up | sampling (s) | speed-up | field share | energy (hartree) | deviation from CPU double |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
json="{\"system\": \"glycine fragment 1 + 268,938 cells\", \"walkers\": $walkers, \"sweeps\": $sweeps, \"runs\": ["
sep=""
for r in $runs; do
  t=$(get "$out/$r.json" total); f=$(get "$out/$r.json" field); e=$(get "$out/$r.json" energy)
  smp=$(awk_num %.6f "$t-$(get "$out/$r.json" setup)")
  same=$( [ "$(get "$out/$r.json" final_position_checksum)" = "$(get "$out/cpu_double.json" final_position_checksum)" ] && echo true || echo false)
  echo "| $r | $(awk_num %.3f "$t") | $(awk_num %.1f "$base_t/$t") | $(awk_num %.3f "$smp") | $(awk_num %.1f "$base_s/$smp") | $(awk_num %.2f "$f/$smp") | $(awk_num %.10f "$e") | $(awk_num %.3e "$e-($base_e)") |"
  json="$json$sep{\"run\": \"$r\", \"wall_s\": $t, \"field_s\": $f, \"energy\": $e, \"sampling_s\": $smp, \"speedup\": $(awk_num %.4f "$base_t/$t"), \"speedup_sampling\": $(awk_num %.4f "$base_s/$smp"), \"deviation\": $(awk_num %.6e "$e-($base_e)"), \"same_configurations\": $same}"
  sep=", "
done
echo "$json]}" > "$out/vmc_bench.json"
echo "(wall: the driver's time after reading the Molden file, including reading the cube and building the field;"
echo " sampling: wall minus that setup; field share: exposed field time / sampling time; same seed and steps)"
