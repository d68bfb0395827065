#!/usr/bin/env bash
# Call P1: throughput calls cut into pieces on two streams (QMMM_CUDA_PIECES=1 one launch, 2, 4), alternated, every GPU
# test with QMMM_REQUIRE_GPU=1; ncu of the final SINGLE and DOUBLE tile kernels and the latency kernel; nsys of the
# calls if present.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit)
B=/work/main/build-tests; D=bench/results/h200_2026-11-29_p1; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callP1.sh $D/call_p1.sh; tar czf $OUT/p1.tgz $D; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $D/gpu.txt 2>&1
timeout 150 ctest --test-dir $B -L gpu --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 90 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Bitwise*:*Async*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
timeout 60 "$san" --tool racecheck --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Async*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|rror:" | head -6 >> $D/sanitizers.txt; echo "racecheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for k in 1 2 4; do
    QMMM_CUDA_PIECES=$k timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --handles 0 --min-time 0.3 --json $D/ab_k${k}_$rep.json > $D/ab_k${k}_$rep.log 2>&1
    echo "k=$k rep=$rep rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_(single|mixed|double) " $D/ab_k${k}_$rep.log
  done
done
pack
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats --section WarpStateStats --section SchedulerStats --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum)
run_ncu() {  # name kernel-regex points [env]
  local name=$1 k=$2 n=$3; shift 3
  env "$@" timeout 60 "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:$k" -c 1 $B/field_bench --only-cuda --cells 268782 --points $n --handles 0 --min-time 0.01 --json /tmp/x.json > $D/ncu_$name.txt 2>&1
  echo "== $name rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "Duration|Issue Slots Busy|Registers Per|Achieved Occupancy|pipe_xu|pipe_fma |pipe_fp64|inst_executed.sum" $D/ncu_$name.txt | head -9
}
run_ncu single_tiles_n8192 'tile_kernel<.int.1, .int.4,' 8192
run_ncu single_tiles_n1024 'tile_kernel<.int.1, .int.4,' 1024 QMMM_CUDA_PIECES=1
run_ncu double_tiles_n8192 'tile_kernel<.int.0, .int.4,' 8192
run_ncu single_latency_n1 'latency_kernel<.int.1' 1
run_ncu single_segsum_n8192 'segment_sum_kernel<.int.1' 8192 QMMM_CUDA_PIECES=1
pack
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-none}"
if [ -n "$nsys" ]; then
  for k in 1 2; do
    QMMM_CUDA_PIECES=$k timeout 60 "$nsys" profile -t cuda -o /tmp/ns_k$k --force-overwrite true $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --handles 0 --min-time 0.05 --json /tmp/x.json > /dev/null 2>&1
    timeout 60 "$nsys" stats -r cuda_gpu_trace -f csv -o $D/nsys_k$k /tmp/ns_k$k.nsys-rep > /dev/null 2>&1
    xz -9 $D/nsys_k${k}*.csv 2>/dev/null
    echo "nsys k=$k t=$(( $(date +%s)-t0 ))"
  done
fi
pack
