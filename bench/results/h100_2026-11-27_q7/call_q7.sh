#!/usr/bin/env bash
# Call Q7 (library of 00a3341): the CPU split's scaling with threads on this host -- lscpu; field_split_bench --no-gpu
# at 268,938 cells, 8,192 points, with 8 threads, and with 16 threads pinned (OMP_PROC_BIND=close, OMP_PLACES=cores)
# and unpinned (as the README's table ran).
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q7; mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callQ7.sh $D/call_q7.sh; tar czf $OUT/q7.tgz $D; }
lscpu > $D/lscpu.txt 2>&1; grep -E "^CPU\(s\)|Thread|Core|Socket|Model name|L2|L3|NUMA node" $D/lscpu.txt
run() {  # tag env...
  local tag=$1; shift
  env "$@" timeout 150 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.3 --no-gpu --json $D/split_$tag.json > $D/split_$tag.log 2>&1
  echo "$tag rc=$? t=$(( $(date +%s)-t0 )): $(grep -E '^268938 +8192 +(split|direct) double +cpu' $D/split_$tag.log | awk '{printf "%s %s %s: %s us; ", $3,$6,$7,$8}')" | tee -a $D/scaling.txt
  pack
}
run t8 OMP_NUM_THREADS=8
run t16_bound OMP_NUM_THREADS=16 OMP_PROC_BIND=close OMP_PLACES=cores
run t16 OMP_NUM_THREADS=16
echo "t=$(( $(date +%s)-t0 ))"
