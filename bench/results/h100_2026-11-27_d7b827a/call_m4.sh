#!/usr/bin/env bash
# Call M4 (see .devkit/commit): field_split_bench again (a second sample of the final code on another host), then the
# CPU rows at 268,938 cells A/B against OLD0 (9343099's library, CPU-only build: before this session's point order
# and grid-series changes), OLD0, NEW, OLD0, NEW, to tell the host's variance from the code's.
set -uo pipefail
export QMMM_BENCH_COMMIT=$(cat .devkit/commit)
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); mkdir -p $D
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD0.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callM4.sh $D/call_m4.sh; tar czf $OUT/m4.tgz $D; }
timeout 200 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup cpu|split (double|mixed) +(gpu|cpu 16|cpu 1 ) .*(1024|8192)" $D/field_split_bench.log | head -30
pack
for v in OLD0 NEW OLD0 NEW; do
  left=$(( 585 - ($(date +%s)-t0) )); [ $left -lt 60 ] && break
  if [ $v = OLD0 ]; then L=/tmp/OLD:${LD_LIBRARY_PATH:-}; else L=${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout $left $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 1024 8192 --min-time 0.2 --no-gpu --json /tmp/ab_$v.json > $D/cpu_ab_$v.log 2>&1
  echo "== $v rc=$?" | tee -a $D/cpu_ab.txt; grep -E "setup cpu|(split|direct) double +cpu" $D/cpu_ab_$v.log | tee -a $D/cpu_ab.txt
  pack
done
echo "t=$(( $(date +%s)-t0 ))"
