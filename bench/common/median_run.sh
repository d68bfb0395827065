# median_run.sh -- sourced by the driver cost benchmarks: median_run BASE REPEATS EXE NML runs the driver REPEATS
# times on one thread (BASE.1.json .. BASE.R.json and their logs) and keeps the run whose total time is the median
# as BASE.json and BASE.log (the numbered logs stay, the numbered JSON files go). A run of a second or less varies
# by 20-30 % on a shared host (the polarizable cost ratio, its code unchanged, a session apart on the H100 host:
# 2.27x and 1.75x); the median of three does not take one slow run for the answer.
median_run() {
  local base=$1 repeats=$2 exe=$3 nml=$4 i k
  for ((k = 1; k <= repeats; k++)); do
    OMP_NUM_THREADS=1 "$exe" "$nml" "$base.$k.json" > "$base.$k.log"
  done
  k=$(for ((i = 1; i <= repeats; i++)); do
        printf '%s %d\n' "$(grep -o '"total": [^,}]*' "$base.$i.json" | head -1 | sed 's/.*: //')" "$i"
      done | sort -g | awk -v m=$(((repeats + 1) / 2)) 'NR == m {print $2}')
  cp "$base.$k.json" "$base.json"; cp "$base.$k.log" "$base.log"
  for ((i = 1; i <= repeats; i++)); do rm -f "$base.$i.json"; done   # a forces run's JSON is 109 MB; the logs stay
}
