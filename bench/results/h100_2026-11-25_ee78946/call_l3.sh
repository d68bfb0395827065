#!/usr/bin/env bash
# Call L3 (final code, see .devkit/commit; its GPU code is d0257e3's, memcheck-clean in L1): every GPU test with QMMM_REQUIRE_GPU=1; the CPU split tests on this host
# (AVX-512); field_split_bench (CPU and GPU rows) for the README; then the CPU rows at
# 268,938 cells with OLD (93a0669's library: the CPU split before this stop's CPU changes).
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callL3.sh $D/call_l3.sh; tar czf $OUT/l3.tgz $D; }
timeout 175 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 200 ctest --test-dir $B -R "Split|WaterDimer|field_split" -E "Gpu|Cuda" --output-on-failure -j 8 > $D/cpu_split_tests.txt 2>&1; echo "ctest rc=$?" >> $D/cpu_split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|ctest rc" $D/cpu_split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 300 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split (double|mixed) +(gpu|cpu 16|cpu 1 ) .*(1024|8192)" $D/field_split_bench.log | head -30
pack
LD_LIBRARY_PATH=/tmp/OLD:$LD_LIBRARY_PATH timeout $(( 590 - ($(date +%s)-t0) )) $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 1024 8192 --min-time 0.2 --no-gpu --json $D/cpu_OLD.json > $D/cpu_OLD.log 2>&1
echo "OLD cpu rc=$?"; grep -E "split double +cpu" $D/cpu_OLD.log
pack
echo "t=$(( $(date +%s)-t0 ))"
