#!/usr/bin/env bash
# Memory over time (issue 11): the sim board with every sim sensor, a
# command stream over MQTT (a tool call and a text command every few
# seconds, through the agent's own CLI), for N minutes. Prints RSS (and its
# anonymous part) every minute and, at the end, the least-squares slope of
# RSS over the second half of the run, in MB per hour.
#   scripts/soak.sh [MINUTES] [BINARY]      defaults: 60, a fresh build
# TAGS=gocv builds the cgo camera backend (the Pi build). PROFILES=DIR saves
# a heap profile after the first minute and one at the end (through
# EDGEAGENT_PPROF, which the full build serves and the robot profile
# refuses); compare them with
#   go tool pprof -sample_index=inuse_space -top -base DIR/heap-first.pb.gz BINARY DIR/heap-last.pb.gz
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-60}
bin=${2:-}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/edgeagent
  go build ${TAGS:+-tags "$TAGS"} -ldflags "-s -w" -o "$bin" ./cmd/edgeagent
fi
. scripts/simboard.sh
cfg=board-configs/.soak-$$.yaml
log=$(mktemp)
sim_board "$cfg"
pprof=
if [ -n "${PROFILES:-}" ]; then
  mkdir -p "$PROFILES"
  pprof=127.0.0.1:$(free_port)
fi
heap() { [ -z "$pprof" ] || curl -sf "http://$pprof/debug/pprof/heap?gc=1" -o "$PROFILES/heap-$1.pb.gz"; }
EDGEAGENT_PPROF=$pprof OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} "$bin" run --board "$cfg" 2>"$log" &
pid=$!
stream=
cleanup() {
  [ -n "$stream" ] && kill "$stream" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -f "$cfg" "$log"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q 'start_to_ready' "$log" && break; sleep 0.2; done
# The command stream: its own process tree, so it is killed as one.
(
  i=0
  while kill -0 "$pid" 2>/dev/null; do
    i=$((i + 1))
    "$bin" invoke --board "$cfg" headlight.set "{\"on\":$([ $((i % 2)) -eq 0 ] && echo true || echo false)}" >/dev/null 2>&1 || true
    "$bin" invoke --board "$cfg" pan.set_angle "{\"degrees\":$((30 + i % 120))}" >/dev/null 2>&1 || true
    sleep 2
  done
) &
stream=$!
samples=()
echo "minute rss_kib anon_kib"
for m in $(seq 1 "$minutes"); do
  sleep 60
  kill -0 "$pid" 2>/dev/null || { echo "the agent died"; tail -20 "$log"; exit 1; }
  rss=$(awk '/^VmRSS/{print $2}' /proc/$pid/status)
  anon=$(awk '/^RssAnon/{print $2}' /proc/$pid/status)
  samples+=("$m $rss $anon")
  echo "$m $rss $anon"
  [ "$m" -ne 1 ] || heap first
done
heap last
# The anonymous part's slope is printed apart: the file-backed rest is
# mostly the store's map, a bounded sawtooth between trims whose phase can
# tilt a half-hour line by a few tenths of a MB/h.
printf '%s\n' "${samples[@]}" | awk -v n="$minutes" '
  $1 > n/2 { x=$1/60; y=$2/1024; a=$3/1024; sx+=x; sy+=y; sa+=a; sxx+=x*x; sxy+=x*y; sxa+=x*a; k++ }
  END { if (k < 2) { print "slope: too few samples"; exit }
        d = k*sxx-sx*sx
        printf "slope over the second half: %.3f MB/h, anonymous %.3f MB/h (%d samples)\n", (k*sxy-sx*sy)/d, (k*sxa-sx*sa)/d, k }'
