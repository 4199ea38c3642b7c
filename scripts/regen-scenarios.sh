#!/usr/bin/env bash
# Regenerate the scenario recordings in testdata/scenarios/ from their boards
# when behaviour changes on purpose. Each board runs on the simulated devices
# for a fixed time with `run --record`; then every recording must replay
# identically 10 times out of 10, and those that keep their frames or audio
# (detect) 10 times out of 10 with --detections detectors too, i.e. with the
# motion and wake-word detectors run again. Review what changed before committing:
#   edgeagent recording info testdata/scenarios/<name>.mcap
#   edgeagent replay testdata/scenarios/<name>.mcap --as-fast-as-possible --check
#
#   scripts/regen-scenarios.sh            # all scenarios
#   scripts/regen-scenarios.sh estop      # one
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A seconds=([motion-reflex]=22 [estop]=9 [threshold]=14 [sensor-fault]=10 [llm-estop]=8 [wake-command]=9 [motion-detect]=11)
declare -A detect=([motion-detect]=1 [wake-command]=1)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(motion-reflex estop threshold sensor-fault llm-estop wake-command motion-detect)
tmp=$(mktemp -d)
ollama_pid=
stt_pid=
trap 'rm -rf "$tmp"; [ -z "$ollama_pid" ] || kill "$ollama_pid"; [ -z "$stt_pid" ] || kill "$stt_pid"' EXIT
go build -o "$tmp/edgeagent" ./cmd/edgeagent
for name in "${names[@]}"; do
	dur=${seconds[$name]:?unknown scenario $name}
	# The board runs from a copy, so its data_dir (the store) is a fresh one
	# in $tmp: state kept in a store (an e-stop latch, tool history) is not
	# in a recording and would make the replay differ.
	mkdir "$tmp/$name"
	cp "testdata/scenarios/$name.yaml" "$tmp/$name/"
	if [ "$name" = wake-command ] && [ -z "$stt_pid" ]; then
		# Speech-to-text: a Wyoming server with a fixed transcript stands in
		# for Whisper (the wake word is the mic's own detector).
		go build -o "$tmp/fakestt" ./scripts/fakestt
		"$tmp/fakestt" "turn on the headlight" >"$tmp/stt.addr" &
		stt_pid=$!
		for _ in $(seq 50); do [ -s "$tmp/stt.addr" ] && break; sleep 0.1; done
		sed -i "s|STT_ADDRESS|$(head -1 "$tmp/stt.addr")|; s|REPO/|$PWD/|g" "$tmp/$name/$name.yaml"
	fi
	if [ "$name" = llm-estop ] && [ -z "$ollama_pid" ]; then
		# A real Ollama with a slow random-weight model, so that the e-stop
		# arrives while the call is in flight (its answer is never used).
		eval "$(EMBD=512 LAYERS=8 ../shared/tools/ollama/serve.sh)"
		ollama_pid=$OLLAMA_SERVE_PID
	fi
	out="testdata/scenarios/$name.mcap"
	rm -f "$out"
	echo "recording $name for ${dur}s"
	rc=0
	timeout -s INT "$dur" "$tmp/edgeagent" run --board "$tmp/$name/$name.yaml" --record "$out" --log-level warn || rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 124 ] || { echo "run failed: $rc" >&2; exit 1; }
	"$tmp/edgeagent" recording info "$out" | sed -n 1,4p
	modes=(recorded)
	[ -z "${detect[$name]:-}" ] || modes+=(detectors)
	for mode in "${modes[@]}"; do
		for i in $(seq 10); do
			"$tmp/edgeagent" replay "$out" --as-fast-as-possible --check --detections "$mode" >/dev/null ||
				{ echo "$name: replay $i of 10 (--detections $mode) diverged:" >&2; "$tmp/edgeagent" replay "$out" --as-fast-as-possible --check --detections "$mode"; exit 1; }
		done
		echo "$name: 10 of 10 replays identical (--detections $mode)"
	done
done
