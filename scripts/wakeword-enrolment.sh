#!/usr/bin/env bash
# wakeword-enrolment.sh — does enrolment help beside the shipped head?
# A household enrols "hey robot" once per person: 3 takes from each of the
# 7 held-out voices (flite kal, kal16, awb, rms, slt; festival ked,
# slt-hts) go into one template set. The live detector (`wakeword test
# --labels`) then hears 12 other takes per voice (84 clips) and the
# issue's 9 confusables said by each voice (63 clips), with the head
# alone and with head + templates:
#
#   scripts/wakeword-enrolment.sh [DIR]     # default /tmp/wakeword-enrolment
#
# Each clip: 2 s of room (a hiss 54 dB under the speech's peak), the
# utterance, 1 s after. Needs flite, festival, sox.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/wakeword-enrolment}
bin=/tmp/edgeagent-enrolment
go build -o "$bin" ./cmd/edgeagent
mkdir -p "$dir/takes" "$dir/test" "$dir/conf"
voices=(flite:kal flite:kal16 flite:awb flite:rms flite:slt festival:ked_diphone festival:cmu_us_slt_arctic_hts)
conf=("hey robin" "hello robot" "hey rowboat" "they rob it" "hey bobby" "a robot" "hey rabbit" "hey roberto" "okay rover")

# say ENGINE:VOICE I TEXT OUT: delivery I sets the pace (stretch 0.8–1.29)
# and the pitch (85–114 % of the voice's).
say() {
  local e=${1%%:*} v=${1#*:} i=$2 st f0 base=105
  st=$(awk -v i="$i" 'BEGIN { printf "%.2f", 0.8 + (i * 37 % 50) / 100 }')
  [ "$v" = slt ] && base=170
  f0=$((base * (85 + i * 13 % 30) / 100))
  case $e in
  flite) flite -voice "$v" --setf duration_stretch="$st" --setf int_f0_target_mean="$f0" -t "$3" -o "$4.raw.wav" ;;
  festival) echo "$3" | text2wave -F 16000 -eval "(voice_$v)" -eval "(Parameter.set 'Duration_Stretch $st)" -o "$4.raw.wav" ;;
  esac
  sox "$4.raw.wav" -r 16000 -c 1 -b 16 "$4.s.wav" gain -6 silence 1 0.02 -50d reverse silence 1 0.02 -50d reverse pad 2 1 gain -n -12
  sox -n -r 16000 -c 1 -b 16 "$4.n.wav" synth "$(soxi -D "$4.s.wav")" whitenoise gain -n -66
  sox -m -v 1 "$4.s.wav" -v 1 "$4.n.wav" "$4"
  rm -f "$4.raw.wav" "$4.s.wav" "$4.n.wav"
}

if [ ! -s "$dir/conf.tsv" ]; then
  : > "$dir/pos.tsv"
  : > "$dir/conf.tsv.part"
  for v in "${voices[@]}"; do
    n=${v//:/_}
    for i in $(seq 0 11); do
      say "$v" "$i" "hey robot" "$dir/test/$n-$i.wav"
      printf '%s\t1\n' "$dir/test/$n-$i.wav" >> "$dir/pos.tsv"
    done
    for j in "${!conf[@]}"; do
      say "$v" $((50 + j)) "${conf[j]}" "$dir/conf/$n-$j.wav"
      printf '%s\t0\n' "$dir/conf/$n-$j.wav" >> "$dir/conf.tsv.part"
    done
  done
  mv "$dir/conf.tsv.part" "$dir/conf.tsv"
fi
if [ ! -d "$dir/templates/hey_robot" ]; then
  # Takes at the voice's own pace (stretch 1.0), three pitches: enrol
  # refuses takes whose lengths differ much.
  for v in "${voices[@]}"; do
    for i in 0 1 2; do say "$v" $((110 + 50 * i)) "hey robot" "$dir/takes/${v//:/_}-$i.wav"; done
  done
  "$bin" wakeword enroll --name hey_robot --templates "$dir/templates" "$dir"/takes/*.wav
fi
for mode in head head+templates; do
  args=(--model builtin)
  [ $mode = head+templates ] && args+=(--templates "$dir/templates")
  for set in pos conf; do
    printf '%-15s %-5s ' $mode $set
    nice -n 10 "$bin" wakeword test "${args[@]}" --labels "$dir/$set.tsv" | tail -1
  done
done
