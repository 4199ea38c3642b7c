#!/usr/bin/env bash
# Smoke test of the cross-built binaries under qemu-user (Debian package
# qemu-user-static): each starts the sim board, reaches ready, publishes
# "online" on the embedded broker, answers agent.status over MQTT and exits 0
# on SIGTERM. Prints start-to-ready and RSS per target (emulated numbers are
# labelled as such). CI calls this; it fails if a cross build is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v qemu-aarch64-static >/dev/null || ! command -v qemu-arm-static >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static >/dev/null
  else
    echo "qemu-user-static is not installed (sudo apt-get install qemu-user-static)" >&2
    exit 1
  fi
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
EDGEAGENT_SMOKE_QEMU=1 go test -count=1 -run '^TestSmoke$' -v ./cmd/edgeagent 2>&1 | tee "$log"
for target in host arm64 armv7; do
  grep -q -- "--- PASS: TestSmoke/$target " "$log" || { echo "smoke test: $target did not pass" >&2; exit 1; }
done

# The speech frontend's arm kernels (NEON assembly) under qemu: on arm64 the
# kernel against the portable one and the features and embeddings against
# the onnxruntime fixtures (the same test as on amd64); on armv7 the kernel
# against the portable one. A few seconds of CPU.
bin=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$bin"' EXIT
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$bin/f32" ./internal/f32
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$bin/speechembed" ./sensors/mic/speechembed
GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 go test -c -o "$bin/f32.arm" ./internal/f32
(cd internal/f32 && qemu-aarch64-static "$bin/f32" -test.run 'TestAsmMatchesGeneric|TestConvRowsIndependentOfBlocking' -test.v) | grep -E '^(--- |ok|PASS|FAIL|    f32_test)'
(cd internal/f32 && qemu-arm-static "$bin/f32.arm" -test.run 'TestAsmMatchesGeneric|TestConvRowsIndependentOfBlocking' -test.v) | grep -E '^(--- |ok|PASS|FAIL|    f32_test)'
(cd sensors/mic/speechembed && qemu-aarch64-static "$bin/speechembed" -test.run 'TestMatchesOnnxruntime' -test.v) | grep -E '^(--- |ok|PASS|FAIL|    reference_test)'
