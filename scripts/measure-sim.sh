#!/usr/bin/env bash
# Measures the sim board: start-to-ready (from the agent's own "ready" log
# line) and resident memory after it has run for a while, over several runs.
#   scripts/measure-sim.sh [BINARY] [RUNS] [SECONDS]
# BINARY defaults to a fresh build; prefix it with a qemu-user emulator via
# RUNNER=qemu-aarch64-static (numbers are then emulated, not a board's).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
runs=${2:-5}
secs=${3:-20}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/edgeagent
  go build -ldflags "-s -w" -o "$bin" ./cmd/edgeagent
fi
. scripts/simboard.sh
cfg=board-configs/.measure-$$.yaml
trap 'rm -f "$cfg"' EXIT
sim_board "$cfg"
for i in $(seq 1 "$runs"); do
  log=$(mktemp)
  OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} ${RUNNER:-} "$bin" run --board "$cfg" 2>"$log" &
  pid=$!
  sleep "$secs"
  rss=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  anon=$(awk '/^RssAnon/{print $2}' /proc/$pid/status)
  kill -TERM $pid
  wait $pid
  ready=$(grep -o 'start_to_ready=[^ ]*' "$log" | head -1 | cut -d= -f2)
  echo "run $i: start_to_ready=$ready rss=${rss}KiB (anon ${anon}KiB) exit=0"
  rm -f "$log"
done
