#!/usr/bin/env bash
# Call G1 (library of .devkit/commit + the row layout, uncommitted tree): every GPU test with QMMM_REQUIRE_GPU=1;
# memcheck on test_field_gpu_rows; field_bench on the glycine cube's cells, rows (default) and tiles
# (QMMM_CUDA_ROWS=0) alternated; ncu of both SINGLE kernels at N = 8,192 on those cells; the row kernel's SASS.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_g1; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callG1.sh $D/call_g1.sh; tar czf $OUT/g1.tgz $D; }
CUBE=data/glycine_trimer/fragments23_density.cube.gz
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; grep -E "lattice M" $B/Testing/Temporary/LastTest.log | head -2; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 100 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu_rows 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "rows memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
for rep in 1 2; do
  for v in tiles rows; do
    if [ $v = tiles ]; then export QMMM_CUDA_ROWS=0; else unset QMMM_CUDA_ROWS; fi
    timeout 60 $B/field_bench --only-cuda --cube $CUBE --points 1024 8192 --handles 0 --min-time 0.3 --json $D/cube_${v}_$rep.json > $D/cube_${v}_$rep.log 2>&1
    echo "$v $rep rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "cuda_single " $D/cube_${v}_$rep.log
  done
done
unset QMMM_CUDA_ROWS
timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1024 8192 --handles 0 --min-time 0.3 --json $D/random.json > $D/random.log 2>&1
echo "random rc=$?"; grep -E "cuda_single " $D/random.log
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
prof() {  # tag regex rows-env
  left=$(( 585 - ($(date +%s)-t0) )); [ $left -lt 30 ] && return
  QMMM_CUDA_ROWS=$3 timeout $left $ncu --clock-control none --set detailed --import-source no --section WarpStateStats --kernel-name-base demangled -k "$2" --launch-skip 2 --launch-count 1 -o $D/ncu_$1 -f $B/field_bench --only-cuda --cube $CUBE --points 8192 --min-time 0.05 --handles 0 > $D/ncu_run_$1.txt 2>&1; echo "ncu $1 rc=$?"
  $ncu --import $D/ncu_$1.ncu-rep --page details > $D/ncu_$1.txt 2>&1
  $ncu --import $D/ncu_$1.ncu-rep --page raw --csv > /tmp/raw_$1.csv 2>&1
  python3 - /tmp/raw_$1.csv >> $D/ncu_$1.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
d = dict(zip(rows[0], rows[2]))
items = []
for k, v in d.items():
    if k.startswith("smsp__pcsamp_warps_issue_stalled_") and not k.endswith("_not_issued"):
        try: items.append((float(v.replace(',', '')), k[len("smsp__pcsamp_warps_issue_stalled_"):]))
        except ValueError: pass
tot = sum(v for v, _ in items) or 1
print("\n    Warp stall sampling (all samples), share of samples:")
for v, k in sorted(items, reverse=True)[:10]: print(f"      {k:28s} {100 * v / tot:5.1f} %")
for k in ("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
          "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
          "smsp__inst_executed.sum", "sm__cycles_elapsed.avg"):
    if k in d: print(f"    {k} {d[k]}")
PY
  rm -f $D/ncu_$1.ncu-rep
  grep -E "^    Duration|Issue Slots Busy|Achieved Occupancy|Registers Per|pipe_xu|inst_executed.sum" $D/ncu_$1.txt | head -6
}
prof rows_p4_n8192 "regex:row_tile_kernel" 1
prof tiles_p4_n8192 "regex:tile_kernel<.int.1, .int.4, .int.32" 0
pack
cob=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$cob -sass $B/libqmmm_accel.so.0.1.0 > /tmp/all.sass 2>&1
awk '/Function : /{f=0} /Function : .*row_tile_kernelILi4ELi32/{f=1} f' /tmp/all.sass > $D/sass_row_4_32.txt
awk '/Function : /{f=0} /Function : .*tile_kernelILi1ELi4ELi32/{f=1} f' /tmp/all.sass > $D/sass_tile_1_4_32.txt
wc -l $D/sass_*.txt
pack
echo "t=$(( $(date +%s)-t0 ))"
