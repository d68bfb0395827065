#!/usr/bin/env bash
# Call M5 (experiment on 0df82c3 + a temporary QMMM_SPLIT_VARIANT toggle in launch()): the split kernel's steps in
# flight per warp (U) and resident warps per SM (R, the launch bound): U4 R32 (64 registers, the code), U8 R24 (80),
# U8 R32 (64), U2 R40 (48, spills 36-88 bytes); ab_split (../h100_2026-11-27_sort/ab_split.cpp + ab_split.patch), variants interleaved, best of 15, bits compared.
set -uo pipefail
B=/work/main/build-tests; D=$OUT/m5; mkdir -p $D; C=data/glycine_trimer/fragments23_density.cube.gz
for th in 0.00041 0; do for p in mixed double; do
  timeout 100 $B/ab_split $C $th 15 16 cuda $p >> $D/ab_gpu.txt 2>&1; done; done
cat $D/ab_gpu.txt
