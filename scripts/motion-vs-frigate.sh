#!/usr/bin/env bash
# Runs edgeagent's motion detector and Frigate's ImprovedMotionDetector
# (Frigate's own code, default settings) side by side in one process over
# the same decoded frames, median of ROUNDS back-to-back rounds per clip,
# timed with the process's CPU time (this machine is shared; WALL=1 times
# with the wall clock instead), and prints the Markdown table that
# docs/bench/camera-and-motion.md shows.
#
#   scripts/motion-vs-frigate.sh FRIGATE [ROUNDS]
#
# FRIGATE is a Frigate checkout or a bare clone of it (its HEAD is used);
# nothing of it is copied into this repository. Needs Go, the shared
# footage (../shared/data/video), Debian's python3-opencv and python3-scipy,
# and for two more clips (Megamind, an animation, and the full-size vtest)
# Debian's opencv-doc. The clips made from the shared footage (light
# switches, a brightness swing, objects with known boxes) are written by
# the motion package's TestWriteClips.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
frigate=${1:?usage: $0 FRIGATE_CHECKOUT_OR_CLONE [ROUNDS]}
rounds=${2:-9}
python=${PYTHON:-/usr/bin/python3}
video=$root/../shared/data/video
samples=/usr/share/doc/opencv-doc/examples/data

[ -f "$video/vtest.mjpeg" ] || { echo "no $video/vtest.mjpeg (see ../shared/data/README.md)" >&2; exit 1; }
"$python" -c 'import cv2, scipy' 2>/dev/null ||
	{ echo "$python lacks cv2 or scipy: apt-get install python3-opencv python3-scipy" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -f "$frigate/frigate/motion/improved_motion.py" ]; then
	# a bare clone: take the one file the comparison runs
	mkdir -p "$work/frigate/frigate/motion"
	git --git-dir="$frigate" show HEAD:frigate/motion/improved_motion.py >"$work/frigate/frigate/motion/improved_motion.py"
	echo "Frigate $(git --git-dir="$frigate" log -1 --format='%h (%cs)')" >&2
	frigate=$work/frigate
fi

cd "$root"
go build -buildmode=c-shared -o "$work/libmotion.so" ./cmd/motionlib
MOTION_CLIPS_OUT=$work go test -count=1 -run '^TestWriteClips$' ./sensors/camera/motion/ >/dev/null

clips=("$video/vtest.mjpeg" "$video/static_lighting.mjpeg")
for c in switch switch_walk swing objects_a objects_b; do
	clips+=("$work/$c.y4m")
done
if [ -d "$samples" ]; then
	clips+=("$samples/Megamind.avi=480x352" "$samples/vtest.avi")
else
	echo "($samples missing: apt-get install opencv-doc for the Megamind and full-size vtest clips)" >&2
fi

clock=--cpu
[ "${WALL:-0}" = 1 ] && clock=
"$python" scripts/motion_vs_frigate.py --frigate "$frigate" --lib "$work/libmotion.so" --rounds "$rounds" $clock \
	--static static_lighting --static switch "${clips[@]}"
