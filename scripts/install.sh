#!/usr/bin/env bash
# Installs edgeagent on the board it runs on (Raspberry Pi OS bookworm, JetPack 6):
# the binary, its model files (/usr/local/lib/edgeagent/), a board config in
# /etc/edgeagent/, a system user in the gpio, i2c, video and audio groups, and
# the systemd unit (enabled and started).
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: sudo scripts/install.sh --binary FILE --board FILE [--data DIR] [--no-start]

  --binary FILE   the edgeagent binary for this board (dist/edgeagent-linux-arm64 …)
  --data DIR      the model files a robot-profile binary reads from beside itself
                  (default: edgeagent-data/ beside FILE, as scripts/cross-compile.sh
                  writes it); installed as /usr/local/lib/edgeagent/
  --board FILE    its board config (board-configs/rpi4.yaml …); installed as
                  /etc/edgeagent/board.yaml (an existing one is kept as board.yaml.bak)
  --no-start      install and enable, but do not start now

Idempotent: run it again to upgrade the binary or the config.
USAGE
}

bin="" board="" data="" start=1
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) bin=${2:?}; shift 2 ;;
    --board) board=${2:?}; shift 2 ;;
    --data) data=${2:?}; shift 2 ;;
    --no-start) start=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$bin" ] && [ -n "$board" ] || { usage >&2; exit 2; }
[ -z "$data" ] || [ -d "$data" ] || { echo "--data $data: not a directory" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "run as root (sudo)" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)

# Refuse a config this binary rejects before touching the running service.
"$bin" check "$board" >/dev/null

install -m 0755 "$bin" /usr/local/bin/edgeagent
[ -n "$data" ] || data=$(dirname "$bin")/edgeagent-data
if [ -d "$data" ]; then
  install -d -m 0755 /usr/local/lib/edgeagent
  install -m 0644 "$data"/* /usr/local/lib/edgeagent/
fi
install -d -m 0755 /etc/edgeagent
if [ -f /etc/edgeagent/board.yaml ] && ! cmp -s "$board" /etc/edgeagent/board.yaml; then
  cp /etc/edgeagent/board.yaml /etc/edgeagent/board.yaml.bak
fi
install -m 0644 "$board" /etc/edgeagent/board.yaml

if ! id edgeagent >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/edgeagent --create-home --shell /usr/sbin/nologin edgeagent
fi
for g in gpio i2c video audio spi; do
  getent group "$g" >/dev/null && usermod -aG "$g" edgeagent
done
install -d -o edgeagent -g edgeagent -m 0750 /var/lib/edgeagent

install -m 0644 "$here/deploy/edgeagent.service" /etc/systemd/system/edgeagent.service
systemctl daemon-reload
systemctl enable edgeagent.service
if [ $start -eq 1 ]; then
  systemctl restart edgeagent.service
  systemctl --no-pager status edgeagent.service | head -5 || true
fi
echo "installed: /usr/local/bin/edgeagent, /etc/edgeagent/board.yaml; logs: journalctl -u edgeagent -f"
