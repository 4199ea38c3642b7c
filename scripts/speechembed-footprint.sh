#!/usr/bin/env bash
# What the speech frontend (sensors/mic/speechembed) adds to a static,
# stripped binary and to a process's RSS after loading the weights and
# streaming 10 s of audio: scripts/speechembed/footprint built with and
# without it (-tags baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for v in baseline frontend; do
  tags=; [ "$v" = baseline ] && tags=baseline
  CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -tags "$tags" -o "$dir/$v" ./scripts/speechembed/footprint
  echo "$v binary: $(stat -c %s "$dir/$v") bytes"
  "$dir/$v"
done
