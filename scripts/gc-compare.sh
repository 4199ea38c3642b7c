#!/usr/bin/env bash
# Compares Go GC targets on the sim board side by side: one agent per
# target, all started together (so they share the machine's load), 30 s to
# settle, then SECONDS of measurement: CPU used (clock ticks of 10 ms, from
# /proc/PID/stat) and the resident set at the end.
#   scripts/gc-compare.sh [SECONDS] [TARGET ...]     defaults: 300, 100 25 10
# BINARY=path uses a built binary instead of a fresh build.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(100 25 10)
bin=${BINARY:-}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/edgeagent
  go build -ldflags "-s -w" -o "$bin" ./cmd/edgeagent
fi
. scripts/simboard.sh
pids=() cfgs=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -f "${cfgs[@]}"
}
trap cleanup EXIT
for g in "${targets[@]}"; do
  cfg=board-configs/.gc-$$-$g.yaml
  cfgs+=("$cfg")
  sim_board "$cfg"
  GOGC=$g OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} "$bin" run --board "$cfg" 2>/dev/null &
  pids+=($!)
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
sleep 30
start=()
for p in "${pids[@]}"; do start+=("$(ticks "$p")"); done
sleep "$secs"
echo "gc_target cpu_ticks rss_kib anon_kib"
for i in "${!pids[@]}"; do
  p=${pids[$i]}
  echo "${targets[$i]} $(($(ticks "$p") - ${start[$i]})) $(awk '/^VmRSS/{print $2}' "/proc/$p/status") $(awk '/^RssAnon/{print $2}' "/proc/$p/status")"
done
