#!/usr/bin/env bash
# Call F (f7473ef): split column trimming by counts (CPU and GPU): every GPU test with QMMM_REQUIRE_GPU=1,
# the CPU split tests on this AVX-512 host, split memcheck, field_split_bench (README); SASS of two kernels.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec QMMM_BENCH_COMMIT=f7473ef95005342b21f43cedad372107d136a3cf
B=/work/main/build-tests; R=bench/results/h100_2026-11-25_f7473ef; mkdir -p $R
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
grep -o -m1 "avx512f" /proc/cpuinfo
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $R/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $R/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 200 ctest --test-dir $B -R "WaterDimer\.|WaterDimerTolerance|SplitSynthetic|SplitOptions|SplitGlycine" --output-on-failure --timeout 180 -j 8 > $R/cpu_split_tests.txt 2>&1; echo "ctest rc=$?" >> $R/cpu_split_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $R/cpu_split_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 230 bash bench/run_bench.sh $R/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $R/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split double|direct single +gpu" $R/field_split_bench.log | head -30
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $R/sanitizers.txt
while read -r tool exe filter; do
  [ $(( $(date +%s)-t0 )) -gt 540 ] && { echo "skipped (time): $tool $exe $filter" >> $R/sanitizers.txt; continue; }
  extra=(); [[ $tool == memcheck ]] && extra=(--leak-check full)
  echo "== $tool $exe ($filter)" >> $R/sanitizers.txt
  timeout 50 "$san" --tool $tool "${extra[@]}" --error-exitcode 3 "$B/$exe" --gtest_filter="$filter" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|LEAK SUMMARY|rror:" | head -8 >> $R/sanitizers.txt
  echo "rc=${PIPESTATUS[0]}" >> $R/sanitizers.txt
done <<'LIST'
memcheck test_field_split_gpu SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*
LIST
cat $R/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
cuobjdump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
"$cuobjdump" -sass $B/libqmmm_accel.so 2>/dev/null | awk '/Function : .*tile_kernelILi1ELi8ELi32E/{p=1} p&&/Function : /&&!/tile_kernelILi1ELi8ELi32E/{p=0} p' > $R/sass_tile_single_p8.txt
"$cuobjdump" -sass $B/libqmmm_accel.so 2>/dev/null | awk '/Function : .*split_kernel/{p=1} p&&/Function : /&&!/split_kernel/{p=0} p' > $R/sass_split_kernel.txt
wc -l $R/sass_*.txt
cp .devkit/callF.sh $R/call.sh
tar czf $OUT/callF.tgz $R
