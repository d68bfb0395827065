#!/usr/bin/env bash
# Call R2 (library of .devkit/commit: MIXED tiles in one block a chunk quarter, mixed_quarter_kernel): every GPU test with QMMM_REQUIRE_GPU=1,
# memcheck on the MIXED rows lattice test and the dominant-cells test; the glycine cube's cells, rows (default) against
# tiles (QMMM_CUDA_ROWS=0), alternated; the README's field, split, precision and node tables on this code (as G15,
# bench/results/h100_2026-11-28_e406bf3/call_g15.sh); the values of this library against the previous one's (f52861b's
# kernels, from call P1's bundle), bitwise; ncu of the final throughput, segment-sum and latency kernels with the time left.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h200_2026-11-29_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callR2.sh $D/call_r2.sh; tar czf $OUT/r2.tgz $D; }
CUBE=data/glycine_trimer/fragments23_density.cube.gz
timeout 120 ctest --test-dir $B -L gpu --output-on-failure --timeout 110 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; grep -hE "lattice M|water 2's cube|dominant cells|max normwise error over|mean error vs" $B/Testing/Temporary/LastTest.log | head -24 | tee $D/gpu_tests_accuracy.txt; echo "t=$(( $(date +%s)-t0 ))"
# bitwise against the previous library (b78fb04 = f52861b's kernels with QMMM_CUDA_PIECES=1)
QMMM_CUDA_PIECES=1 LD_LIBRARY_PATH=$B/oldlib:${LD_LIBRARY_PATH:-} timeout 90 $B/bitcheck_scratch > $D/bits_before.txt 2>&1
timeout 90 $B/bitcheck_scratch > $D/bits_after.txt 2>&1
if cmp -s $D/bits_before.txt $D/bits_after.txt; then echo "bits: identical ($(wc -l < $D/bits_after.txt) hashes)"; else echo "bits: DIFFER"; diff $D/bits_before.txt $D/bits_after.txt | head; fi | tee $D/bits.txt
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 60 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu --gtest_filter='*Dominant*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "mixed memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
timeout 60 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows --gtest_filter='*Lattice*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 >> $D/sanitizers.txt; echo "rows memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for v in tiles rows; do
    if [ $v = tiles ]; then export QMMM_CUDA_ROWS=0; else unset QMMM_CUDA_ROWS; fi
    name=cube_$v; [ $rep = 2 ] && name=cube_${v}_2
    timeout 40 bash bench/run_bench.sh $D/$name -- $B/field_bench --only-cuda --cube $CUBE --points 1024 8192 --handles 0 --min-time 0.3 --json $D/$name.json > /dev/null 2>&1
    echo "$name rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_(single|mixed|double) " $D/$name.log
  done
done
unset QMMM_CUDA_ROWS
pack
timeout 80 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_|^268782 +256" $D/field.log | head -22
pack
timeout 200 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split (double|mixed) +(gpu|cpu 16) .*(8192)" $D/field_split_bench.log | head -14
pack
timeout 40 bash bench/run_bench.sh $D/precision -- bash bench/precision_study.sh $B $D/precision > /dev/null 2>&1
echo "precision rc=$? t=$(( $(date +%s)-t0 ))"
pack
PRECISION=double ONLY="cpu_16 gpu_1 hyb_1x16 hyb_2x8 hyb_4x4 gpu_16_mps hyb_2x8_mps" WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout 60 bash bench/run_bench.sh $D/node_double -- bash bench/node_throughput.sh $B $D/node_double > /dev/null 2>&1
echo "node double rc=$? t=$(( $(date +%s)-t0 ))"
pack
left=$(( 530 - ($(date +%s)-t0) ))
WALKERS=1024 SWEEPS=48 RUN_TIMEOUT=200 timeout $left bash bench/run_bench.sh $D/node_single -- bash bench/node_throughput.sh $B $D/node_single > /dev/null 2>&1
echo "node single rc=$? t=$(( $(date +%s)-t0 ))"
pack
left=$(( 585 - ($(date +%s)-t0) ))
if [ $left -gt 40 ]; then
  ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section InstructionStats --section WarpStateStats --section SchedulerStats --metrics sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum)
  run_ncu() {  # name kernel-regex points
    left=$(( 585 - ($(date +%s)-t0) )); [ $left -gt 8 ] || return
    timeout $left "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:$2" -c 1 $B/field_bench --only-cuda --cells 268782 --points $3 --handles 0 --min-time 0.01 --json /tmp/x.json > $D/ncu_$1.txt 2>&1
    echo "== $1 t=$(( $(date +%s)-t0 ))"; grep -E "Duration|Issue Slots Busy|Achieved Occupancy|pipe_xu|pipe_fp64|inst_executed.sum" $D/ncu_$1.txt | head -6
  }
  run_ncu mixed_quarter_n8192 'mixed_quarter_kernel<.int.2, .int.32>' 8192
  run_ncu mixed_quarter_n1024 'mixed_quarter_kernel<.int.2, .int.32>' 1024
  run_ncu segsum_single_n8192 'segment_sum_kernel<.int.1' 8192
  run_ncu single_tiles_n8192 'tile_kernel<.int.1, .int.4,' 8192
  run_ncu single_tiles_n1024 'tile_kernel<.int.1, .int.4,' 1024
  run_ncu double_tiles_n8192 'tile_kernel<.int.0, .int.4,' 8192
  run_ncu single_latency_n1 'latency_kernel<.int.1' 1
fi
pack
