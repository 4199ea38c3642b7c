#!/usr/bin/env bash
# Runs every fuzz target of the decoders the outside world reaches for a
# short fixed time each (CI: 10 s). The seeded corpora are committed under
# each package's testdata/fuzz/; a crasher found here is saved there by go
# test and becomes a regression test on the next plain `go test`.
#
#   scripts/fuzz.sh [fuzztime]      e.g. scripts/fuzz.sh 1m
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
targets=(
  "FuzzDecodeCommand ./mqtt"
  "FuzzAdminRequest ./mqtt"
  "FuzzEstopPayload ./mqtt"
  "FuzzCheckKeys ./internal/strictjson"
  "FuzzParse ./board"
  "FuzzReadEvent ./sensors/mic/wyoming"
  "FuzzMJPEGReader ./sensors/camera"
  "FuzzY4MReader ./sensors/camera"
  "FuzzWAVReader ./sensors/mic/audio"
  "FuzzCodec ./sensors/i2c/generic"
  "FuzzReadHead ./sensors/mic/wakeword"
  "FuzzParse ./sensors/mic/speechembed/internal/onnx"
)
# inputs counts the saved inputs of a target (its folder may not exist).
inputs() { if [ -d "$1" ]; then ls "$1" | wc -l; else echo 0; fi; }
for t in "${targets[@]}"; do
  read -r name pkg <<<"$t"
  echo "-- $name ($pkg, $fuzztime)"
  corpus="$pkg/testdata/fuzz/$name"
  before=$(inputs "$corpus")
  for try in 1 2; do
    if out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
      grep -v '^fuzz: elapsed' <<<"$out" || true
      # go test passes when the name matches no target: a renamed target
      # would otherwise drop out of CI unseen.
      if grep -q 'no fuzz tests to fuzz' <<<"$out"; then
        echo "FAIL: $pkg has no fuzz target $name (renamed? update this list)"
        exit 1
      fi
      break
    fi
    grep -v '^fuzz: elapsed' <<<"$out" || true
    # Go's fuzzing engine can end a run with "context deadline exceeded"
    # and no failing input when a worker answers late at the deadline (a
    # loaded machine): only a failure that wrote an input is a crasher.
    if [ "$(inputs "$corpus")" != "$before" ] || [ "$try" = 2 ]; then
      echo "FAIL: $name in $pkg (the crasher is in $corpus/)"
      exit 1
    fi
    echo "-- $name: the engine failed without a failing input; once more"
  done
done
echo "fuzz: ${#targets[@]} passed, 0 failed"
