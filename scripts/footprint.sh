#!/usr/bin/env bash
# Footprint of the sim board, side by side in one run (issue 32's table):
# each binary's stripped size, start to ready (the agent's own
# start_to_ready log field) and, after SECONDS of idling, its resident set
# and anonymous memory (VmRSS, RssAnon of /proc/PID/status) and the CPU it
# used (user+system, /proc/PID/stat, in clock ticks). The binaries run at
# the same time, so they see the same machine load.
#   scripts/footprint.sh SECONDS NAME=BINARY [NAME=BINARY]...
# A NAME may carry environment for its run: "robot-limit=BIN" with
# FOOTPRINT_ENV_robot_limit="GOMEMLIMIT=8MiB" (dashes become underscores).
# FOOTPRINT_PEER="NAME COMMAND..." starts another program at the same
# moment and reads it the same way (no start_to_ready), e.g. PicoClaw:
#   FOOTPRINT_PEER="picoclaw env HOME=/tmp/pchome /tmp/picoclaw-bin gateway"
# (words split on spaces; env execs, so the pid read is the program's).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/footprint.sh SECONDS NAME=BINARY...}
shift
[ $# -gt 0 ] || { echo "usage: scripts/footprint.sh SECONDS NAME=BINARY..." >&2; exit 2; }
. scripts/simboard.sh
declare -a names pids cfgs logs
trap 'for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; rm -f "${cfgs[@]:-}" "${logs[@]:-}"' EXIT
for arg in "$@"; do
  name=${arg%%=*} bin=${arg#*=}
  cfg=board-configs/.footprint-$$-$name.yaml
  log=$(mktemp)
  sim_board "$cfg"
  var=FOOTPRINT_ENV_${name//-/_}
  # shellcheck disable=SC2086 # the extra environment is words by design
  env ${!var:-} OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} "$bin" run --board "$cfg" 2>"$log" &
  names+=("$name") pids+=($!) cfgs+=("$cfg") logs+=("$log")
  sizes+=("$(stat -c %s "$bin")")
done
if [ -n "${FOOTPRINT_PEER:-}" ]; then
  read -ra peer <<<"$FOOTPRINT_PEER"
  log=$(mktemp)
  "${peer[@]:1}" >"$log" 2>&1 &
  names+=("${peer[0]}") pids+=($!) logs+=("$log") sizes+=(-)
fi
sleep "$secs"
printf '%-14s %12s %16s %10s %10s %9s %s\n' name bytes start_to_ready rss_KiB anon_KiB cpu_ticks env
for i in "${!names[@]}"; do
  pid=${pids[$i]}
  rss=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  anon=$(awk '/^RssAnon/{print $2}' /proc/$pid/status)
  ready=$(grep -o 'start_to_ready=[^ ]*' "${logs[$i]}" | head -1 | cut -d= -f2 || true)
  cpu=$(awk '{print $14+$15}' /proc/$pid/stat)
  var=FOOTPRINT_ENV_${names[$i]//-/_}
  size=${sizes[$i]}
  [ "$size" != - ] || size=$(stat -Lc %s /proc/$pid/exe)
  printf '%-14s %12s %16s %10s %10s %9s %s\n' "${names[$i]}" "$size" "${ready:-none}" "$rss" "$anon" "$cpu" "${!var:-}"
done
for pid in "${pids[@]}"; do kill -TERM "$pid"; wait "$pid" || true; done
pids=()
