#!/usr/bin/env bash
# Call P3: the CPU probe with the range-finding comparison (scalar, the library's two passes, vectorised bins), one core,
# at 268,938 and 1,099,098 cells.
set -uo pipefail
B=/work/main/build-tests; P=bench/results/h100_2026-11-27_probe
xz -dc .devkit/vars/cpu_probe.xz > $B/cpu_probe && chmod +x $B/cpu_probe
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $P/p3_probe_1core.txt 2>&1
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0 > $P/p3_probe_1core_1M.txt 2>&1
cat $P/p3_*.txt; cp .devkit/callP3.sh $P/call_p3.sh; tar czf $OUT/p3.tgz $P
