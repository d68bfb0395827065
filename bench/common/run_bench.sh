#!/usr/bin/env bash
# run_bench.sh OUT_DIR/NAME -- command [args...]
# Runs a benchmark and writes OUT_DIR/NAME.meta.json beside its outputs: what ran (command, directory), where
# (GPU and CPU), when (UTC), on which code (git commit, and the tracked files that differed from it), its exit
# status, and the sha256 of every file the run wrote under OUT_DIR. The command's stdout and stderr (merged)
# also go to OUT_DIR/NAME.log. scripts/readme_tables.py renders the documentation's measured tables only from
# results that have such a sidecar and whose sha256 still matches it (bench/results/README_SOURCES.json: which
# feed which table; bench/common/publish_results.sh: the published runs). The benchmark programs themselves are not
# changed: any command works, e.g. an experiment, whose output stays in the ignored runs/ folder:
#   bench/common/run_bench.sh runs/field/direct -- build/field_bench --cells 268782 --points 1 1024 8192 \
#       --json runs/field/direct.json
# Run from the repository root. Exit status: the command's.
set -uo pipefail
if [[ $# -lt 3 || $2 != "--" ]]; then
  echo "usage: run_bench.sh OUT_DIR/NAME -- command [args...]" >&2
  exit 2
fi
prefix=$1; shift 2
out=$(dirname "$prefix"); name=$(basename "$prefix")
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
root=$(git rev-parse --show-toplevel 2>/dev/null || pwd)

# JSON string (the characters a command line or a device name can hold).
js() {
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\t'/\\t}; s=${s//$'\r'/\\r}
  printf '"%s"' "$s"
}
# JSON array of strings from the arguments.
jarr() {
  local first=1 a
  printf '['
  for a in "$@"; do
    ((first)) || printf ', '
    first=0
    js "$a"
  done
  printf ']'
}

stamp=$(mktemp)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
"$@" 2>&1 | tee "$out/$name.log"
status=${PIPESTATUS[0]}
finished=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# QMMM_BENCH_COMMIT names the commit of a clean tree that was copied without (or with a stale) git history, as
# on the GPU machine; then the changes are recorded against it only where git there knows that commit.
if [[ -n ${QMMM_BENCH_COMMIT:-} ]]; then
  commit=$QMMM_BENCH_COMMIT
  mapfile -t dirty < <(git -C "$root" diff --name-only "$commit" 2>/dev/null)
else
  commit=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
  mapfile -t dirty < <(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | cut -c4-)
fi
gpus=()
if command -v nvidia-smi > /dev/null; then
  mapfile -t gpus < <(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null)
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
if ((${#gpus[@]})); then device="${gpus[0]%%,*}"; else device="CPU: $cpu"; fi
if ((${#gpus[@]} > 1)); then device="${#gpus[@]}x $device"; fi

# Every file the run wrote or changed under OUT_DIR (not the sidecar and log themselves), relative to the root.
outputs=()
while IFS= read -r f; do
  outputs+=("$f")
done < <(find "$out" -type f -newer "$stamp" ! -name "$name.meta.json" ! -name "$name.log" | sort)
rm -f "$stamp"

{
  printf '{\n'
  printf '  "name": %s,\n' "$(js "$name")"
  printf '  "command": %s,\n' "$(jarr "$@")"
  printf '  "cwd": %s,\n' "$(js "$(pwd)")"
  printf '  "started_utc": %s,\n  "finished_utc": %s,\n' "$(js "$started")" "$(js "$finished")"
  printf '  "exit_status": %d,\n' "$status"
  printf '  "commit": %s,\n' "$(js "$commit")"
  printf '  "uncommitted_changes": %s,\n' "$(jarr "${dirty[@]}")"
  printf '  "device": %s,\n' "$(js "$device")"
  printf '  "gpus": %s,\n' "$(jarr "${gpus[@]}")"
  printf '  "cpu": %s,\n  "cpu_threads": %d,\n' "$(js "$cpu")" "$(nproc)"
  printf '  "log": %s,\n' "$(js "${out#"$root"/}/$name.log")"
  printf '  "outputs": ['
  first=1
  for f in "${outputs[@]}"; do
    ((first)) || printf ','
    first=0
    printf '\n    {"path": %s, "sha256": "%s", "bytes": %d}' "$(js "${f#"$root"/}")" \
      "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")"
  done
  printf '\n  ]\n}\n'
} > "$out/$name.meta.json"
echo "run_bench: $out/$name.meta.json (exit status $status, ${#outputs[@]} output files)" >&2
exit $status
