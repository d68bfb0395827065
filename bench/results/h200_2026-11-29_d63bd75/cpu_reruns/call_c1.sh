#!/usr/bin/env bash
# Call C1: the CPU rates of field_bench (--cpu-only, one core and all cores, 256 points) three times on a fresh host of
# the H200, library of .devkit/commit (the CPU kernels of 6d5f5b5): how much they vary between hosts and runs.
set -uo pipefail
export QMMM_BENCH_COMMIT=$(cat .devkit/commit)
B=/work/main/build-tests; D=bench/results/h200_2026-11-29_$(cat .devkit/commit)/cpu_reruns; mkdir -p $D
cp .devkit/callC1.sh $D/call_c1.sh
(lscpu; echo; cat /proc/loadavg; nproc) > $D/host.txt 2>&1
grep -E "Model name|^CPU\(s\)|MHz|Flags" $D/host.txt | cut -c1-150
for r in 1 2 3; do
  cat /proc/loadavg >> $D/loadavg.txt
  timeout 100 bash bench/run_bench.sh $D/field_cpu_$r -- $B/field_bench --cpu-only --cells 268782 --cpu-points 256 --json $D/field_cpu_$r.json > /dev/null 2>&1
  echo "run $r rc=$?"; grep -E "^268782 +256" $D/field_cpu_$r.log
done
tar czf $OUT/c1.tgz $D
