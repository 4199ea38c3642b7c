#!/usr/bin/env bash
# gen-audio-corpus.sh — synthetic speech corpus for the wake-word detector.
#
#   scripts/gen-audio-corpus.sh small [DIR]          # the committed unit-test set (default
#                                                    # sensors/mic/testdata/speech)
#   scripts/gen-audio-corpus.sh bench DIR [MINUTES]  # benchmark set, MINUTES of negatives (default 60)
#
# Needs espeak-ng, flite and sox (Debian: apt-get install -y espeak-ng flite sox).
# The trained head's evaluation on flite's and festival's voices is
# `edgeagent wakeword eval` (scripts/wakeword-eval.sh).
#
# Everything is speech synthesis: the wake phrase "hey robot" in one voice
# (en-us+m3, named "enrolled" from when the detector learnt a voice by
# example) at several speeds and pitches, the same phrase in other voices,
# confusable phrases ("hey robin", "a robot"),
# unrelated speech, and white/pink noise mixed at 20, 10 and 5 dB SNR.
# Synthetic speech is far more consistent than a person, so numbers measured
# on it are an upper bound on what a real speaker gets (see docs/bench/wake-word.md).
#
# The output is deterministic for a given espeak-ng/sox version (fixed seeds,
# sox -R). The unit tests use the committed small set, never a fresh one.
set -euo pipefail

PHRASE="hey robot"
ENROLLED="en-us+m3"
UNSEEN=(en-gb+f2 en-gb-scotland+m1 en-029+f4 en-us-nyc+m7 en-gb-x-rp+f1 en+m5)
CONFUSABLE=("hey robin" "hey bobby" "a robot" "hey rowboat" "hey rabbit" "they rob it" "hey Roberto" "hello robot" "okay Rover")
SENTENCES=(
  "turn on the headlight" "what time is it" "move forward two meters" "stop right there"
  "the battery is almost empty" "please bring me the red cup" "is anybody in the kitchen"
  "open the garage door" "it is going to rain this afternoon" "play some music in the living room"
  "how warm is it outside" "the package arrived this morning" "can you hear me now"
  "set a timer for ten minutes" "I left my keys on the table" "the cat is sleeping on the sofa"
  "we need more milk and bread" "call me when you get home" "the meeting starts at nine"
  "look at the camera" "follow the black line on the floor" "turn left at the next corner"
  "this is a test of the speaker" "good morning everybody" "the door is locked"
  "where did I put my phone" "lower the volume please" "the garden needs water"
  "check the temperature in the basement" "go back to the charging station"
  "hello there how are you" "that robot over there is new" "rob bought a boat yesterday"
  "every robot needs a charger" "the road was busy today" "he robbed the bank in a movie"
)
WORDS=(the a of to and in is it you that he was for on are with as I his they be at one
  have this from or had by word but what some we can out other were all there when up use
  your how said an each she which do their time if will way about many then them write would
  like so these her long make thing see him two has look more day could go come did number
  sound no most people my over know water than call first who may down side been now find
  any new work part take get place made live where after back little only round man year
  came show every good me give our under name very through just form sentence great think
  say help low line differ turn cause much mean before move right boy old too same tell does
  set three want air well also play small end put home read hand port large spell add even
  land here must big high such follow act why ask men change went light kind off need house
  picture try us again animal point mother world near build self earth father head stand own
  page should country found answer school grow study still learn plant cover food sun four
  between state keep eye never last let thought city tree cross farm hard start might story
  saw far sea draw left late run while press close night real life few north open seem
  together next white children begin got walk example ease paper group always music those
  both mark often letter until mile river car feet care second book carry took science eat
  room friend began idea fish mountain stop once base hear horse cut sure watch color face
  wood main enough plain girl usual young ready above ever red list though feel talk bird
  soon body dog family direct pose leave song measure door product black short numeral class
  wind question happen complete ship area half rock order fire south problem piece told knew
  pass since top whole king space heard best hour better true during hundred five remember
  step early hold west ground interest reach fast verb sing listen six table travel less)
