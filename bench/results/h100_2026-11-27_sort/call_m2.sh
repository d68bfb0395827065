#!/usr/bin/env bash
# Call M2: ab_split (ab_split.cpp) with the GPU variants: warps per block 1/2/4/8 unsorted, points sorted by the
# driver before the call (the kernel's gain from the order alone), sorted by the library (launch_point_order);
# the CPU order with 15-bit keys computed in parallel, at 16 threads and 1.
set -uo pipefail
B=/work/main/build-tests; D=$OUT/m2; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
for th in 0.00041 0; do for p in mixed double; do
  timeout 100 $B/ab_split $C $th 15 16 cuda $p >> $D/ab_gpu.txt 2>&1; done; done
cat $D/ab_gpu.txt; echo "t=$(( $(date +%s)-t0 ))"
timeout 150 $B/ab_split $C 0.00041 5 16 cpu double > $D/ab_cpu16.txt 2>&1; cat $D/ab_cpu16.txt
timeout 120 $B/ab_split $C 0.00041 3 1 cpu double > $D/ab_cpu1.txt 2>&1; cat $D/ab_cpu1.txt
echo "t=$(( $(date +%s)-t0 ))"
