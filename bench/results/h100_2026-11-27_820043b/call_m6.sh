#!/usr/bin/env bash
# Call M6 (final code, see .devkit/commit; its library code is c87512b's, comments aside): compute-sanitizer memcheck
# (leaks included) and racecheck (the kernel's per-warp shared column table, now 4 warps a block) on the split GPU tests. Run twice: the
# whole filter (racecheck ran past its 200 s), then SKIP_MEMCHECK=1 RACE_F='SplitGpuNuclei.*:SplitGpuEdges.OutsideAndOnCellCentres' RACE_S=170.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_$(cat .devkit/commit); mkdir -p $D
t0=$(date +%s)
pack() { cp .devkit/callM6.sh $D/call_m6.sh; tar czf $OUT/m6.tgz $D; }
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
F='SplitGpuNuclei.*:SplitGpuEdges.*:Tolerances/*'
[ -n "${SKIP_MEMCHECK:-}" ] || timeout 150 "$san" --tool memcheck --leak-check full --error-exitcode 3 $B/test_field_split_gpu --gtest_filter="$F" 2>&1 | grep -E "PASSED|FAILED|ERROR SUMMARY|LEAK SUMMARY|rror:" | head -8 > $D/sanitizers.txt; echo "split memcheck rc=${PIPESTATUS[0]} t=$(( $(date +%s)-t0 ))" >> $D/sanitizers.txt
pack
timeout ${RACE_S:-200} "$san" --tool racecheck --racecheck-report all --error-exitcode 3 $B/test_field_split_gpu --gtest_filter="${RACE_F:-$F}" 2>&1 | grep -E "PASSED|FAILED|RACECHECK SUMMARY|ERROR SUMMARY|rror:|azard" | head -8 >> $D/sanitizers.txt; echo "split racecheck (${RACE_F:-$F}) rc=${PIPESTATUS[0]} t=$(( $(date +%s)-t0 ))" >> $D/sanitizers.txt
cat $D/sanitizers.txt
pack
