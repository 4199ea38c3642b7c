#!/usr/bin/env bash
# Record and replay (issue 30): runs the default sim board with --record in
# scenarios made fresh each time, then replays each recording N times with
# --check, as fast as possible and, with SPEED1=1, at --speed 1 as well.
# Prints one line per diverged replay and a summary per scenario and speed;
# exits 1 if any replay diverged.
#
#   scripts/replay-check.sh [N] [SECONDS]      defaults: 10 replays, 60 s runs
#
# Scenarios (SCENARIOS, default "idle commands"):
#   idle      no input at all;
#   commands  spread over the run: tool calls over MQTT (mosquitto_pub on the
#             robot's cmd topic), a text command with `decide` (forwarded to
#             the running agent), the dashboard's E-STOP and its reset through
#             the dashboard's HTTP API, and a config.reload of a changed board
#             (heartbeat 10s -> 15s) through the CLI's local admin socket.
# The model server (OLLAMA): absent (default: OLLAMA_HOST is a closed port);
# fake (scripts/fakeollama, every chat answered with one JSON document);
# real (../shared/tools/ollama/serve.sh: Ollama with its random-weight model
# "tiny", which the board's llm.model and embed_model are set to). EMBED=off
# leaves the board's embed_model empty (the built-in lexical embedder);
# otherwise the model server's embedding calls are recorded and replayed.
# SPEED1=1 replays at --speed 1 too, JOBS of them at once (default 1: a
# replay at --speed 1 takes as long as the recording). KEEP=DIR keeps the
# recordings, logs and reports in DIR; RECORDINGS=DIR replays the
# recordings DIR/*.mcap (made by an earlier run with KEEP) instead of
# recording new ones. Run long ones under nice -n 10.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10}
secs=${2:-60}
scenarios=${SCENARIOS:-idle commands}
ollama=${OLLAMA:-absent}
jobs=${JOBS:-1}
tmp=$(mktemp -d)
work=${KEEP:-$tmp/work}
mkdir -p "$work"
bin=$tmp/edgeagent
go build -o "$bin" ./cmd/edgeagent
. scripts/simboard.sh
cfg=board-configs/.replay-check-$$.yaml
cfg2=board-configs/.replay-check-$$-reloaded.yaml
pids=""
trap 'kill $pids 2>/dev/null || true; rm -rf "$tmp" "$cfg" "$cfg2"' EXIT

start_ollama() {
  case $ollama in
  absent) export OLLAMA_HOST=http://127.0.0.1:1 ;;
  fake)
    go build -o "$tmp/fakeollama" ./scripts/fakeollama
    "$tmp/fakeollama" qwen2.5:1.5b '{"scenario":"environment"}' >"$tmp/fakeollama.addr" &
    pids="$pids $!"
    for _ in $(seq 100); do [ -s "$tmp/fakeollama.addr" ] && break; sleep 0.1; done
    export OLLAMA_HOST=$(head -1 "$tmp/fakeollama.addr")
    ;;
  real)
    eval "$(../shared/tools/ollama/serve.sh)"
    pids="$pids $OLLAMA_SERVE_PID"
    ;;
  *) echo "OLLAMA=$ollama: want absent, fake or real" >&2; exit 2 ;;
  esac
}

# board OUT: the sim board on ports of its own, with the model server's
# model names for OLLAMA=real, and without embeddings for EMBED=off.
board() {
  sim_board "$1"
  if [ "$ollama" = real ]; then
    sed -i 's|^  model: qwen2.5:1.5b|  model: tiny|; s|^  embed_model: all-minilm|  embed_model: tiny|' "$1"
  fi
  if [ "${EMBED:-on}" = off ]; then
    sed -i 's|^  embed_model: [^ ]*|  embed_model: ""|' "$1"
  fi
}

# record NAME ACTIONS: runs the board for secs seconds into $work/NAME.mcap;
# ACTIONS (a function name or "") runs once the agent is ready and is given
# the seconds it may take.
record() {
  board "$cfg"
  rm -f "$work/$1.mcap"
  "$bin" run --board "$cfg" --record "$work/$1.mcap" 2>"$work/$1.log" &
  local pid=$! t0=$SECONDS
  pids="$pids $pid"
  for _ in $(seq 100); do grep -q 'msg=ready' "$work/$1.log" && break; sleep 0.1; done
  # An action that fails (a decide that times out on a slow model) is
  # logged; the run and the replays go on.
  if [ -n "$2" ] && ! "$2" "$work/$1.log" >>"$work/$1.actions.log" 2>&1; then
    echo "$1: an action failed (see $work/$1.actions.log)"
  fi
  local rest=$((secs - (SECONDS - t0)))
  if [ "$rest" -gt 0 ]; then sleep "$rest"; fi
  kill -INT "$pid"
  wait "$pid" || true
}

