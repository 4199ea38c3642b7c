package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

// ticker is a test sensor kind: it reads a counter every interval and
// raises a High "motion_start" on its first reading. (Its failures and
// restarts are sensors/supervise's tests.)
type ticker struct {
	name     string
	interval time.Duration
}

func init() {
	sensors.Register("test_ticker", func(cfg sensors.Config) (sensors.Sensor, error) {
		var none struct{} // it takes no options: any is an error to report
		if err := cfg.DecodeOptions(&none); err != nil {
			return nil, err
		}
		return &ticker{name: cfg.Name, interval: cfg.Interval}, nil
	}, sensors.Watched{Suffix: ".frames", Size: 3})
}

// A kind's costly watched sources get the small ring it declared, unless
// the board sets one.
func TestWatchedSourcesGetTheirKindsRing(t *testing.T) {
	cfg, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nworld: {capacities: {b.frames: 9}}\n"+
		"sensors: [{name: a, kind: test_ticker}, {name: b, kind: test_ticker}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := capacities(cfg); got["a.frames"] != 3 || got["b.frames"] != 9 || len(got) != 2 {
		t.Fatalf("capacities %v, want a.frames 3 (the kind's) and b.frames 9 (the board's)", got)
	}
}

func (t *ticker) Name() string { return t.name }

func (t *ticker) Run(ctx context.Context, out sensors.Sink) error {
	out.Raise(worldmodel.Event{Kind: "motion_start", Priority: worldmodel.High, Message: "moved"})
	tk := time.NewTicker(t.interval)
	defer tk.Stop()
	for n := 1.0; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
			out.Observe(worldmodel.Observation{Source: t.name + ".count", Kind: worldmodel.Reading, Value: n, Unit: "1"})
		}
	}
}

// lamp is a test plugin with one tool and one sensor of its own.
type lamp struct {
	on      atomic.Bool
	started atomic.Bool
	sensor  *ticker
}

func (l *lamp) Info() hooks.Info { return hooks.Info{Name: "lamp", Version: "1"} }
func (l *lamp) OnAgentStart(context.Context) error {
	l.started.Store(true)
	return nil
}
func (l *lamp) Tools() []tools.Tool {
	return []tools.Tool{tools.Func(tools.Spec{Name: "lamp.on", Description: "switch the lamp on", Permission: "actuate"},
		func(context.Context, json.RawMessage) (tools.Result, error) {
			l.on.Store(true)
			return tools.Result{Value: "on"}, nil
		})}
}
func (l *lamp) Sensors() []sensors.Sensor { return []sensors.Sensor{l.sensor} }

const testBoard = `
device: {id: test-bot, platform: sim}
agent: {heartbeat: 1h}
sensors:
  - name: tick
    kind: test_ticker
    interval: 2ms
    thresholds: [{quantity: count, above: 3, hysteresis: 1, event: count_high}]
reflexes:
  - on: tick/motion_start
    do: {tool: lamp.on}
`

func newNode(t *testing.T) *Node {
	t.Helper()
	yaml := strings.Replace(testBoard, "device:", "data_dir: "+t.TempDir()+"\ndevice:", 1)
	// The embedded broker on a port of its own: on the default 1883 it met
	// another test process's broker (go test runs packages side by side)
	// and used that one, which went away under it.
	yaml += fmt.Sprintf("mqtt: {listen: \"127.0.0.1:%d\"}\n", mosquittotest.FreePort(t))
	cfg, err := board.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func run(t testing.TB, n *Node) (stop func() time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, time.Now()) }()
	select {
	case <-n.Ready():
	case err := <-done:
		t.Fatalf("run ended before ready: %v", err)
	}
	return func() time.Duration {
		t0 := time.Now()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		return time.Since(t0)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSensorsReflexesPluginsAndShutdown(t *testing.T) {
	n := newNode(t)
	l := &lamp{sensor: &ticker{name: "lampmeter", interval: time.Millisecond}}
	if err := n.LoadPlugin(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	stop := run(t, n)
	// The sensor's readings land in the world model; its motion event fires
	// the reflex through the loop; the plugin's sensor runs too.
	waitFor(t, "readings", func() bool { o, ok := n.World.Latest("tick.count"); return ok && o.Value >= 3 })
	waitFor(t, "reflex", l.on.Load)
	waitFor(t, "plugin sensor", func() bool { _, ok := n.World.Latest("lampmeter.count"); return ok })
	// The board's threshold on tick.count raised its event.
	waitFor(t, "threshold event", func() bool {
		for _, e := range n.World.Events(0, worldmodel.High, 0) {
			if e.Kind == "count_high" && e.Source == "tick.count" {
				return true
			}
		}
		return false
	})
	if !l.started.Load() {
		t.Fatal("plugin not started")
	}
	// Unloading removes the plugin's tools and stops its sensor.
	if err := n.UnloadPlugin(context.Background(), "lamp"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Tools.Resolve("lamp.on"); tools.CodeOf(err) != tools.CodeNotFound {
		t.Fatalf("tool still there: %v", err)
	}
	if st := n.supervisor.Status().(map[string]string); len(st) != 1 || st["tick"] != "ok" {
		t.Fatalf("sensor status after unload: %v", st)
	}
	// Twice is a refusal a caller can tell by class, not by text.
	err := n.UnloadPlugin(context.Background(), "lamp")
	if !errors.Is(err, ErrPlugin) || !errors.Is(err, hooks.ErrNotFound) || err.Error() != `plugin request refused: plugin "lamp" is not loaded` {
		t.Fatalf("second unload: %v", err)
	}
	if took := stop(); took > ShutdownGrace {
		t.Fatalf("shutdown took %v", took)
	}
}

func TestUnknownSensorKindAndBadOptions(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"sensors: [{name: x, kind: nope}]", "sensors[0].kind: unknown (known: "},
		{"sensors: [{name: x, kind: test_ticker, options: {fail_frist: true}}]", "fail_frist"},
	} {
		cfg, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\ndata_dir: "+t.TempDir()+"\n"+tc.yaml))
		if err != nil {
			t.Fatal(err)
		}
		_, err = New(cfg, Options{Log: quiet, NoStore: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// criticalProbe is a plugin that sees Critical events the way the actuators
// plugin does, for tests that time or observe the e-stop path.
type criticalProbe func(worldmodel.Event)

func (criticalProbe) Info() hooks.Info                    { return hooks.Info{Name: "critical_probe"} }
func (f criticalProbe) HandleCritical(e worldmodel.Event) { f(e) }

func addCriticalProbe(tb testing.TB, n *Node, fn func(worldmodel.Event)) {
	tb.Helper()
	if err := n.LoadPlugin(context.Background(), criticalProbe(fn)); err != nil {
		tb.Fatal(err)
	}
}

func TestUnloadedPluginNoLongerSeesCriticalEvents(t *testing.T) {
	n := newNode(t)
	defer n.Close()
	var hits atomic.Int32
	addCriticalProbe(t, n, func(worldmodel.Event) { hits.Add(1) })
	n.Raise(worldmodel.Event{Kind: "estop", Source: "test", Priority: worldmodel.Critical})
	if err := n.UnloadPlugin(context.Background(), "critical_probe"); err != nil {
		t.Fatal(err)
	}
	n.Raise(worldmodel.Event{Kind: "estop", Source: "test", Priority: worldmodel.Critical})
	if got := hits.Load(); got != 1 {
		t.Fatalf("probe saw %d critical events, want 1 (before unload only)", got)
	}
}