VOICES_ALL=("$ENROLLED" "${UNSEEN[@]}" en-us+f3 en-gb+m2 en-gb-x-gbclan+m4 en-us+klatt)

need() { command -v "$1" >/dev/null || { echo "gen-audio-corpus: $1 not found (apt-get install -y espeak-ng sox)" >&2; exit 1; }; }
need espeak-ng
need sox
need flite

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# say VOICE SPEED PITCH TEXT OUT: 16 kHz mono s16 speech, silence trimmed at
# both ends (-50 dB) so that SNRs and phrase boundaries are measured on speech.
say() {
  espeak-ng -v "$1" -s "$2" -p "$3" -w "$TMP/raw.wav" "$4"
  # Peak-normalised to -6 dBFS before resampling: espeak-ng writes close to
  # full scale, and the resampler's overshoot would clip.
  sox -D "$TMP/raw.wav" -c 1 -b 16 "$5" gain -n -6 rate 16000 \
    silence 1 0.01 -50d reverse silence 1 0.01 -50d reverse
}

rms() { sox "$1" -n stat 2>&1 | awk '/RMS +amplitude/ {print $3}'; }
dur() { soxi -D "$1"; }

# noise COLOUR SECONDS SEED OUT: a different stretch of a fixed five-minute
# noise recording for each seed, so clips do not share one noise sample and
# the corpus is still the same on every run.
noise() {
  local bank="$TMP/bank_$1.wav"
  [[ -f $bank ]] || sox -R -D -n -r 16000 -c 1 -b 16 "$bank" synth 300 "${1}noise" vol 0.3
  local off
  off=$(awk -v s="$3" -v d="$2" 'BEGIN { m = 300 - d - 1; if (m < 1) m = 1; printf "%.3f", (s * 7.31) % m }')
  sox -D "$bank" "$4" trim "$off" "$2"
}

