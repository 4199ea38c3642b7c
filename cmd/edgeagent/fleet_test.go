package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/fleet"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/node"
)

const fleetRobotBoard = `device: {id: %s, platform: sim}
data_dir: %s
agent: {heartbeat: 1h}
llm: {enabled: false}
mqtt: {broker: "%s", qos: 1, discovery: {enabled: false}}
fleet: {name: yard, groups: [%s], tools: [agent.status, headlight.*]}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`

// fleetRun runs `edgeagent fleet ARGS…` and returns its output and error.
func fleetRun(t *testing.T, broker string, args ...string) (string, error) {
	t.Helper()
	cmd := newFleetCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append(append([]string(nil), args...), "--broker", broker, "--timeout", "2s"))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestFleetExitCodes: against mosquitto and three robots (one of which is
// stopped during the test) plus a robot that announces itself online and
// never answers (a hung process whose connection is still up), call and
// estop exit 2 for a target nobody is in and 1 for a refusal, an offline
// member or a silent one, naming them.
func TestFleetExitCodes(t *testing.T) {
	b := mosquittotest.Start(t, "set_tcp_nodelay true")
	stops := map[string]func(){}
	for _, r := range []struct{ id, groups string }{{"r1", "all, a"}, {"r2", "all, a"}, {"r3", "all, b"}} {
		dir := filepath.Join(t.TempDir(), r.id)
		cfg, err := board.Parse(filepath.Join(dir, "board.yaml"), fmt.Appendf(nil, fleetRobotBoard, r.id, dir, b.URL(), r.groups))
		if err != nil {
			t.Fatal(err)
		}
		nd, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), NoStore: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- nd.Run(ctx, time.Now()) }()
		var stopped bool
		stops[r.id] = func() {
			if !stopped {
				stopped = true
				cancel()
				if err := <-done; err != nil {
					t.Errorf("%s: %v", r.id, err)
				}
			}
		}
		t.Cleanup(stops[r.id])
	}
	waitFleet(t, b.URL(), 3)

	code := func(err error) int {
		var ee *fleet.ExitError
		if errors.As(err, &ee) {
			return ee.Code
		}
		if err != nil {
			return -1
		}
		return 0
	}
	check := func(name string, wantCode int, wantIn []string, args ...string) {
		t.Helper()
		out, err := fleetRun(t, b.URL(), args...)
		if code(err) != wantCode {
			t.Fatalf("%s: exit %d (%v), want %d\n%s", name, code(err), err, wantCode, out)
		}
		for _, s := range wantIn {
			if !strings.Contains(err.Error()+out, s) {
				t.Fatalf("%s: %q not said:\n%v\n%s", name, s, err, out)
			}
		}
		t.Logf("%s: exit %d: %v", name, code(err), err)
	}

	if out, err := fleetRun(t, b.URL(), "call", "a", "agent.status"); err != nil || !strings.Contains(out, "2 of 2 robots of group a ran agent.status") {
		t.Fatalf("a call every member answers: %v\n%s", err, out)
	}
	check("typo'd group", fleet.ExitNoTarget, []string{`group alll`, `did you mean "all"`}, "call", "alll", "agent.status")
	check("typo'd fleet", fleet.ExitNoTarget, []string{`fleet yrd`, `did you mean "yard"`}, "estop", "yrd")
	check("a tool outside fleet.tools", fleet.ExitIncomplete, []string{"3 of 3 robots of group all did not acknowledge", "refused: r1, r2, r3"},
		"call", "all", "plugins.list")

	stops["r2"]()
	check("an offline member", fleet.ExitIncomplete, []string{"offline: r2", "1 of 2 robots of group a ran headlight.set"}, "call", "a", "headlight.set", `{"on":true}`)

	ghost := announce(t, b.URL(), "ghost", `{"id":"ghost","platform":"sim","version":"x","fleet":"yard","groups":["all","a"],"started":"x"}`)
	defer ghost()
	check("a member that does not answer", fleet.ExitIncomplete, []string{"offline: r2", "did not answer: ghost", "2 of 3 robots of group a did not acknowledge", "no answer"}, "call", "a", "agent.status")
	check("the fleet e-stop", fleet.ExitIncomplete, []string{"offline: r2", "did not answer: ghost", "2 of 4 robots of fleet yard"}, "estop", "yard")
}

// waitFleet waits until n robots announce themselves online.
func waitFleet(t *testing.T, broker string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := fleet.Dial(ctx, fleet.Options{Broker: broker})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for {
		robots, err := c.List(ctx, 100*time.Millisecond)
		if err != nil {
			t.Fatalf("listing: %v", err)
		}
		if len(fleet.Members(robots, fleet.Target{Fleet: "yard"})) == n {
			return
		}
	}
}

// announce publishes a robot's retained announcements (online, info)
// without a robot behind them: what a hung agent whose connection is still
// up looks like. The returned func clears them.
func announce(t *testing.T, broker, id, info string) func() {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(broker).SetClientID("ghost-" + id).SetConnectTimeout(5 * time.Second))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	pub := func(leaf, payload string) {
		if tok := c.Publish("edgeagent/"+id+"/"+leaf, 1, true, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	pub("status", "online")
	pub("info", info)
	return func() {
		pub("status", "")
		pub("info", "")
		c.Disconnect(100)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{errors.New("no broker"), 1},
		{&fleet.ExitError{Code: fleet.ExitNoTarget}, 2},
		{fmt.Errorf("call: %w", &fleet.ExitError{Code: fleet.ExitIncomplete}), 1},
		{&fleet.ExitError{Code: 0}, 1}, // an error never exits 0
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
	}
}
