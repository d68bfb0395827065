#!/usr/bin/env bash
# Call L (3cd4bc2-era tree): all GPU tests; split setup phases with the newest setup (P2 = profiling build); the
# throughput tile shapes for N = 1024 and 8192 (QMMM_CUDA_TILE, same bits by design) to check the defaults.
set -uo pipefail
export QMMM_REQUIRE_GPU=1 QMMM_MPIEXEC=mpiexec
B=/work/main/build-tests; D=$OUT/l; mkdir -p $D
for t in cmake ctest; do [ -x /usr/bin/$t ] || ln -sf "$(command -v $t)" /usr/bin/$t; done
t0=$(date +%s)
timeout 200 ctest --test-dir $B -L gpu --output-on-failure --timeout 150 -j 4 > $D/gpu_tests.txt 2>&1; echo "ctest rc=$?" >> $D/gpu_tests.txt
grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run|ctest rc" $D/gpu_tests.txt; echo "t=$(( $(date +%s)-t0 ))"
mkdir -p /tmp/P2; xz -dc .devkit/vars/libP2.so.xz > /tmp/P2/libqmmm_accel.so.0
for r in 1 2; do
  QMMM_SPLIT_PROFILE=1 LD_LIBRARY_PATH=/tmp/P2:${LD_LIBRARY_PATH:-} timeout 100 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.05 --json $D/s_P2$r.json > $D/s_P2$r.log 2> $D/s_P2$r.err
  echo "== P2 $r rc=$?"; grep -E "setup cuda" $D/s_P2$r.log | cut -c1-60; grep SETUPPROF $D/s_P2$r.err
done
echo "t=$(( $(date +%s)-t0 ))"
for n in 1024 8192; do for cfg in 0 8032 4064 4032 2064 2032; do
  QMMM_CUDA_TILE=$cfg timeout 60 $B/field_bench --only-cuda --cells 268782 --points $n --min-time 0.3 --handles 0 --json $D/t_${n}_$cfg.json > $D/t_${n}_$cfg.log 2>&1
  echo "== N=$n tile=$cfg rc=$?"; grep -E "cuda_(single|mixed|double) " $D/t_${n}_$cfg.log | awk '{print $3, $4, $6}' | paste -sd' '
done; done
echo "t=$(( $(date +%s)-t0 ))"
