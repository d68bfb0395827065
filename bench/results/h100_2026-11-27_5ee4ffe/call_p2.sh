#!/usr/bin/env bash
# Call P2 (see .devkit/commit): the fixed CPU probe; the split tests (CPU on this AVX-512 host, GPU with
# QMMM_REQUIRE_GPU=1); the CPU split at 268,938 cells A/B against OLD (9fef3f0's library: tasks of 8 cells), OLD, NEW,
# OLD, NEW; then field_split_bench and field_bench (this commit, CPU and GPU rows) for the README.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); P=bench/results/h100_2026-11-27_probe; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callP2.sh $D/call_p2.sh 2>/dev/null; tar czf $OUT/p2.tgz $D $P; }
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $P/p2_probe_1core.txt 2>&1; cat $P/p2_probe_1core.txt
timeout 170 ctest --test-dir $B -R "Split|WaterDimer|field_split" --output-on-failure --timeout 160 -j 8 > $D/split_tests.txt 2>&1; echo "ctest rc=$?" >> $D/split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for v in OLD NEW OLD NEW; do
  left=$(( 330 - ($(date +%s)-t0) )); [ $left -lt 50 ] && break
  if [ $v = OLD ]; then L=/tmp/OLD:${LD_LIBRARY_PATH:-}; else L=${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout $left $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 1024 8192 --min-time 0.2 --no-gpu --json /tmp/ab_$v.json > $D/cpu_ab_$v.log 2>&1
  echo "== $v rc=$?" | tee -a $D/cpu_ab.txt; grep -E "(split|direct) double +cpu" $D/cpu_ab_$v.log | tee -a $D/cpu_ab.txt
  pack
done
echo "t=$(( $(date +%s)-t0 ))"
timeout 150 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "split (double|mixed) +(gpu|cpu 16) .*8192" $D/field_split_bench.log | head
pack
timeout 60 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "single|mixed|double" $D/field.log | head -30
pack
