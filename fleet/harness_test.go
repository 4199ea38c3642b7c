package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/fleet"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/node"
	_ "github.com/edgeagent/edgeagent/plugin/actuators"
	_ "github.com/edgeagent/edgeagent/plugin/mqttplane"
	"github.com/edgeagent/edgeagent/tools"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
)

// The fleet harness: N sim-board robots in this process against real
// mosquitto (one broker, or two bridged ones standing for a cluster), driven
// by the fleet client as an operator's laptop would. It measures the
// connect storm, group-call and fleet e-stop round trips, a broker SIGKILL
// and restart, and memory per robot. N is 20 in CI; EDGEAGENT_FLEET_N=100
// for the numbers in docs/bench/fleet.md.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fleetSize(t *testing.T) int {
	n := 20
	if s := os.Getenv("EDGEAGENT_FLEET_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 2 {
			t.Fatalf("EDGEAGENT_FLEET_N=%q: want a number ≥ 2", s)
		}
		n = v
	}
	return n
}

const robotBoard = `device: {id: %s, platform: sim}
data_dir: %s
agent: {heartbeat: 1h}
llm: {enabled: false}
mqtt: {broker: "%s", qos: 1, discovery: {enabled: false}}
plugins: {mqtt: {reconnect_max: 1s}}
fleet: {name: yard, groups: [all, %s], tools: [agent.status, headlight.*]}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`

type robot struct {
	id   string
	n    *node.Node
	stop context.CancelFunc
	done chan error
}

// calls is how often the robot ran a tool, from its own registry.
func (r *robot) calls(tool string) int { return int(r.n.Tools.Stats()[tool].Calls) }

// connects is how many connections its control plane has set up.
func (r *robot) connects(t *testing.T) uint64 {
	res, err := r.n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "agent.status"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Value)
	var st struct {
		Components struct {
			MQTT struct {
				Connects uint64 `json:"connects"`
			} `json:"mqtt"`
		} `json:"components"`
	}
	_ = json.Unmarshal(b, &st)
	return st.Components.MQTT.Connects
}