# commands LOG: the inputs of the commands scenario, one every secs/6 s.
commands() {
  local gap=$((secs / 6)) port
  port=$(grep -o 'listen: 127.0.0.1:[0-9]*' "$cfg" | head -1 | cut -d: -f3)
  local failed=0
  sleep "$gap"
  mosquitto_pub -p "$port" -t edgeagent/sim-bot/cmd -q 1 -m '{"id":"rc-1","tool":"headlight.set","params":{"on":true}}' || failed=1
  mosquitto_pub -p "$port" -t edgeagent/sim-bot/cmd -q 1 -m '{"id":"rc-2","tool":"fan.set","params":{"duty":0.5}}' || failed=1
  sleep "$gap"
  "$bin" decide --board "$cfg" "turn on the pump" || failed=1
  sleep "$gap"
  dashboard_estop "$1" || failed=1
  sleep "$gap"
  sed 's/^  heartbeat: 10s/  heartbeat: 15s/' "$cfg" >"$cfg2"
  "$bin" invoke --board "$cfg" config.reload "{\"path\":\"$(basename "$cfg2")\"}" || failed=1
  return $failed
}

# dashboard_estop LOG: presses the dashboard's E-STOP and resets it, as the
# page does (a session cookie and its CSRF token).
dashboard_estop() {
  local url jar=$tmp/cookies csrf
  url=$(grep -o 'url=http://[0-9.:]*/' "$1" | tail -1 | cut -d= -f2)
  csrf=$(curl -sf -c "$jar" "${url}api/session" | jq -r .csrf)
  curl -sf -b "$jar" -H "X-CSRF-Token: $csrf" -H "Origin: ${url%/}" -X POST "${url}api/estop"
  echo
  curl -sf -b "$jar" -H "X-CSRF-Token: $csrf" -H "Origin: ${url%/}" -H 'Content-Type: application/json' \
    -d '{"tool":"estop.reset","params":{}}' "${url}api/invoke"
  echo
}

# replays NAME SPEED: N replays of NAME at SPEED, JOBS at a time at --speed 1.
replays() {
  local name=$1 speed=$2 ok=0 par=1 i out running=""
  [ "$speed" != --as-fast-as-possible ] && par=$jobs
  out=$work/$name$speed
  for i in $(seq "$n"); do
    (
      rc=0
      "$bin" replay --check "$speed" "$work/$name.mcap" >"$out.$i.out" 2>"$out.$i.err" || rc=$?
      echo $rc >"$out.$i.rc"
    ) &
    running="$running $!"
    if [ $((i % par)) = 0 ] || [ "$i" = "$n" ]; then
      wait $running
      running=""
    fi
  done
  for i in $(seq "$n"); do
    if [ "$(cat "$out.$i.rc")" = 0 ]; then
      ok=$((ok + 1))
    else
      fail=1
      echo "$name $speed run $i DIVERGED:"
      grep -A12 'DIVERGED' "$out.$i.out" | head -20 || true
      grep '^edgeagent:' "$out.$i.err" || true
    fi
  done
  echo "$name ($made, $speed): $ok of $n identical; $(head -1 "$out.1.out")"
}

made="$secs s, OLLAMA=$ollama EMBED=${EMBED:-on}"
if [ -n "${RECORDINGS:-}" ]; then
  work=$RECORDINGS made="recorded earlier"
  scenarios=$(cd "$work" && ls *.mcap | sed 's/\.mcap$//')
else
  start_ollama
  for name in $scenarios; do
    case $name in
    idle) record idle "" ;;
    commands) record commands commands ;;
    *) echo "unknown scenario $name" >&2; exit 2 ;;
    esac
  done
fi

fail=0
speeds="--as-fast-as-possible"
[ "${SPEED1:-0}" = 1 ] && speeds="$speeds --speed=1"
for name in $scenarios; do
  for speed in $speeds; do replays "$name" "$speed"; done
done
exit $fail
