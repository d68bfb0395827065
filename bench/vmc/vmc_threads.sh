#!/usr/bin/env bash
# vmc_threads.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [THREADS...] -- qmmm_vmc's walkers on OpenMP
# threads within one process: the glycine case (fragment 1 in 268,938 cells, double, field_calls 'measured',
# a local energy every 4 sweeps) with each thread count (default "1 2"; e.g. "1 2 4 8 16" on a 16-core node),
# one process, same seed. Prints a Markdown table (sampling time, speed-up over 1 thread, field and
# wavefunction time, energy, bitwise equal to 1 thread) and writes OUT_DIR/vmc_threads.json. BACKEND cpu
# (the field on the same threads) or cuda (one GPU; the threads do the wavefunction). From the repository root.
set -euo pipefail
build=${1:?usage: vmc_threads.sh BUILD_DIR [OUT_DIR] [BACKEND] [WALKERS] [SWEEPS] [THREADS...]}
out=${2:-vmc_threads_out}; backend=${3:-cpu}; walkers=${4:-64}; sweeps=${5:-16}
shift $(( $# < 5 ? $# : 5 ))
threads=${*:-1 2}
source "$(dirname "$0")/glycine_nml.sh"
exe="$build/vmc_driver/qmmm_vmc"
mkdir -p "$out"
get() { grep -o "\"$2\": [^,}]*" "$1" | head -1 | sed 's/.*: //'; }
for t in $threads; do
  glycine_nml "$walkers" 10 2 $((sweeps / 2)) "$backend" double measured 4 "$t" > "$out/t$t.nml"
  "$exe" "$out/t$t.nml" "$out/t$t.json" > "$out/t$t.log"
done
first=${threads%% *}
base=$(get "$out/t$first.json" sampling); e1=$(get "$out/t$first.json" energy)
echo "| threads | sampling (s) | speed-up | field (s) | wavefunction (s) | energy (hartree) | bitwise = $first thread(s) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
json="{\"system\": \"glycine fragment 1 + 268,938 cells\", \"backend\": \"$backend\", \"walkers\": $walkers, \"sweeps\": $sweeps, \"runs\": ["
sep=""
for t in $threads; do
  s=$(get "$out/t$t.json" sampling); f=$(get "$out/t$t.json" field); w=$(get "$out/t$t.json" wavefunction)
  e=$(get "$out/t$t.json" energy)
  same=$([ "$e" = "$e1" ] && [ "$(get "$out/t$t.json" final_position_checksum)" = "$(get "$out/t$first.json" final_position_checksum)" ] && echo true || echo false)
  echo "| $t | $(awk "BEGIN{printf \"%.3f\", $s}") | $(awk "BEGIN{printf \"%.2f\", $base/$s}") | $(awk "BEGIN{printf \"%.3f\", $f}") | $(awk "BEGIN{printf \"%.3f\", $w}") | $e | $same |"
  json="$json$sep{\"threads\": $t, \"sampling_s\": $s, \"field_s\": $f, \"wavefunction_s\": $w, \"speedup\": $(awk "BEGIN{printf \"%.4f\", $base/$s}"), \"energy\": $e, \"bitwise_equal\": $same}"
  sep=", "
done
echo "$json]}" > "$out/vmc_threads.json"
echo "($walkers walkers, $sweeps sweeps, field $backend; sampling = wall time after the setup; n_threads = the count:"
echo " the walkers' threads, and the CPU field's threads between the walkers' parallel loops)"
