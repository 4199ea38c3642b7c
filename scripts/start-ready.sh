#!/usr/bin/env bash
# Start to ready on the sim board, side by side: each binary is started
# RUNS times, one start at a time, the binaries taking turns (each round
# begins with the next one, so none always goes first). Per start it
# reads two figures:
#   exec_to_ready   from just before the exec to the agent's "ready" line
#                   on its stderr, timed by this script: what systemd or a
#                   user waits for (the runtime's and every package's init
#                   included);
#   start_to_ready  the agent's own log field (from main's start).
# and, as the ready line is read, the process's CPU time (all its threads,
# /proc/PID/task/*/schedstat: far less noisy than the wall time on a busy
# machine), its minor page faults and the GC cycles it ran
# (GODEBUG=gctrace=1, which every binary gets, so the cost is the same).
# Each binary has its own copy of the sim board and data directory; one
# start of each, not counted, creates its store first, as a robot has one.
#   scripts/start-ready.sh RUNS NAME=BINARY [NAME=BINARY]...
# Prints every start, then per binary: median, p90 and max of both
# figures, how many were over 200 ms, and the load average before and
# after the run.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:?usage: scripts/start-ready.sh RUNS NAME=BINARY...}
shift
[ $# -gt 0 ] || { echo "usage: scripts/start-ready.sh RUNS NAME=BINARY..." >&2; exit 2; }
. scripts/simboard.sh
declare -a args cfgs
trap 'rm -f "${cfgs[@]:-}"' EXIT
for arg in "$@"; do
  name=${arg%%=*}
  cfg=board-configs/.start-ready-$$-$name.yaml
  sim_board "$cfg"
  cfgs+=("$cfg") args+=("$arg" "$cfg")
done
OLLAMA_HOST=${OLLAMA_HOST:-http://127.0.0.1:1} python3 - "$runs" "${args[@]}" <<'EOF'
import math, os, re, signal, statistics, subprocess, sys, time

runs = int(sys.argv[1])
bins = [(a.split("=", 1)[0], a.split("=", 1)[1], c) for a, c in zip(sys.argv[2::2], sys.argv[3::2])]
env = dict(os.environ, GODEBUG="gctrace=1")

def start(binary, cfg):
    """One start: (exec_to_ready ms, start_to_ready ms, minor faults, GCs, CPU ms)."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen([binary, "run", "--board", cfg], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    gcs, field = 0, None
    for line in p.stderr:
        # The runtime writes a gctrace line in pieces, so the log's ready
        # line can land inside one: look for both anywhere in the line.
        gcs += len(re.findall(rb"\bgc \d+ @", line))
        if b" msg=ready " in line:
            t1 = time.monotonic_ns()
            m = re.search(r"start_to_ready=([0-9.]+)(ms|µs|s)\b", line.decode(errors="replace"))
            if m:
                field = float(m.group(1)) * {"ms": 1, "µs": 1e-3, "s": 1e3}[m.group(2)]
            break
    else:
        p.wait()
        sys.exit(f"{binary}: exited ({p.returncode}) before it was ready")
    with open(f"/proc/{p.pid}/stat") as f:
        faults = int(f.read().rsplit(")", 1)[1].split()[7])
    cpu = 0
    for task in os.listdir(f"/proc/{p.pid}/task"):
        try:
            with open(f"/proc/{p.pid}/task/{task}/schedstat") as f:
                cpu += int(f.read().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    p.send_signal(signal.SIGTERM)
    p.stderr.read()  # drain, so the agent never blocks on its log while stopping
    if p.wait() != 0:
        sys.exit(f"{binary}: exit status {p.returncode} after SIGTERM")
    return (t1 - t0) / 1e6, field, faults, gcs, cpu / 1e6

def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])

for name, binary, cfg in bins:  # not counted: creates the store
    start(binary, cfg)
before = load()
res = {name: [] for name, _, _ in bins}
print(f"{'start':>5} {'name':<12} {'exec_to_ready':>13} {'start_to_ready':>14} {'cpu':>8} {'faults':>7} {'gcs':>4}")
for r in range(runs):
    for k in range(len(bins)):
        name, binary, cfg = bins[(r + k) % len(bins)]
        e, s, f, g, c = start(binary, cfg)
        res[name].append((e, s, f, g, c))
        print(f"{r + 1:>5} {name:<12} {e:>11.1f}ms {s if s is not None else float('nan'):>12.1f}ms {c:>6.1f}ms {f:>7} {g:>4}")
after = load()

def p90(xs):
    xs = sorted(xs)
    return xs[math.ceil(0.9 * len(xs)) - 1]

print(f"\nload average before {before}, after {after}; {runs} starts each")
print(f"{'name':<12} {'exec_to_ready median/p90/max':>30} {'>200':>5} {'start_to_ready median/p90/max':>31} {'>200':>5} {'cpu median':>10} {'faults':>7} {'gcs':>4}")
for name, _, _ in bins:
    e = [x[0] for x in res[name]]
    s = [x[1] for x in res[name] if x[1] is not None]
    fmt = lambda xs: f"{statistics.median(xs):.1f} / {p90(xs):.1f} / {max(xs):.1f} ms"
    print(f"{name:<12} {fmt(e):>30} {sum(x > 200 for x in e):>5} {fmt(s):>31} {sum(x > 200 for x in s):>5}"
          f" {statistics.median([x[4] for x in res[name]]):>8.1f}ms {statistics.median([x[2] for x in res[name]]):>7.0f}"
          f" {statistics.median([x[3] for x in res[name]]):>4.0f}")
EOF
