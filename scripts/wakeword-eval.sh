#!/usr/bin/env bash
# wakeword-eval.sh — measure a wake-word head on voices it was never trained
# on (flite's five, festival's two), with the live detector:
#
#   scripts/wakeword-eval.sh [MODEL] [MINUTES] [OUT.json]
#
# MODEL: a head file or builtin (default). MINUTES: other speech per engine
# (flite, festival, espeak-ng validation speakers) and condition (clean, pink
# 10 dB), for false accepts per hour (default 10: 1 h in all). Runs under
# nice; synthesised speech is cached in ~/.cache/edgeagent/wakeword.
#
# Needs flite and festival (apt-get install -y espeak-ng flite festival
# festvox-kdlpc16k festvox-us-slt-hts).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-builtin}
minutes=${2:-10}
out=${3:-}
go build -o /tmp/edgeagent-eval ./cmd/edgeagent
args=(wakeword eval --model "$model" --minutes "$minutes")
[[ -n $out ]] && args+=(--out "$out")
exec nice -n 10 /tmp/edgeagent-eval "${args[@]}"
