#!/usr/bin/env bash
# Call E1 (bfc6378 + /tmp/evalprof.py, an experiment build): where a CUDA split call of 8,192 points spends its time.
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-25_split_eval_profile; mkdir -p $D
mkdir -p /tmp/ep; xz -dc .devkit/vars/evalprof.so.xz > /tmp/ep/libqmmm_accel.so.0
for r in 1 2; do QMMM_SPLIT_PROFILE=1 LD_LIBRARY_PATH=/tmp/ep:$LD_LIBRARY_PATH timeout 120 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 0 --tolerance 1e-7 --points 8192 --min-time 0.3 --no-cpu > $D/eval_prof_$r.txt 2>&1; grep -E "EVALPROF|split double +gpu +[0-9.]+ .*direct single" $D/eval_prof_$r.txt; done
cp .devkit/callE1.sh $D/call_e1.sh; tar czf $OUT/e1.tgz $D
