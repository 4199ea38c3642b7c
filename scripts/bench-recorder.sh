#!/usr/bin/env bash
# The recorder's cost on the sim board with the camera at 640×480 and a
# snapshot every second (so 1 fps is recorded outside motion): two agents run
# side by side for the same time, one with --record and one without, and the
# difference is the recorder's. Prints CPU (% of one core), RSS, and the
# recording's size per hour. MQTT is off in both (two embedded brokers would
# share a port); it is not recorded anyway.
#
#   scripts/bench-recorder.sh [seconds]      # default 300
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/proc.sh
dur=${1:-300}
warm=10
tmp=$(mktemp -d)
trap 'kill $pids 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/edgeagent" ./cmd/edgeagent
board() { # $1: data dir name
	sed -e "s|\.\./sensors/|$PWD/sensors/|g" \
		-e 's|^      width: 320|      width: 640|' -e 's|^      height: 240|      height: 480|' \
		-e 's|snapshot_interval: 5s|snapshot_interval: 1s|' \
		-e "s|^device:|data_dir: $tmp/$1\ndevice:|" \
		-e "s|^plugins:|plugins:\n  mqtt: {enabled: false}|" \
		-e "s|listen: 127.0.0.1:8080|listen: 127.0.0.1:0|" \
		board-configs/sim.yaml >"$tmp/$1.yaml"
}
board rec
board norec
"$tmp/edgeagent" run --board "$tmp/rec.yaml" --record "$tmp/run.mcap" --log-level error &
rec=$!
"$tmp/edgeagent" run --board "$tmp/norec.yaml" --log-level error &
norec=$!
pids="$rec $norec"
sleep "$warm"
r0=$(ticks $rec) n0=$(ticks $norec) s0=$(stat -c %s "$tmp/run.mcap")
rr=0 rn=0 samples=0
for _ in $(seq $((dur / 5))); do
	sleep 5
	rr=$((rr + $(rss $rec))) rn=$((rn + $(rss $norec))) samples=$((samples + 1))
done
r1=$(ticks $rec) n1=$(ticks $norec) s1=$(stat -c %s "$tmp/run.mcap")
awk -v r=$((r1 - r0)) -v n=$((n1 - n0)) -v hz="$hz" -v d="$dur" -v rr="$rr" -v rn="$rn" -v k="$samples" -v b=$((s1 - s0)) 'BEGIN {
	printf "over %d s: with recorder %.2f %% of one core, without %.2f %%: recorder %.2f %%\n", d, 100*r/hz/d, 100*n/hz/d, 100*(r-n)/hz/d
	printf "mean RSS: with recorder %.1f MB, without %.1f MB: recorder %.1f MB\n", rr/k/1024, rn/k/1024, (rr-rn)/k/1024
	printf "recording: %.1f MB/h (%d bytes in %d s, chunks on disk; the chunk being filled not counted)\n", b/d*3600/1e6, b, d
}'
kill -INT $rec $norec
wait $rec $norec 2>/dev/null || true
"$tmp/edgeagent" recording info "$tmp/run.mcap" | sed -n 1,4p
