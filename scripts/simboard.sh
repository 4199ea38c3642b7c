# Sourced by the measurement scripts (soak.sh, measure-sim.sh,
# gc-compare.sh): a copy of the sim board that can run beside others.

# free_port prints a TCP port free on 127.0.0.1.
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# sim_board OUT writes board-configs/sim.yaml to OUT with its own data
# directory, a free port for the embedded broker and an ephemeral one for
# the dashboard.
sim_board() {
  sed "s|^device:|data_dir: $(mktemp -d)\ndevice:|; s|listen: 127.0.0.1:1883|listen: 127.0.0.1:$(free_port)|; s|listen: 127.0.0.1:8080|listen: 127.0.0.1:0|" \
    board-configs/sim.yaml >"$1"
}
