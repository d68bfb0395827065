#!/usr/bin/env bash
# Call F2a (library of 00a3341, see .devkit/commit): every GPU test with QMMM_REQUIRE_GPU=1; memcheck on the CUDA
# field tests whose tile kernels changed; field_bench and field_split_bench for the README; ncu summaries (with
# warp-stall sampling) of the final tile kernels at N = 8,192: SINGLE <1,4,32>, MIXED <2,2,32>, DOUBLE <0,4,32>.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_BENCH_COMMIT=$(cat .devkit/commit) QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
pack() { cp .devkit/callF2a.sh $D/call_f2a.sh; tar czf $OUT/f2a.tgz $D; }
timeout 170 ctest --test-dir $B -L gpu --output-on-failure --timeout 160 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 80 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_gpu --gtest_filter='FieldCuda.MixedWithin1e8SmallFieldAndNearCells:FieldCuda.PointOnCellCentre:FieldCuda.BitwiseRepeatableAndIndependentOfOtherPoints' 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "field memcheck rc=${PIPESTATUS[0]}" >> $D/sanitizers.txt
cat $D/sanitizers.txt; echo "t=$(( $(date +%s)-t0 ))"
pack
timeout 80 bash bench/run_bench.sh $D/field -- $B/field_bench --cells 268782 --points 1 1024 8192 --json $D/field.json > /dev/null 2>&1
echo "field rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "limits|cuda_|^268782 +256" $D/field.log | head -22
pack
timeout 170 bash bench/run_bench.sh $D/field_split_bench -- $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 1 1024 8192 --min-time 0.2 --json $D/field_split_bench.json > /dev/null 2>&1
echo "split rc=$? t=$(( $(date +%s)-t0 ))"; grep -E "setup|split (double|mixed) +(gpu|cpu 16) .*8192" $D/field_split_bench.log | head -12
pack
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
prof() {  # tag regex
  left=$(( 585 - ($(date +%s)-t0) )); [ $left -lt 30 ] && return
  timeout $left $ncu --clock-control none --set detailed --import-source no --section SourceCounters --section WarpStateStats --kernel-name-base demangled -k "$2" --launch-skip 2 --launch-count 1 -o $D/ncu_$1 -f $B/field_bench --only-cuda --cells 268782 --points 8192 --min-time 0.05 --handles 0 > $D/ncu_run_$1.txt 2>&1; echo "ncu $1 rc=$?"
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
          "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"):
    if k in d: print(f"    {k} {d[k]}")
PY
  rm -f $D/ncu_$1.ncu-rep
  grep -E "^    Duration|Issue Slots Busy|Achieved Occupancy|Registers Per" $D/ncu_$1.txt | head -4
}
prof single_p4_n8192 "regex:tile_kernel<.int.1, .int.4, .int.32"
prof mixed_p2_n8192 "regex:tile_kernel<.int.2, .int.2, .int.32"
prof double_p4_n8192 "regex:tile_kernel<.int.0, .int.4, .int.32"
pack
echo "t=$(( $(date +%s)-t0 ))"
