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
*)
  echo "usage: $0 fixtures | bench [SECONDS]" >&2
  exit 2
  ;;
esac
