#!/usr/bin/env bash
# Record and replay (issue 30): runs the default sim board with --record in
# scenarios made fresh each time, then replays each recording N times with
# --check, as fast as possible and, with SPEED1=1, at --speed 1 as well.
# Prints one line per replay and a summary; exits 1 if any replay diverged.
#   scripts/replay-check.sh [N] [SECONDS]      defaults: 10 replays, 60 s runs
# Scenarios: idle (no input); commands (tool calls through the CLI's local
# admin socket, a text command forwarded over MQTT with decide, an e-stop
# and its reset); both with no model server (OLLAMA_HOST is a closed port).
# OLLAMA_HOST=http://host:port runs them against that model server instead
# (the fake one of a test, or ../shared/tools/ollama's).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
secs=${2:-60}
bin=$(mktemp -d)/edgeagent
go build -o "$bin" ./cmd/edgeagent
. scripts/simboard.sh
work=$(mktemp -d)
trap 'rm -rf "$work" board-configs/.replay-check-$$.yaml' EXIT
cfg=board-configs/.replay-check-$$.yaml
export OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1}

# record NAME ACTIONS: runs the board for secs seconds into $work/NAME.mcap;
# ACTIONS (a function name or "") runs halfway through.
record() {
  sim_board "$cfg"
  "$bin" run --board "$cfg" --record "$work/$1.mcap" 2>"$work/$1.log" &
  local pid=$!
  for _ in $(seq 100); do grep -q 'msg=ready' "$work/$1.log" && break; sleep 0.1; done
  sleep $((secs / 2))
  [ -n "$2" ] && "$2" >>"$work/$1.actions.log" 2>&1
  sleep $((secs - secs / 2))
  kill -INT "$pid"
  wait "$pid" || true
}

commands() {
  "$bin" invoke --board "$cfg" headlight.set '{"on":true}'
  "$bin" invoke --board "$cfg" fan.set '{"duty":0.5}'
  "$bin" decide --board "$cfg" "turn on the pump"
  "$bin" invoke --board "$cfg" estop.trigger '{"reason":"replay-check"}'
  "$bin" invoke --board "$cfg" estop.reset
}

record idle ""
record commands commands

fail=0
for name in idle commands; do
  speeds="--as-fast-as-possible"
  [ "${SPEED1:-0}" = 1 ] && speeds="$speeds --speed=1"
  for speed in $speeds; do
    ok=0
    for i in $(seq "$n"); do
      if "$bin" replay --check "$speed" "$work/$name.mcap" >"$work/$name.$i.out" 2>/dev/null; then
        ok=$((ok + 1))
      else
        fail=1
        echo "$name $speed run $i DIVERGED:"
        grep -A12 'DIVERGED\|edgeagent:' "$work/$name.$i.out" | head -20
      fi
    done
    echo "$name ($secs s, $speed): $ok of $n identical; $(head -1 "$work/$name.1.out")"
  done
done
exit $fail
