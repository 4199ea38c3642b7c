#!/usr/bin/env bash
# The dashboard's cost on the sim board (camera at 10 fps, every sensor):
# two agents run side by side, one without the dashboard and one with it,
# and the CPU of both is measured over the same windows, alternately with
# no client and with one client on the dashboard (the live channel and the
# camera's MJPEG stream, which is what an open page reads; a browser's own
# work is not the agent's). The differences are the dashboard's cost.
# MQTT is off in both (two embedded brokers would share a port).
#
#   scripts/bench-dashboard.sh [seconds per window] [rounds]   # default 20 s, 3 rounds
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/proc.sh
dur=${1:-20}
rounds=${2:-3}
warm=10
port=$((20000 + RANDOM % 20000))
tmp=$(mktemp -d)
pids=""
trap 'kill $pids 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/edgeagent" ./cmd/edgeagent
board() { # $1: name, $2: the dashboard line
	sed -e "s|\.\./sensors/|$PWD/sensors/|g" \
		-e "s|^  listen: 127.0.0.1:8080|$2|" \
		-e "s|^device:|data_dir: $tmp/$1\ndevice:|" -e "s|^plugins:|plugins:\n  mqtt: {enabled: false}|" \
		board-configs/sim.yaml >"$tmp/$1.yaml"
	grep -q "^$2" "$tmp/$1.yaml" || { echo "sim.yaml no longer has the dashboard on 127.0.0.1:8080" >&2; exit 1; }
}
board off "  enabled: false"
board on "  listen: 127.0.0.1:$port"
"$tmp/edgeagent" run --board "$tmp/off.yaml" --log-level error &
off=$!
"$tmp/edgeagent" run --board "$tmp/on.yaml" --log-level error &
on=$!
pids="$off $on"
sleep "$warm"
url="http://127.0.0.1:$port"
curl -sf "$url/api/session" >/dev/null || { echo "the dashboard does not answer at $url" >&2; exit 1; }

# window <label>: CPU of both agents over dur seconds.
window() {
	local a0 b0 a1 b1
	a0=$(ticks $off) b0=$(ticks $on)
	sleep "$dur"
	a1=$(ticks $off) b1=$(ticks $on)
	awk -v l="$1" -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v hz="$hz" -v d="$dur" -v ra="$(rss $off)" -v rb="$(rss $on)" 'BEGIN {
		printf "%-12s without dashboard %5.2f %%   with dashboard %5.2f %%   difference %+5.2f %% of one core   RSS %5.1f / %5.1f MB\n",
			l, 100*a/hz/d, 100*b/hz/d, 100*(b-a)/hz/d, ra/1024, rb/1024 }'
}
for _ in $(seq "$rounds"); do
	window "no client"
	curl -sN "$url/api/live" >/dev/null &
	live=$!
	curl -sN "$url/api/camera/front_cam/stream" -o "$tmp/stream.mjpeg" &
	cam=$!
	pids="$off $on $live $cam"
	sleep 2 # the client's start (state, history) is not the steady cost
	window "one client"
	kill $live $cam
	wait $live $cam 2>/dev/null || true
	pids="$off $on"
	frames=$(grep -ac 'Content-Type: image/jpeg' "$tmp/stream.mjpeg" || true)
	echo "             (the client got $frames camera frames in $((dur + 2)) s)"
done
kill -INT $off $on
wait $off $on 2>/dev/null || true