func startRobots(t *testing.T, n int, brokerOf func(i int) string) []*robot {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	robots := make([]*robot, n)
	for i := range n {
		id := fmt.Sprintf("r%03d", i)
		parity := "even"
		if i%2 == 1 {
			parity = "odd"
		}
		dir := filepath.Join(t.TempDir(), id)
		cfg, err := board.Parse(filepath.Join(dir, "board.yaml"), fmt.Appendf(nil, robotBoard, id, dir, brokerOf(i), parity))
		if err != nil {
			t.Fatal(err)
		}
		nd, err := node.New(cfg, node.Options{Log: quiet, NoStore: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := &robot{id: id, n: nd, stop: cancel, done: make(chan error, 1)}
		go func() { r.done <- nd.Run(ctx, time.Now()) }()
		robots[i] = r
	}
	t.Cleanup(func() {
		for _, r := range robots {
			r.stop()
		}
		for _, r := range robots {
			if err := <-r.done; err != nil {
				t.Errorf("%s: %v", r.id, err)
			}
		}
	})
	return robots
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// runFleet drives a started fleet and reports what it measured.
func runFleet(t *testing.T, brokers []*mosquittotest.Broker) {
	n := fleetSize(t)
	before := heapInUse()
	t0 := time.Now()
	robots := startRobots(t, n, func(i int) string { return brokers[i%len(brokers)].URL() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	op, err := fleet.Dial(ctx, fleet.Options{Broker: brokers[0].URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()

	// Connect storm: every robot announced online (seen through the
	// operator's broker, across the bridge for the others).
	var listing []fleet.Robot
	waitUntil(t, "all robots online", 30*time.Second, func() bool {
		listing, err = op.List(ctx, 100*time.Millisecond)
		return err == nil && len(fleet.Members(listing, fleet.Target{Fleet: "yard"})) == n
	})
	online := time.Since(t0)
	perRobot := (heapInUse() - min(before, heapInUse())) / uint64(n)

	// Group calls: every member answers once; the time to the last answer.
	const rounds = 20
	var lastAnswer []time.Duration
	for k := range rounds {
		answers, dups, err := op.Call(ctx, fleet.Target{Group: "all"}, "headlight.set", json.RawMessage(fmt.Sprintf(`{"on":%v}`, k%2 == 0)), n)
		if err != nil || dups != 0 || len(answers) != n {
			t.Fatalf("round %d: %d answers, %d duplicates, %v", k, len(answers), dups, err)
		}
		for _, a := range answers {
			if !a.Reply.OK {
				t.Fatalf("round %d: %s answered %+v", k, a.Robot, a.Reply)
			}
		}
		lastAnswer = append(lastAnswer, answers[len(answers)-1].After)
	}
	// A group reaches its members only; fleet.tools limits what a broadcast may call.
	odd, _, err := op.Call(ctx, fleet.Target{Group: "odd"}, "agent.status", nil, n/2)
	if err != nil || len(odd) != n/2 {
		t.Fatalf("odd group: %d answers, %v", len(odd), err)
	}
	refused, _, _ := op.Call(ctx, fleet.Target{Fleet: "yard"}, "plugins.list", nil, n)
	if len(refused) != n || refused[0].Reply.Code != tools.CodeForbidden {
		t.Fatalf("a tool outside fleet.tools: %d answers, first %+v", len(refused), refused[0].Reply)
	}

	// Broker SIGKILL and restart: every robot back online, then every
	// command executed exactly once by every robot. The broker saves its
	// sessions every second (autosave_interval): it is killed after a save,
	// as a broker that has been up for a while would be.
	if err := brokers[0].WaitSaved(time.Now(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	brokers[0].Kill()
	brokers[0].Start()
	back := waitUntil(t, "all robots reconnected", 30*time.Second, func() bool {
		for _, r := range robots {
			if r.connects(t) < 2 && (len(brokers) == 1 || r.n.Board.MQTT.Broker == brokers[0].URL()) {
				return false
			}
		}
		return true
	})
	op.Close()
	if op, err = fleet.Dial(ctx, fleet.Options{Broker: brokers[0].URL()}); err != nil {
		t.Fatal(err)
	}
	// The killed broker lost its retained messages: the robots that
	// reconnected to it announced themselves again, those on the other
	// broker did not (their broker never went away), so an operator lists
	// them there. Commands reach them through the bridge once it is back.
	waitUntil(t, "all robots listed again", 30*time.Second, func() bool {
		seen := map[string]bool{}
		for _, b := range brokers {
			c, err := fleet.Dial(ctx, fleet.Options{Broker: b.URL()})
			if err != nil {
				return false
			}
			l, err := c.List(ctx, 100*time.Millisecond)
			c.Close()
			if err != nil {
				return false
			}
			for _, id := range fleet.Members(l, fleet.Target{Fleet: "yard"}) {
				seen[id] = true
			}
		}
		return len(seen) == n
	})
	callsBefore := make([]int, n)
	for i, r := range robots {
		callsBefore[i] = r.calls("headlight.set")
	}
	const after = 10
	for k := range after {
		answers, dups, err := op.Call(ctx, fleet.Target{Group: "all"}, "headlight.set", json.RawMessage(`{"on":true}`), n)
		if err != nil || dups != 0 || len(answers) != n {
			t.Fatalf("after the restart, round %d: %d answers, %d duplicates, %v", k, len(answers), dups, err)
		}
	}
	lost, doubled := 0, 0
	for i, r := range robots {
		switch got := r.calls("headlight.set") - callsBefore[i]; {
		case got < after:
			lost += after - got
		case got > after:
			doubled += got - after
		}
	}
	if lost != 0 || doubled != 0 {
		t.Fatalf("after the broker restart: %d commands lost, %d doubled", lost, doubled)
	}

	// Fleet e-stop: every robot latched and acknowledged. Repeated (a
	// latched robot stops again), for a distribution of the time to the
	// last acknowledgement.
	var lastAck []time.Duration
	for k := range 10 {
		acks, err := op.EStop(ctx, "yard", n)
		if err != nil || len(acks) != n {
			t.Fatalf("fleet e-stop %d: %d acknowledgements, %v", k, len(acks), err)
		}
		lastAck = append(lastAck, slices.MaxFunc(acks, func(a, b fleet.Answer) int { return int(a.After - b.After) }).After)
	}
	for _, r := range robots {
		if h := r.n.World.Health()["estop"]; h != "latched" {
			t.Fatalf("%s: e-stop %q after the fleet e-stop", r.id, h)
		}
	}
	t.Logf("%d robots on %d broker(s): all online %v after start; group call → %d answers p50 %v p99 %v; "+
		"fleet e-stop → all acknowledged p50 %v p99 %v; broker SIGKILL → all reconnected %v, %d commands after it: 0 lost, 0 doubled; heap per robot %.1f KiB",
		n, len(brokers), online.Round(time.Millisecond), n, pct(lastAnswer, 0.5).Round(time.Microsecond), pct(lastAnswer, 0.99).Round(time.Microsecond),
		pct(lastAck, 0.5).Round(time.Microsecond), pct(lastAck, 0.99).Round(time.Microsecond), back.Round(time.Millisecond), after*n, float64(perRobot)/1024)
	op.Close()
}

func TestFleetOnMosquitto(t *testing.T) {
	runFleet(t, []*mosquittotest.Broker{mosquittotest.Start(t, "autosave_interval 1", "set_tcp_nodelay true")})
}

// Two mosquitto instances bridged both ways stand for a clustered broker:
// half the robots on each, the operator on the first. The first saves its
// sessions every second: the bridge's session (its subscription to the
// fleet's topics) must survive a crash, or what is published there before
// the bridge reconnects never reaches the other half (docs/fleet.md).
// The bridge reconnects within its keepalive and restart_timeout.
func TestFleetAcrossBridgedBrokers(t *testing.T) {
	a := mosquittotest.Start(t, "autosave_interval 1", "set_tcp_nodelay true")
	b := mosquittotest.Start(t, fmt.Sprintf("connection to-a\naddress 127.0.0.1:%d\ntopic edgeagent/# both 1\ncleansession false\nrestart_timeout 1\nkeepalive_interval 5\nautosave_interval 1\nset_tcp_nodelay true\n", a.Port))
	runFleet(t, []*mosquittotest.Broker{a, b})
}
