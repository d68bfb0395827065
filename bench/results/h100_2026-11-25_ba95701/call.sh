#!/usr/bin/env bash
# Call A (ba95701): GPU tests, memcheck on the split GPU tests, field_split_bench GPU rows (both environments), and
# Nsight Compute on the split kernel's N = 8192 evaluation launch (M = 268,938, tolerance 1e-7) with SASS-level counters.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=ba95701f6bfb997b94e39e7312f1db54c5681615 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_ba95701; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callA.sh $D/call.sh; tar czf $OUT/callA.tgz $D; }
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 120 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt
echo "rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt; cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 120 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|gpu " $D/field_split_bench.log | head -30
pack
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
cmd=($B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.01)
timeout 100 "$ncu" --section LaunchStats -k regex:split_kernel -c 60 "${cmd[@]}" > $D/ncu_split_list.txt 2>&1
skip=$(grep "Grid Size" $D/ncu_split_list.txt | awk '{print NR-1, $NF}' | awk '$2=="2,048"{print $1; exit}')
echo "launches: $(grep -c 'Grid Size' $D/ncu_split_list.txt), first N=8192 launch: $skip t=$(( $(date +%s)-t0 ))"
timeout 150 "$ncu" --set full --import-source yes -k regex:split_kernel --launch-skip ${skip:-0} -c 1 -o $D/ncu_split "${cmd[@]}" > $D/ncu_split_run.txt 2>&1
"$ncu" --import $D/ncu_split.ncu-rep --page details > $D/ncu_split_eval_n8192.txt 2>&1
"$ncu" --import $D/ncu_split.ncu-rep --page source --csv --print-source sass > $D/ncu_split_sass.csv 2>&1
rm -f $D/ncu_split.ncu-rep
echo "ncu t=$(( $(date +%s)-t0 ))"
grep -E "Duration|Registers Per|Achieved Occ|Theoretical Occ|Eligible Warps|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Executed Instructions  " $D/ncu_split_eval_n8192.txt | head -20
pack
