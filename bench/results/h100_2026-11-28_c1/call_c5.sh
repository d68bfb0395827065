#!/usr/bin/env bash
# Call C5 (profile of 9c9d705's library, the final code): Nsight Compute's full set on the MIXED split kernels of one
# run of the A/B driver (268,938 cells; 3 calls each of 1,024, 4,096 and 8,192 points; the 8,192-point calls are two
# launches of 4,096), caches not flushed between kernels (as in the application).
set -uo pipefail
B=/work/main/build-tests; D=$OUT/c5; mkdir -p $D
t0=$(date +%s); C=data/glycine_trimer/fragments23_density.cube.gz
timeout 400 ncu --set full --cache-control none --import-source no --kernel-name-base demangled --kernel-name "regex:split_kernel<.int.[0-9]+, .bool.1>" \
  -o $D/split $B/ab $C 0.00041 3 16 cuda mixed X=0 > $D/ncu_run.txt 2>&1; echo "ncu rc=$? t=$(( $(date +%s)-t0 ))"
tail -5 $D/ncu_run.txt
timeout 120 ncu --import $D/split.ncu-rep --page details > $D/details.txt 2>&1
timeout 120 ncu --import $D/split.ncu-rep --page source --csv --print-source sass > $D/sass.csv 2>&1
grep -E "split_kernel|Duration|Issue Slots Busy|Executed Ipc A|Issued Warp|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|L1/TEX Hit|L2 Hit|Memory Throughput|Compute \(SM\)" $D/details.txt | head -80
ls -la $D; xz -9 $D/sass.csv; rm -f $D/split.ncu-rep.tmp
tar czf $OUT/c5.tgz --exclude="*.ncu-rep" -C $OUT c5
