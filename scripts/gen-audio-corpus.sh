#!/usr/bin/env bash
# gen-audio-corpus.sh — the small speech set the wake-word unit tests use.
#
#   scripts/gen-audio-corpus.sh small [DIR]   # default sensors/mic/testdata/speech
#
# Needs espeak-ng, flite and sox (Debian: apt-get install -y espeak-ng flite sox).
# The trained head's evaluation on flite's and festival's voices is
# `edgeagent wakeword eval` (scripts/wakeword-eval.sh); its training corpus is
# made by `edgeagent wakeword train` itself.
#
# The phrase "hey robot" in a few espeak-ng voices and one flite voice, and
# confusable and unrelated phrases. The voice named "enrolled" keeps the name
# of the clips from when the detector learnt a voice by example.
#
# The output is deterministic for a given espeak-ng/flite/sox version. The unit
# tests use the committed set, never a fresh one.
set -euo pipefail

PHRASE="hey robot"
ENROLLED="en-us+m3"

need() { command -v "$1" >/dev/null || { echo "gen-audio-corpus: $1 not found (apt-get install -y espeak-ng flite sox)" >&2; exit 1; }; }
need espeak-ng
need sox
need flite

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# say VOICE SPEED PITCH TEXT OUT: 16 kHz mono s16 speech, silence trimmed at
# both ends (-50 dB) so that a clip is the speech alone.
say() {
  espeak-ng -v "$1" -s "$2" -p "$3" -w "$TMP/raw.wav" "$4"
  # Peak-normalised to -6 dBFS before resampling: espeak-ng writes close to
  # full scale, and the resampler's overshoot would clip.
  sox -D "$TMP/raw.wav" -c 1 -b 16 "$5" gain -n -6 rate 16000 \
    silence 1 0.01 -50d reverse silence 1 0.01 -50d reverse
}

small() {
  local dir=${1:-sensors/mic/testdata/speech}
  mkdir -p "$dir/pos" "$dir/neg"
  say "$ENROLLED" 158 40 "$PHRASE" "$dir/pos/enrolled_a.wav"
  say "$ENROLLED" 173 60 "$PHRASE" "$dir/pos/enrolled_b.wav"
  say en-gb+f2 160 50 "$PHRASE" "$dir/pos/unseen_gb_f2.wav"
  say en-gb-scotland+m1 165 50 "$PHRASE" "$dir/pos/unseen_scotland_m1.wav"
  # The phrase by a voice the trained head never hears (flite's awb: a
  # recording of a real speaker, not espeak-ng).
  flite -voice awb -t "$PHRASE" -o "$TMP/raw.wav"
  sox -D "$TMP/raw.wav" -c 1 -b 16 "$dir/pos/flite_awb.wav" gain -n -6 rate 16000 \
    silence 1 0.01 -50d reverse silence 1 0.01 -50d reverse
  # Negatives in the enrolled voice: confusable and unrelated.
  say "$ENROLLED" 165 50 "hey robin" "$dir/neg/hey_robin.wav"
  say "$ENROLLED" 165 50 "hey bobby" "$dir/neg/hey_bobby.wav"
  say "$ENROLLED" 165 50 "they rob it" "$dir/neg/they_rob_it.wav"
  say "$ENROLLED" 165 50 "hello there" "$dir/neg/hello_there.wav"
  say "$ENROLLED" 165 50 "turn on the headlight" "$dir/neg/turn_on_the_headlight.wav"
  say "$ENROLLED" 165 50 "what time is it" "$dir/neg/what_time_is_it.wav"
  say en-gb+f2 165 50 "open the garage door" "$dir/neg/open_the_garage_door.wav"
  du -sh "$dir"
}

case ${1:-} in
  small) small "${2:-}" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
