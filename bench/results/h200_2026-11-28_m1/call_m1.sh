#!/usr/bin/env bash
# Call M1 (d9eac00, MIXED rows): the CUDA field tests (rows tests now with MIXED), memcheck on the lattice rows test;
# the glycine cube's cells with MIXED rows (default) against tiles (QMMM_CUDA_ROWS=0) and tile shapes, alternated;
# ncu of the MIXED row kernel and the MIXED tile kernel on the same cells at N = 8,192.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h200_2026-11-28_m1; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callM1.sh $D/call_m1.sh; tar czf $OUT/m1.tgz $D; }
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $D/gpu.txt; cat $D/gpu.txt
CUBE=data/glycine_trimer/fragments23_density.cube.gz
timeout 150 ctest --test-dir $B -R "FieldCuda|vmc_gpu" --output-on-failure --timeout 140 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; grep -E "lattice M|water 2's cube|max normwise error over|mean error vs CPU" $B/Testing/Temporary/LastTest.log | head -12; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows --gtest_filter='*Lattice*' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "rows memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for v in tiles rows r1032 r2064 r4032; do
    unset QMMM_CUDA_ROWS QMMM_CUDA_TILE
    case $v in tiles) export QMMM_CUDA_ROWS=0;; r1032) export QMMM_CUDA_TILE=1032;; r2064) export QMMM_CUDA_TILE=2064;; r4032) export QMMM_CUDA_TILE=4032;; esac
    timeout 40 $B/field_bench --only-cuda --cube $CUBE --points 1024 8192 --handles 0 --min-time 0.3 > $D/ab_${v}_$rep.log 2>&1
    echo "$v/$rep: $(grep -E 'cuda_(single|double|mixed) ' $D/ab_${v}_$rep.log | awk '$2>1{printf "%s/%s %s (%s us); ", $3,$2,$6,$5}')" | tee -a $D/ab.txt
  done
done
unset QMMM_CUDA_ROWS QMMM_CUDA_TILE
echo "t=$(( $(date +%s)-t0 ))"
pack
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats --section SchedulerStats)
timeout 90 "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:mixed_row_kernel" -c 1 $B/field_bench --only-cuda --cube $CUBE --points 8192 --handles 0 --min-time 0.01 > $D/ncu_mixed_rows_n8192.txt 2>&1
echo "ncu rows rc=$? t=$(( $(date +%s)-t0 ))"
QMMM_CUDA_ROWS=0 timeout 90 "$ncu" "${sections[@]}" --kernel-name-base demangled -k "regex:tile_kernel<2," -c 1 $B/field_bench --only-cuda --cube $CUBE --points 8192 --handles 0 --min-time 0.01 > $D/ncu_mixed_tiles_n8192.txt 2>&1
echo "ncu tiles rc=$? t=$(( $(date +%s)-t0 ))"
for f in $D/ncu_mixed_*.txt; do echo "== $f"; grep -E "Duration|Executed Ipc A|Issue Slots Busy|Registers Per|Achieved Occupancy|Theoretical Occ|Executed Instructions  |Block Limit Shared|Block Limit Reg" $f | head -12; done
pack