# mix CLIP REF NOISE SNR OUT: clip plus noise scaled so that RMS(REF)/RMS(noise)
# is SNR dB. REF is the speech alone (no pauses or padding), so the SNR is
# that of the speech itself. sox -m with explicit -v does not rescale.
mix() {
  local rs rn g
  rs=$(rms "$2"); rn=$(rms "$3")
  g=$(awk -v s="$rs" -v n="$rn" -v snr="$4" 'BEGIN { printf "%.6f", s / (n * 10^(snr/20)) }')
  sox -D -m -v 1 "$1" -v "$g" "$3" -b 16 "$5"
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

bench() {
  local dir=$1 minutes=${2:-60}
  mkdir -p "$dir/pos" "$dir/neg"

  RANDOM=4242
  local conds=(clean:clean white:20 pink:20 white:10 pink:10 white:5 pink:5)
  local speeds=(140 155 170 185 200) pitches=(30 40 55 65 75)

  # Positives: each clip is 3 s of lead-in (the detector has been listening
  # to the background before anyone speaks, as it would on a robot), the
  # phrase, then 1 s of tail, with the whole clip mixed at the condition's
  # SNR. The enrolled voice gets more variations than each unseen voice, as
  # it is the case the detector is built for. manifest.tsv records where
  # the phrase is, for matching detections and measuring latency.
  local m="$dir/pos/manifest.tsv" n=0 v group s p c colour snr f reps
  printf 'file\tvoice\tgroup\tnoise\tsnr_db\tphrase_start_s\tphrase_end_s\n' >"$m"
  for v in "$ENROLLED" "${UNSEEN[@]}"; do
    group=unseen reps=6
    [[ $v == "$ENROLLED" ]] && group=enrolled reps=20
    for ((i = 0; i < reps; i++)); do
      s=${speeds[RANDOM % 5]}; p=${pitches[RANDOM % 5]}
      say "$v" "$s" "$p" "$PHRASE" "$TMP/ph.wav"
      local d; d=$(dur "$TMP/ph.wav")
      sox -D "$TMP/ph.wav" "$TMP/padded.wav" pad 3 1
      for c in "${conds[@]}"; do
        colour=${c%%:*}; snr=${c##*:}
        n=$((n + 1)); f=$(printf 'pos/%04d.wav' "$n")
        if [[ $colour == clean ]]; then
          cp "$TMP/padded.wav" "$dir/$f"
        else
          noise "$colour" "$(dur "$TMP/padded.wav")" "$n" "$TMP/noise.wav"
          mix "$TMP/padded.wav" "$TMP/ph.wav" "$TMP/noise.wav" "$snr" "$dir/$f"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\n' "$f" "$v" "$group" "$colour" "$snr" 3 "$(awk -v d="$d" 'BEGIN{print 3+d}')" >>"$m"
      done
    done
  done

  # Negatives: one-minute files of speech that is not the wake phrase —
  # unrelated sentences, word salad and confusable phrases, in every voice
  # including the enrolled one (the hardest case), with pauses between
  # utterances — each file under one noise condition.
  local nm="$dir/neg/manifest.tsv"
  printf 'file\tnoise\tsnr_db\tseconds\n' >"$nm"
  for ((k = 1; k <= minutes; k++)); do
    local parts=() total=0 u=0 text
    rm -f "$TMP"/u_*.wav "$TMP/transcript.tsv"
    while awk -v t="$total" 'BEGIN { exit !(t < 60) }'; do
      u=$((u + 1))
      case $((RANDOM % 10)) in
        0 | 1) text=${CONFUSABLE[RANDOM % ${#CONFUSABLE[@]}]} ;;
        2 | 3 | 4) text=""; for ((w = 0; w < 4 + RANDOM % 8; w++)); do text+="${WORDS[RANDOM % ${#WORDS[@]}]} "; done ;;
        *) text=${SENTENCES[RANDOM % ${#SENTENCES[@]}]} ;;
      esac
      v=${VOICES_ALL[RANDOM % ${#VOICES_ALL[@]}]}
      say "$v" "${speeds[RANDOM % 5]}" "${pitches[RANDOM % 5]}" "$text" "$TMP/u_$u.wav"
      parts+=("$TMP/u_$u.wav")
      printf '%.2f\t%s\t%s\n' "$total" "$v" "$text" >>"$TMP/transcript.tsv"
      local gap; gap=$(awk -v r=$((RANDOM % 1200)) 'BEGIN { printf "%.2f", 0.3 + r / 1000 }')
      sox -D -n -r 16000 -c 1 -b 16 "$TMP/g_$u.wav" trim 0 "$gap"
      parts+=("$TMP/g_$u.wav")
      total=$(awk -v t="$total" -v a="$(dur "$TMP/u_$u.wav")" -v g="$gap" 'BEGIN { print t + a + g }')
    done
    sox -D "${parts[@]}" "$TMP/seg.wav"
    # Speech-only RMS for the SNR: the utterances without the gaps.
    local speech=() q
    for q in "${parts[@]}"; do [[ $q == */u_* ]] && speech+=("$q"); done
    sox -D "${speech[@]}" "$TMP/speech_only.wav"
    c=${conds[(k - 1) % ${#conds[@]}]}; colour=${c%%:*}; snr=${c##*:}
    f=$(printf 'neg/%03d.wav' "$k")
    if [[ $colour == clean ]]; then
      cp "$TMP/seg.wav" "$dir/$f"
    else
      noise "$colour" "$(dur "$TMP/seg.wav")" "$((1000 + k))" "$TMP/noise.wav"
      mix "$TMP/seg.wav" "$TMP/speech_only.wav" "$TMP/noise.wav" "$snr" "$dir/$f"
    fi
    printf '%s\t%s\t%s\t%s\n' "$f" "$colour" "$snr" "$(dur "$dir/$f")" >>"$nm"
    # What was said when (start s, voice, text), to see what a false accept was.
    cp "$TMP/transcript.tsv" "$dir/${f%.wav}.tsv"
    rm -f "$TMP"/g_*.wav
  done
  du -sh "$dir"
}

case ${1:-} in
  small) small "${2:-}" ;;
  bench) [[ -n ${2:-} ]] || { echo "usage: $0 bench DIR [MINUTES]" >&2; exit 2; }; bench "$2" "${3:-60}" ;;
  *) sed -n '2,13p' "$0" >&2; exit 2 ;;
esac
