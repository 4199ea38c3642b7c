#!/usr/bin/env bash
# Cross-compiles edgeagent for Raspberry Pi (64- and 32-bit OS) and Jetson.
# Outputs stripped binaries, the robot profile's model files
# (dist/edgeagent-data/) and SHA256SUMS in dist/. Run with --help.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/cross-compile.sh [--target T]... [--profile P] [--no-cgo] [--with-gocv] [--out DIR]

Targets (default: all):
  arm64   linux/arm64          Raspberry Pi 4/5 with 64-bit Raspberry Pi OS, Jetson (JetPack 6)
  armv7   linux/arm GOARM=7    Raspberry Pi with 32-bit Raspberry Pi OS
  host    this machine

  --profile P   build profile (docs/architecture.md#build-profiles): robot (the
                default: what runs on a robot, without the workstation's tools —
                eval, motion, replay, the wake-word trainer) or full (everything,
                as a plain go build gives)
  --no-cgo      static pure-Go binaries: no malgo audio backend (use the exec
                backend with arecord), pure-Go camera backends only. Needs no
                cross compiler: for boards where nothing else can be installed.
  --with-gocv   also build linux/arm64 with the OpenCV camera backend (-tags gocv),
                through Debian multiarch (dpkg --add-architecture arm64 and
                libopencv-dev:arm64). Optional and heavy: ~1 GB of packages; the
                board then needs OpenCV 4.6 too (Raspberry Pi OS bookworm has it).
  --out DIR     output directory (default dist)

With cgo (the default) the malgo audio backend is compiled in, using Debian's
cross compilers gcc-aarch64-linux-gnu and gcc-arm-linux-gnueabihf; they are
installed when missing and the script runs as root.
Version, commit and build date are stamped into the binary (edgeagent version).

The robot profile keeps the wake word's model files (the speech frontend's
weights, the "hey robot" head: 1.7 MB) out of the binary: they are written to
DIR/edgeagent-data/, which must go beside the binary on the robot
(scripts/install.sh --data puts it in /usr/local/lib/edgeagent/). The binary
checks their sha256 at start and says where it looked if they are missing.
The robot profile is also built without HTTP/2 (-tags nethttpomithttp2): the
agent's HTTP peers (Ollama, the dashboard's browser) speak HTTP/1.1; and the
packages a robot rarely runs (TLS, YAML, HTTP, the CLI...) are compiled
without inlining (the list is below, in $cold).
USAGE
}

targets=()
cgo=1
gocv=0
profile=robot
out=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("${2:?--target needs a value}"); shift 2 ;;
    --target=*) targets+=("${1#--target=}"); shift ;;
    --profile) profile=${2:?--profile needs a value}; shift 2 ;;
    --profile=*) profile=${1#--profile=}; shift ;;
    --no-cgo) cgo=0; shift ;;
    --with-gocv) gocv=1; shift ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=(arm64 armv7 host)
case "$profile" in
  robot) profile_tags="robot nethttpomithttp2" ;;
  full) profile_tags= ;;
  *) echo "unknown profile $profile (robot, full)" >&2; exit 2 ;;
esac
for t in "${targets[@]}"; do
  case "$t" in arm64|armv7|host) ;; *) echo "unknown target $t (arm64, armv7, host)" >&2; exit 2 ;; esac
done

cd "$(dirname "$0")/.."
mkdir -p "$out"

version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w -X main.version=$version -X main.commit=$commit -X main.date=$date"

# The robot profile compiles the packages that run rarely on a robot without
# inlining (-l): TLS and the rest of crypto, YAML, JSON Schema, HTTP and the
# Ollama client, the CLI, the dashboard, the board's parser, the fleet and
# admin tools. Inlining copies a callee's body into each caller, and the
# copies cost 0.73 MB of code and tables (docs/bench/footprint.md#binary).
# The command and e-stop path, the sensors, the actuators' drivers, MQTT and
# the runtime keep it: the e-stop benchmark is unchanged (allocations too).
cold=(crypto/... vendor/golang.org/x/crypto/... golang.org/x/crypto/... encoding/asn1 math/big
  github.com/goccy/... gopkg.in/yaml.v3 github.com/santhosh-tekuri/... golang.org/x/text/...
  regexp/... github.com/spf13/... text/template/... mime/... net/http net/http/...
  github.com/ollama/... github.com/wk8/... github.com/gorilla/... github.com/mailru/...
  github.com/edgeagent/edgeagent/{dashboard/...,cmd/edgeagent,board/...,fleet/...,localadmin/...}
  github.com/edgeagent/edgeagent/{tools/admin,mqtt/hass,mqtt/brokercheck})
