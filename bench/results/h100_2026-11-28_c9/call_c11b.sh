#!/usr/bin/env bash
# Call C11b: CPU MIXED float runs of 16 (e406bf3's field_bench, k16) against 8 (61ac2ec's, k8), alternated, one thread.
set -uo pipefail
M=/tmp/mini; rm -rf $M; mkdir -p $M; tar xJf .devkit/mini.tar.xz -C /tmp; D=$OUT/c11; mkdir -p $D
lscpu | grep -E "Model name|^CPU\(s\)" > $D/lscpu.txt
for v in 16 8; do LD_LIBRARY_PATH=$M/k$v:$M/lib ldd $M/k$v/field_bench | grep -E "qmmm|fmt|gomp" >> $D/ldd.txt; done
for r in 1 2 3 4; do for v in 16 8; do
  echo "run $v round $r: $(LD_LIBRARY_PATH=$M/k$v:$M/lib timeout 40 $M/k$v/field_bench --cpu-only --cells 268782 --cpu-points 256 --min-time 1 --json /tmp/ab_$v.json 2>&1 | grep -E '^268782 +256 +(mixed|single|double) +1 ' | tr -s ' ' | tr '\n' ';')" >> $D/ab.txt
done; done
cat $D/lscpu.txt $D/ldd.txt $D/ab.txt
