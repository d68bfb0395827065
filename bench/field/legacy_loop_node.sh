#!/usr/bin/env bash
# legacy_loop_node.sh BUILD_DIR OUT_JSON [M N] -- the library's default threads against n_threads = 1 where a legacy
# code calls it: (1) one MPI rank per core, every rank with the defaults (the library reads the launcher's local
# rank count: MPICH's MPI_LOCALNRANKS); (2) one process on a node whose other cores are all busy (cores - 1 spinning
# shells), where the default is every core. M charges, N electrons a call (default 268,938 x 18: the glycine
# fragment's cells and electrons). Each case is timed default, 1 thread, default, 1 thread (legacy_loop_bench --one,
# 2 s each); per-call time = the mean over ranks, best of the two. Bounds: 1.1x with ranks, 1.25x on the loaded node.
# Prints a table and writes OUT_JSON. Needs mpiexec.mpich (QMMM_MPIEXEC overrides).
set -euo pipefail
build=${1:?usage: legacy_loop_node.sh BUILD_DIR OUT_JSON [M N]}
out=${2:?usage: legacy_loop_node.sh BUILD_DIR OUT_JSON [M N]}
m=${3:-268938}; n=${4:-18}
exe="$build/legacy_loop_bench"
mpiexec=${QMMM_MPIEXEC:-mpiexec.mpich}
cores=$(nproc)
tmp=$(mktemp -d); busy=()
cleanup() { ((${#busy[@]})) && kill "${busy[@]}" 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# mean us per call and the default thread count over the lines of --one runs on stdin
mean() { awk '{for (i = 1; i <= NF; ++i) if ($i == "us") { s += $(i - 1); k++ } if (match($0, /default [0-9]+/)) d = substr($0, RSTART + 8, RLENGTH - 8)}
              END { if (!k) exit 1; printf "%.3f %d\n", s / k, d }'; }
best() { sort -g | head -1; }
run_case() {  # launcher... -> "default_us one_us default_threads"
  local d1 o1 d2 o2
  d1=$("$@" "$exe" --one "$m" "$n" --threads 0 --min-time 2 | mean); o1=$("$@" "$exe" --one "$m" "$n" --threads 1 --min-time 2 | mean)
  d2=$("$@" "$exe" --one "$m" "$n" --threads 0 --min-time 2 | mean); o2=$("$@" "$exe" --one "$m" "$n" --threads 1 --min-time 2 | mean)
  echo "$(printf '%s\n' "${d1% *}" "${d2% *}" | best) $(printf '%s\n' "${o1% *}" "${o2% *}" | best) ${d1#* }"
}

read -r r_def r_one r_thr < <(run_case "$mpiexec" -n "$cores")
for ((i = 1; i < cores; ++i)); do (while :; do :; done) & busy+=($!); done
read -r l_def l_one l_thr < <(run_case env)
kill "${busy[@]}" 2> /dev/null; busy=()

row() {  # layout processes threads default one bound
  awk -v l="$1" -v p="$2" -v t="$3" -v d="$4" -v o="$5" -v b="$6" 'BEGIN {
    r = d / o; printf "{\"layout\": \"%s\", \"processes\": %d, \"default_threads\": %d, \"default_us\": %.3f, \"one_thread_us\": %.3f, \"ratio\": %.4f, \"bound\": %s, \"met\": %s}", l, p, t, d, o, r, b, (r <= b ? "true" : "false") }'
}
rows="$(row "one MPI rank per core, $cores ranks" "$cores" "$r_thr" "$r_def" "$r_one" 1.1), $(row "one process, $((cores - 1)) other cores busy" 1 "$l_thr" "$l_def" "$l_one" 1.25)"
printf '{"benchmark": "legacy_loop_node", "charges": %d, "points": %d, "cores": %d, "rows": [%s]}\n' "$m" "$n" "$cores" "$rows" > "$out.tmp"
mv "$out.tmp" "$out"
echo "| layout | default threads | default, us | 1 thread, us | ratio | bound |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
echo "| $cores ranks, one per core | $r_thr | $r_def | $r_one | $(awk -v a="$r_def" -v b="$r_one" 'BEGIN{printf "%.3f", a/b}') | 1.1 |"
echo "| 1 process, $((cores - 1)) cores busy | $l_thr | $l_def | $l_one | $(awk -v a="$l_def" -v b="$l_one" 'BEGIN{printf "%.3f", a/b}') | 1.25 |"
echo "($m charges x $n electrons a call, double, us per call; legacy_loop_bench --one)"
