#!/usr/bin/env bash
# Call Q8: NEW = the tree (the nuclear term over the CPU backends' threads) against OLD (00a3341's library):
# field_split_bench --no-gpu at 268,938 cells, 1,024 and 8,192 points, OLD, NEW, OLD, NEW (16 threads).
set -uo pipefail
B=/work/main/build-tests; D=bench/results/h100_2026-11-27_q8; mkdir -p $D
mkdir -p /tmp/OLD && xz -dc .devkit/vars/OLD.so.xz > /tmp/OLD/libqmmm_accel.so.0
t0=$(date +%s)
pack() { cp .devkit/callQ8.sh $D/call_q8.sh; tar czf $OUT/q8.tgz $D; }
for v in OLD NEW OLD NEW; do
  if [ $v = NEW ]; then L=$LD_LIBRARY_PATH; else L=/tmp/OLD:$LD_LIBRARY_PATH; fi
  LD_LIBRARY_PATH=$L timeout 100 $B/field_split_bench --data data/glycine_trimer --thresholds 0.00041 --tolerance 1e-7 --points 1024 8192 --min-time 0.3 --no-gpu --json /tmp/q8_$v.json > $D/split_$v.log 2>&1
  echo "$v rc=$? t=$(( $(date +%s)-t0 )): $(grep -E '^268938 +(1024|8192) +(split|direct) double +cpu' $D/split_$v.log | awk '{printf "%s %s %s %s: %s us; ", $2,$3,$6,$7,$8}')" | tee -a $D/ab.txt
  pack
done
