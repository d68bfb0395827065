#!/usr/bin/env bash
# Call P1: the CPU probe (bench/results/h100_2026-11-27_probe/cpu_probe.cpp) on one core, then on two cores at once
# (are vCPUs 0 and 1 one physical core?), and field_bench's CPU rows (1 thread) in the same call.
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_probe; mkdir -p $D
{ lscpu | head -20; nproc; } > $D/p1_cpu.txt 2>&1
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $D/p1_probe_1core.txt 2>&1
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $D/p1_probe_pair_0.txt 2>&1 &
taskset -c 1 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $D/p1_probe_pair_1.txt 2>&1 &
wait
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $D/p1_probe_pair_0_8.txt 2>&1 &
taskset -c 8 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0.00041 > $D/p1_probe_pair_8.txt 2>&1 &
wait
taskset -c 0 $B/cpu_probe data/glycine_trimer/fragments23_density.cube.gz 0 > $D/p1_probe_1core_1M.txt 2>&1
timeout 200 taskset -c 0 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.5 --no-gpu --json /tmp/s.json > $D/p1_split_1core.log 2>&1
timeout 120 $B/field_bench --cpu-only --cells 268782 --cpu-points 256 --json /tmp/f.json > $D/p1_field_cpu.log 2>&1
head -50 $D/*.txt $D/*.log
cp .devkit/callP1.sh $D/call_p1.sh; tar czf $OUT/p1.tgz $D
