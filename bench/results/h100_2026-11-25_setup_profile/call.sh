#!/usr/bin/env bash
# Call K: split setup phases on the H100 (profiling builds: P0 = std::unordered_map node index, P1 = flat index,
# 1fd1b06 otherwise), and one-point calls with S1 (latency kernel on min(chunks, 132) blocks looping over chunks)
# against this build (one block per chunk).
set -uo pipefail
export QMMM_REQUIRE_GPU=1
B=/work/main/build-tests; D=$OUT/k; mkdir -p $D
t0=$(date +%s)
for v in P0 P1 S1; do mkdir -p /tmp/$v; xz -dc .devkit/vars/lib$v.so.xz > /tmp/$v/libqmmm_accel.so.0; done
for r in 1 2; do for v in P0 P1; do
  QMMM_SPLIT_PROFILE=1 LD_LIBRARY_PATH=/tmp/$v:${LD_LIBRARY_PATH:-} timeout 100 $B/field_split_bench --no-cpu --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.05 --json $D/s_$v$r.json > $D/s_$v$r.log 2> $D/s_$v$r.err
  echo "== $v $r rc=$?"; grep -E "setup cuda" $D/s_$v$r.log | cut -c1-60; grep SETUPPROF $D/s_$v$r.err
done; done
echo "t=$(( $(date +%s)-t0 ))"
for r in 1 2 3; do for v in cur S1; do
  if [ $v = cur ]; then L=${LD_LIBRARY_PATH:-}; else L=/tmp/$v:${LD_LIBRARY_PATH:-}; fi
  LD_LIBRARY_PATH=$L timeout 60 $B/field_bench --only-cuda --cells 268782 --points 1 --min-time 0.5 --handles 0 --json $D/f_$v$r.json > $D/f_$v$r.log 2>&1
  echo "== $v $r rc=$?"; grep -E "limits|cuda_single |cuda_double " $D/f_$v$r.log | sed 's/limits of this GPU.*floor: //'
done; done
echo "t=$(( $(date +%s)-t0 ))"
