#!/usr/bin/env bash
# wakeword-fa.sh — false accepts per hour of a wake-word head on long
# stretches of other speech from every engine, clean and in 10 dB pink
# noise, with the live detector (`edgeagent wakeword test --labels`):
#
#   scripts/wakeword-fa.sh [MODEL] [MINUTES]
#
# MODEL: a head file or builtin (default). MINUTES of speech per engine
# (default 30): espeak-ng, flite, festival and, when fetched
# (scripts/fetch-gnuspeech.sh), GnuSpeech; each is heard clean and in
# pink noise 10 dB under the speech, so 30 minutes and four engines make
# 2 h per condition.
#
# The text is Debian's licence texts (/usr/share/common-licenses): about
# 570 distinct sentences of ordinary English that say neither "hey" nor
# "robot"; each engine reads them from its own starting point, voice by
# voice in turn. The long WAV files are cached in $EDGEAGENT_CACHE
# (default ~/.cache/edgeagent)/wakeword/fa-set: delete it to rebuild.
# Runs under nice. Needs espeak-ng, flite, festival (apt-get install -y
# espeak-ng flite festival festvox-kdlpc16k festvox-us-slt-hts), sox;
# node for GnuSpeech.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-builtin}
minutes=${2:-30}
cache=${EDGEAGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeagent}
dir=$cache/wakeword/fa-set
mkdir -p "$dir"
for t in espeak-ng flite text2wave sox; do
  command -v $t >/dev/null || { echo "needs $t (see the script's header)" >&2; exit 1; }
done

sentences=$dir/sentences.txt
if [ ! -s "$sentences" ]; then
  find /usr/share/common-licenses -maxdepth 1 -type f | sort | xargs cat |
    tr '\n' ' ' | tr '.;:!?' '\n\n\n\n\n' | tr 'A-Z' 'a-z' | sed "s/[^a-z' ]/ /g" |
    awk 'NF >= 3 && NF <= 25 && !/(^| )(hey|robot|robots)( |$)/ && !seen[$0]++ { $1 = $1; print }' > "$sentences"
fi
nsent=$(wc -l < "$sentences")

engines=(espeak-ng flite festival)
gnu=""
if command -v node >/dev/null && gnu=$(scripts/fetch-gnuspeech.sh 2>/dev/null); then
  engines+=(gnuspeech)
else
  echo "GnuSpeech left out (needs node and scripts/fetch-gnuspeech.sh)" >&2
fi

espeak_voices=(en-us+m1 en-gb+f2 en-gb-scotland+m3 en-us+f4 en-029+m7 en+klatt en-gb-x-rp+Andy en-us+steph)
flite_voices=(kal kal16 awb rms slt)
festival_voices=(ked_diphone cmu_us_slt_arctic_hts)
gnu_voices=("male 17.5" "female 15" "male 16.3" "female 14.2" "large_child 13" "male 18.5")

