#!/usr/bin/env bash
# wakeword-rss.sh — the wake word's memory on the sim board: the same
# binary runs the sim board twice side by side, once as shipped (the
# "hey robot" head over the speech frontend) and once with
# wakeword: {detector: off}, and after SECONDS (default 90: the simulated
# room says "hey robot" at 20 s, so the frontend has run) prints each one's
# resident set, its peak and its anonymous memory (/proc/PID/status).
#
#   scripts/wakeword-rss.sh [SECONDS] [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-90}
bin=${2:-}
if [ -z "$bin" ]; then
  bin=/tmp/edgeagent-rss
  go build -o "$bin" ./cmd/edgeagent
fi
. scripts/simboard.sh
declare -a pids cfgs
trap 'for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -f "${cfgs[@]:-}"' EXIT
for name in wakeword off; do
  cfg=board-configs/.wakeword-rss-$$-$name.yaml
  sim_board "$cfg"
  if [ $name = off ]; then
    sed -i 's|^        model: builtin$|        detector: "off"|' "$cfg"
    grep -q 'detector: "off"' "$cfg" || { echo "sim.yaml's mic no longer has 'model: builtin' to replace" >&2; exit 1; }
  fi
  OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} "$bin" run --board "$cfg" 2>/dev/null &
  pids+=($!) cfgs+=("$cfg")
done
sleep "$secs"
printf '%-10s %10s %10s %10s\n' board rss_KiB peak_KiB anon_KiB
i=0
for name in wakeword off; do
  s=/proc/${pids[$i]}/status
  printf '%-10s %10s %10s %10s\n' $name "$(awk '/^VmRSS/{print $2}' $s)" "$(awk '/^VmHWM/{print $2}' $s)" "$(awk '/^RssAnon/{print $2}' $s)"
  i=$((i + 1))
done