gcflags=()
if [ "$profile" = robot ]; then
  for p in "${cold[@]}"; do gcflags+=("-gcflags=$p=-l"); done
fi

# need_pkgs installs Debian packages when missing (as root) or names them.
need_pkgs() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "missing Debian packages: ${missing[*]} (run: sudo apt-get install ${missing[*]}, or use --no-cgo)" >&2
    exit 1
  fi
}

build() { # name goos goarch goarm cc tags
  local name=$1 goos=$2 goarch=$3 goarm=$4 cc=$5 tags=$6
  local bin="$out/edgeagent-$name"
  echo "building $bin" >&2
  env GOOS="$goos" GOARCH="$goarch" GOARM="$goarm" CGO_ENABLED="$cgo" ${cc:+CC=$cc} \
    go build -trimpath -tags "$(echo "$profile_tags $tags" | xargs | tr ' ' ,)" "${gcflags[@]}" -ldflags "$ldflags" -o "$bin" ./cmd/edgeagent
}

built=()
for t in "${targets[@]}"; do
  case "$t" in
    arm64)
      [ $cgo -eq 1 ] && need_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross
      build linux-arm64 linux arm64 "" "$([ $cgo -eq 1 ] && echo aarch64-linux-gnu-gcc)" ""
      built+=("$out/edgeagent-linux-arm64") ;;
    armv7)
      [ $cgo -eq 1 ] && need_pkgs gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
      build linux-armv7 linux arm 7 "$([ $cgo -eq 1 ] && echo arm-linux-gnueabihf-gcc)" ""
      built+=("$out/edgeagent-linux-armv7") ;;
    host)
      build "$(go env GOOS)-$(go env GOARCH)" "$(go env GOOS)" "$(go env GOARCH)" "" "" ""
      built+=("$out/edgeagent-$(go env GOOS)-$(go env GOARCH)") ;;
  esac
done

# The model files the robot profile reads from beside itself (package
# internal/datafile), with the licence and notice their redistribution needs.
datafiles=(sensors/mic/speechembed/weights/speech_embedding.bin sensors/mic/wakeword/models/hey_robot.eawh
  sensors/mic/speechembed/weights/LICENSE-Apache-2.0)
if [ "$profile" = robot ]; then
  mkdir -p "$out/edgeagent-data"
  cp "${datafiles[@]}" "$out/edgeagent-data/"
  sed -n '/^NOTICE/,/^## /{/^    /s/^    //p}' sensors/mic/speechembed/weights/README.md > "$out/edgeagent-data/NOTICE"
  for f in "${datafiles[@]}" NOTICE; do built+=("$out/edgeagent-data/${f##*/}"); done
fi

if [ $gocv -eq 1 ]; then
  [ $cgo -eq 1 ] || { echo "--with-gocv needs cgo (drop --no-cgo)" >&2; exit 2; }
  if ! dpkg -s libopencv-dev:arm64 >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
      dpkg --add-architecture arm64
      apt-get update -qq
    fi
  fi
  need_pkgs gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross libopencv-dev:arm64
  PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig CXX=aarch64-linux-gnu-g++ \
    build linux-arm64-gocv linux arm64 "" aarch64-linux-gnu-gcc gocv
  built+=("$out/edgeagent-linux-arm64-gocv")
fi

(cd "$out" && sha256sum "${built[@]#"$out"/}" > SHA256SUMS)
echo "version $version (commit $commit, built $date), profile $profile, cgo=$cgo"
for b in "${built[@]}"; do
  printf '%-40s %8s bytes  %s\n' "$b" "$(stat -c %s "$b")" "$(file -b "$b" 2>/dev/null | cut -d, -f1-2 || true)"
done
echo "checksums: $out/SHA256SUMS"