# utterance ENGINE I SENTENCE OUT.wav: say it (GnuSpeech: queue it).
utterance() {
  local e=$1 i=$2 text=$3 out=$4 raw=$4.raw.wav
  [ -s "$out" ] || [ -s "$raw" ] && return # said before the script was stopped
  case $e in
  espeak-ng) espeak-ng -v "${espeak_voices[i % ${#espeak_voices[@]}]}" -s $((140 + i % 5 * 10)) -w "$raw" "$text" ;;
  flite) flite -voice "${flite_voices[i % ${#flite_voices[@]}]}" -t "$text" -o "$raw" ;;
  festival) # one festival process says them all, voice by voice 50 sentences at a time: loading one costs seconds
    local v=${festival_voices[i / 50 % ${#festival_voices[@]}]}
    [ "$v" = "$fest_voice" ] || printf '(voice_%s)\n' "$v" >> "$dir/festival.scm"
    fest_voice=$v
    printf '(utt.save.wave (utt.synth (Utterance Text "%s")) "%s" (quote riff))\n' "$text" "$raw" >> "$dir/festival.scm" ;;
  gnuspeech)
    read -r v len <<< "${gnu_voices[i % ${#gnu_voices[@]}]}"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$raw" "$v" "$len" $((i % 7 - 3)) "1.$((i % 3))" $((i % 4)) "$text" >> "$dir/gnu.tsv"
    return ;;
  esac
}

# 16 kHz mono, silence trimmed at both ends, as the trainer trims.
trim() { [ -s "$2" ] && return; sox -G "$1" -r 16000 -c 1 -b 16 "$2" silence 1 0.02 -50d reverse silence 1 0.02 -50d reverse; rm -f "$1"; }

for k in "${!engines[@]}"; do
  e=${engines[k]}
  [ -s "$dir/clean-$e.wav" ] && continue
  u=$dir/utt-$e
  rm -f "$dir/gnu.tsv" "$dir/festival.scm"
  fest_voice=""
  mkdir -p "$u"
  echo "synthesising $minutes min of $e" >&2
  # Enough sentences: about 12 a minute at 5 s each; extra are cut below.
  n=$((minutes * 14))
  for ((i = 0; i < n; i++)); do
    s=$(sed -n "$(((k * nsent / ${#engines[@]} + i) % nsent + 1))p" "$sentences")
    utterance "$e" "$i" "$s" "$(printf '%s/%05d.wav' "$u" "$i")"
  done
  if [ "$e" = festival ] && [ -s "$dir/festival.scm" ]; then
    festival -b "$dir/festival.scm"
  fi
  if [ "$e" = gnuspeech ] && [ -s "$dir/gnu.tsv" ]; then
    node scripts/gnuspeech/say.mjs "$gnu" < "$dir/gnu.tsv" | grep -v '^ok$' && { echo "GnuSpeech failed" >&2; exit 1; }
  fi
  total=0
  files=()
  for ((i = 0; i < n && total < minutes * 60; i++)); do
    f=$(printf '%s/%05d.wav' "$u" "$i")
    trim "$f.raw.wav" "$f"
    files+=("$f")
    total=$(soxi -D "$f" | awk -v t="$total" '{ printf "%d", t + $1 + 0.5 }')
  done
  # The speech alone, for its level; then with pauses of 0.2–0.6 s, 2 s of
  # quiet first (the VAD learns the floor from it), peak at -12 dBFS.
  sox "${files[@]}" "$dir/speech-$e.wav"
  padded=()
  for j in "${!files[@]}"; do
    sox "${files[j]}" "${files[j]%.wav}.p.wav" pad 0 "0.$((2 + j % 5))"
    padded+=("${files[j]%.wav}.p.wav")
  done
  sox "${padded[@]}" "$dir/talk-$e.wav" pad 2 0 gain -n -12
  gain=$(sox "$dir/speech-$e.wav" -n stat 2>&1 | awk '/RMS +amplitude/ { r = $3 } /Maximum amplitude/ { m = $3 } END { print 20 * log(10 ^ (-12 / 20) / m) / log(10), r }')
  read -r g rms <<< "$gain"
  dur=$(soxi -D "$dir/talk-$e.wav")
  srms=$(awk -v r="$rms" -v g="$g" 'BEGIN { print r * 10 ^ (g / 20) }')
  # clean: a microphone's hiss 50 dB under the speech; pink: 10 dB under.
  for cond in clean:50:whitenoise pink10:10:pinknoise; do
    IFS=: read -r name snr colour <<< "$cond"
    sox -n -r 16000 -c 1 -b 16 "$dir/noise.wav" synth "$dur" "$colour" gain -n -6
    nrms=$(sox "$dir/noise.wav" -n stat 2>&1 | awk '/RMS +amplitude/ { print $3 }')
    v=$(awk -v s="$srms" -v n="$nrms" -v snr="$snr" 'BEGIN { print s / n / 10 ^ (snr / 20) }')
    sox -m -v 1 "$dir/talk-$e.wav" -v "$v" "$dir/noise.wav" "$dir/$name-$e.wav"
  done
  rm -rf "$u" "$dir/noise.wav" "$dir/speech-$e.wav" "$dir/talk-$e.wav" "$dir/gnu.tsv" "$dir/festival.scm"
done

go build -o /tmp/edgeagent-fa ./cmd/edgeagent
# One detector process per condition, side by side (each runs on one core).
for cond in clean pink10; do
  for e in "${engines[@]}"; do printf '%s-%s.wav\t0\n' $cond "$e"; done > "$dir/labels-$cond.tsv"
  nice -n 10 /tmp/edgeagent-fa wakeword test --model "$model" --labels "$dir/labels-$cond.tsv" > "$dir/result-$cond.txt" &
done
wait
for cond in clean pink10; do
  grep -v '^ *[0-9.]* s \|^#' "$dir/result-$cond.txt"
done
cat "$dir"/result-{clean,pink10}.txt | awk '/ false accept\(s\) in / { n += $(NF-9); h += $(NF-5) }
  END { printf "all: %d false accept(s) in %.2f h = %.2f per hour\n", n, h, n / h }'
