#!/usr/bin/env bash
# Call M3 (final code, see .devkit/commit): every GPU test with QMMM_REQUIRE_GPU=1; the CPU split tests on this host
# (AVX-512: the grid rows' shorter series); field_split_bench (CPU and GPU rows) for the README; then the CPU setup at
# 1,099,098 cells A/B against OLD (7a38adc's library, CPU-only build: the grid rows' series cut at 1e-16), OLD, NEW,
# OLD, NEW (--no-gpu, 8,192 points), to show the setup change beside the host's noise.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callM3.sh $D/call_m3.sh 2>/dev/null; tar czf $OUT/m3.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 150 ctest --test-dir $B -R "Split|WaterDimer|field_split" -E "Gpu|Cuda" --output-on-failure -j 8 > $D/cpu_split_tests.txt 2>&1; echo "ctest rc=$?" >> $D/cpu_split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|ctest rc" $D/cpu_split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 200 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split (double|mixed) +(gpu|cpu 16|cpu 1 ) .*(1024|8192)" $D/field_split_bench.log | head -30
pack
for v in OLD NEW OLD NEW; do
  left=$(( 585 - ($(date +%s)-t0) )); [ $left -lt 80 ] && break
  if [ $v = OLD ]; then L=/tmp/OLD:${LD_LIBRARY_PATH:-}; else L=${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout $left $B/field_split_bench --data data/glycine_trimer --thresholds 0 --tolerance 1e-7 --points 8192 --min-time 0.1 --no-gpu --json /tmp/ab_$v.json > /tmp/ab.log 2>&1
  echo "$v rc=$? $(grep -E 'setup cpu' /tmp/ab.log)" | tee -a $D/setup_ab.txt
  pack
done
echo "t=$(( $(date +%s)-t0 ))"
