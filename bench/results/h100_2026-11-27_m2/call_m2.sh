#!/usr/bin/env bash
# Call M2 (library of .devkit/commit: MIXED on the row layout with hi + lo cell offsets, MIXED heavy cells): every GPU test with QMMM_REQUIRE_GPU=1;
# memcheck on test_field_gpu_rows; field_bench on the glycine cube's cells, rows (default) and tiles (QMMM_CUDA_ROWS=0)
# alternated, and rows with 4 points a thread (QMMM_CUDA_TILE=4032); ncu of the MIXED row kernel at N = 8,192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_m2; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callM2.sh $D/call_m2.sh; tar czf $OUT/m2.tgz $D; }
CUBE=data/glycine_trimer/fragments23_density.cube.gz
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; grep -E "lattice M|mean error vs|max normwise error over" $B/Testing/Temporary/LastTest.log | head -8; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "rows memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for v in tiles rows rows4; do
    unset QMMM_CUDA_ROWS QMMM_CUDA_TILE
    [ $v = tiles ] && export QMMM_CUDA_ROWS=0
    [ $v = rows4 ] && export QMMM_CUDA_TILE=4032
    timeout 60 $B/field_bench --only-cuda --cube $CUBE --points 1024 8192 --handles 0 --min-time 0.3 --json $D/cube_${v}_$rep.json > $D/cube_${v}_$rep.log 2>&1
    echo "$v $rep rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_(single|mixed|double) " $D/cube_${v}_$rep.log
  done
done
unset QMMM_CUDA_ROWS QMMM_CUDA_TILE
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
timeout 90 $ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --metrics sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_math_pipe_throttle --kernel-name-base demangled -k "regex:row_tile_kernel<.int.2" --launch-skip 2 --launch-count 1 $B/field_bench --only-cuda --cube $CUBE --points 8192 --min-time 0.05 --handles 0 > $D/ncu_rows_mixed_n8192.txt 2>&1
echo "ncu rc=$?"; grep -E "Duration|Issue Slots Busy|Achieved Occupancy|Registers Per|pipe_xu|pipe_fp64|inst_executed.sum|Waiting|Block Limit" $D/ncu_rows_mixed_n8192.txt | head -14
pack
echo "t=$(( $(date +%s)-t0 ))"
