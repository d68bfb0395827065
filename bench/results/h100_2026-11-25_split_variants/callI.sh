#!/usr/bin/env bash
# Call I: V6 (this build: V4 + 2 warps a block at <= 48 registers, 40 warps an SM; DOUBLE direct term with the
# accumulate fused) against V4 and V1: ncu kernel durations (same locked clocks), split bench alternated, the
# direct field's double row; field + split GPU tests on V6.
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/i; mkdir -p $D
t0=$(date +%s)
for v in V1 V4; do mkdir -p /tmp/$v; xz -dc .devkit/vars/lib$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
lib() { if [ $1 = V6 ]; then echo ${LD_LIBRARY_PATH:-}; else echo /tmp/$1:${LD_LIBRARY_PATH:-}; fi; }
timeout 100 $B/test_field_split_gpu > $D/t_split_gpu.txt 2>&1; echo "test_field_split_gpu rc=$?"; grep -E "PASSED|FAILED" $D/t_split_gpu.txt | head -5
timeout 100 $B/test_field_gpu > $D/t_gpu.txt 2>&1; echo "test_field_gpu rc=$?"; grep -E "PASSED|FAILED" $D/t_gpu.txt | head -5
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)
for v in V6 V4 V1; do
  LD_LIBRARY_PATH=$(lib $v) timeout 100 $ncu --section SpeedOfLight --section Occupancy -k regex:split_kernel --launch-skip 40 --launch-count 3 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 8192 --min-time 0.05 > $D/ncu_$v.txt 2>&1
  echo "== ncu $v rc=$?"; grep -E "^    Duration|Achieved Occupancy|SM Frequency" $D/ncu_$v.txt | tr -s ' ' | paste -sd' '
done
echo "t=$(( $(date +%s)-t0 ))"
for r in 1 2; do for v in V6 V4 V1; do
  LD_LIBRARY_PATH=$(lib $v) timeout 100 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --json $D/split_$v$r.json > $D/split_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "split double +gpu" $D/split_$v$r.log | grep "direct single"
done; done
for r in 1 2; do for v in V6 V1; do
  LD_LIBRARY_PATH=$(lib $v) timeout 60 $B/field_bench --only-cuda --cells 268782 --points 8192 --min-time 0.5 --handles 0 --json $D/f_$v$r.json > $D/f_$v$r.log 2>&1
  echo "== field $v $r rc=$?"; grep -E "cuda_double|cuda_single " $D/f_$v$r.log
done; done
echo "t=$(( $(date +%s)-t0 ))"
