#!/usr/bin/env bash
# wakeword-train.sh — train the shipped "hey robot" head over several seeds
# and evaluate each on flite's and festival's voices (never trained on):
#
#   scripts/wakeword-train.sh [SEEDS] [RECIPE-JSON]   # default seeds "1 2 3"
#
# Writes /tmp/wakeword/seed-N/{hey_robot.eawh,report.json,eval.json,eval.md}.
# The shipped head is seed 1 with the default recipe, copied to
# sensors/mic/wakeword/models/hey_robot.eawh. Runs under nice.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=${1:-1 2 3}
recipe=${2:-}
go build -o /tmp/edgeagent-train ./cmd/edgeagent
for s in $seeds; do
  d=/tmp/wakeword/seed-$s
  mkdir -p "$d"
  args=(wakeword train --phrase "hey robot" --seed "$s" --out "$d")
  [[ -n $recipe ]] && args+=(--recipe "$recipe")
  /usr/bin/time -v nice -n 10 /tmp/edgeagent-train "${args[@]}" 2> "$d/train.log"
  nice -n 10 /tmp/edgeagent-train wakeword eval --model "$d/hey_robot.eawh" --out "$d/eval.json" > "$d/eval.md"
  cat "$d/eval.md"
done
