#!/usr/bin/env bash
# What an Ollama that answers every connection with EOF costs the agent
# (issue 31): the sim board runs for SECONDS against a listener that
# accepts each connection and closes it at once, then again with the LLM
# switched off (the baseline). Prints, per run, the connections the
# listener dropped (one per attempt), the agent's "ollama unavailable" warnings and the
# agent's CPU use (utime+stime over the run, % of one core).
#
#   scripts/llm-eof.sh [BINARY] [SECONDS]     defaults: a fresh build, 30
#   EOF_MODE=all scripts/llm-eof.sh           the check gets EOF too
#
# Budget: at most one attempt per backoff step (500ms, 1s, 2s … 30s: 6 in
# the first 30 s) and the EOF run within 1 % of one core of the baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
secs=${2:-30}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/edgeagent
  go build -o "$bin" ./cmd/edgeagent
fi
. scripts/simboard.sh
tmp=$(mktemp -d)
trap 'kill $eof 2>/dev/null || true; rm -rf "$tmp"' EXIT

port=$(free_port)
# The listener answers Ollama's check (version, and the sim board's models
# as pulled) and closes every other connection unanswered, like an Ollama
# whose runner dies on load or a proxy with nothing behind it: the check
# passes, the preload and every call get EOF. With "all" as its mode it
# closes every connection, the check's too.
python3 -u -c '
import socketserver, sys
bodies = {"/api/version": b"{\"version\":\"0.17.4\"}",
  "/api/tags": b"{\"models\":[{\"name\":\"qwen2.5:1.5b\",\"model\":\"qwen2.5:1.5b\"},{\"name\":\"all-minilm:latest\",\"model\":\"all-minilm:latest\"}]}"}
class H(socketserver.StreamRequestHandler):
    def handle(self):
        while True:
            line = self.rfile.readline().split()
            if len(line) < 2 or sys.argv[2] == "all" or line[1].decode() not in bodies:
                print("dropped", flush=True); return
            while self.rfile.readline() not in (b"\r\n", b"\n", b""): pass
            b = bodies[line[1].decode()]
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(b) + b)
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer.daemon_threads = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
' "$port" "${EOF_MODE:-calls}" >"$tmp/accepted" &
eof=$!

tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

run() { # run NAME BOARD
  : >"$tmp/accepted"
  OLLAMA_HOST=http://127.0.0.1:$port "$bin" run --board "$2" 2>"$tmp/log" &
  local pid=$! t0
  # Count from ready on: start-up (building the sensors) is not the outage.
  until grep -q 'start_to_ready' "$tmp/log" 2>/dev/null; do sleep 0.1; done
  : >"$tmp/accepted"
  t0=$(cpu_ticks $pid)
  sleep "$secs"
  local used=$(($(cpu_ticks $pid) - t0))
  kill -TERM $pid
  wait $pid || true
  printf '%-10s dropped=%d warnings=%d cpu=%s%% of one core\n' "$1" \
    "$(grep -c dropped "$tmp/accepted" || true)" \
    "$(grep -c 'ollama unavailable' "$tmp/log" || true)" \
    "$(awk -v u="$used" -v t="$tck" -v s="$secs" 'BEGIN{printf "%.2f", 100*u/t/s}')"
}

sim_board "$tmp/eof.yaml"
run eof "$tmp/eof.yaml"
# The same board without the LLM: what the rest of the sim board costs.
awk '/^llm:/{inllm=1} inllm && /^  enabled:/{sub(/true/,"false"); inllm=0} {print}' "$tmp/eof.yaml" >"$tmp/off.yaml"
run llm-off "$tmp/off.yaml"
