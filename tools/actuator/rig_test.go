package actuator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is a actuator.Set on the sim adaptor with a fake clock, behind a real tool
// registry, as the node wires it.
type rig struct {
	t     testing.TB
	set   *actuator.Set
	sim   *simadaptor.Adaptor
	clk   *clock.Fake
	reg   *tools.Registry
	world *worldmodel.Model
	store *store.Bolt
	raise func(worldmodel.Event)
	// configs are the blocks the set was built from (to build it again).
	configs []actuator.Config
}

type rigOpt func(*rigConfig)

type rigConfig struct {
	store   bool
	raise   func(r *rig) func(worldmodel.Event)
	noStart bool
	real    bool
}

func withStore() rigOpt  { return func(c *rigConfig) { c.store = true } }
func notStarted() rigOpt { return func(c *rigConfig) { c.noStart = true } }

// withRealClock runs ramps and timers on the wall clock (benchmarks); the
// rig's fake clock then does not drive anything.
func withRealClock() rigOpt { return func(c *rigConfig) { c.real = true } }

// testBoard is the part of a board file the actuators read.
type testBoard struct {
	Device struct {
		Platform string `yaml:"platform"`
		Model    string `yaml:"model"`
	} `yaml:"device"`
	Actuators []actuator.Config
}

// block is an actuator block as a board file writes it.
type block struct {
	actuator.Config `yaml:",inline"`
	Options         map[string]any `yaml:"options"`
	Limits          map[string]any `yaml:"limits"`
}

// decodeBoard reads a board file's device and actuator blocks into the
// actuator package's Config, the way the actuators plugin hands them over
// (plugin/actuators checks that translation against board.Parse): options
// and limits are decoded strictly, and an I2C block without a bus gets the platform's
// main bus. The kinds fill their own defaults.
func decodeBoard(src []byte, strict bool) (*testBoard, error) {
	var doc struct {
		Device    yaml.MapSlice `yaml:"device"`
		Actuators []block       `yaml:"actuators"`
	}
	var opts []yaml.DecodeOption
	if strict {
		opts = append(opts, yaml.Strict())
	}
	if err := yaml.UnmarshalWithOptions(src, &doc, opts...); err != nil {
		return nil, err
	}
	tb := &testBoard{}
	for _, kv := range doc.Device {
		switch kv.Key {
		case "platform":
			tb.Device.Platform = fmt.Sprint(kv.Value)
		case "model":
			tb.Device.Model = fmt.Sprint(kv.Value)
		}
	}
	for _, b := range doc.Actuators {
		c := b.Config
		if k, ok := actuator.Lookup(c.Kind); ok && k.I2C && c.Bus == "" {
			c.Bus = map[string]string{"sim": "sim", "raspi": "1", "jetson": "7"}[tb.Device.Platform]
		}
		var err error
		if c.Decode, err = strictDecoder(b.Options); err != nil {
			return nil, err
		}
		if c.DecodeLimits, err = strictDecoder(b.Limits); err != nil {
			return nil, err
		}
		tb.Actuators = append(tb.Actuators, c)
	}
	return tb, nil
}

// strictDecoder decodes a block's options or limits into a kind's struct
// strictly, as the board does; nil for a block that is absent.
func strictDecoder(m map[string]any) (func(any) error, error) {
	if m == nil {
		return nil, nil
	}
	raw, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	return func(v any) error { return yaml.UnmarshalWithOptions(raw, v, yaml.Strict()) }, nil
}

// parseBoard decodes actuator blocks for a platform.
func parseBoard(t testing.TB, platform, actuators string) *testBoard {
	t.Helper()
	model := ""
	if platform == "raspi" {
		model = "\n  model: rpi4"
	}
	if platform == "jetson" {
		model = "\n  model: jetson-orin-nano"
	}
	doc := fmt.Sprintf("device:\n  id: t\n  platform: %s%s\nactuators:\n%s", platform, model, actuators)
	cfg, err := decodeBoard([]byte(doc), true)
	if err != nil {
		t.Fatalf("board config: %v\n%s", err, doc)
	}
	return cfg
}

func newRig(t testing.TB, actuators string, opts ...rigOpt) *rig {
	t.Helper()
	var c rigConfig
	for _, o := range opts {
		o(&c)
	}
	cfg := parseBoard(t, "sim", actuators)
	r := &rig{t: t, clk: clock.NewFake(epoch), world: worldmodel.New(worldmodel.Config{})}
	var clk clock.Clock = r.clk
	if c.real {
		clk = clock.Real()
	}
	r.sim = simadaptor.New(simadaptor.Options{Now: clk.Now})
	for _, a := range cfg.Actuators {
		if a.Kind == "pca9685_servo" {
			addr := a.Address
			if addr == 0 {
				addr = 0x40 // the kind's default
			}
			r.sim.I2CBus(a.Bus).AttachPCA9685(addr)
		}
	}
	r.configs = cfg.Actuators
	o := actuator.Options{Platform: "sim", Actuators: cfg.Actuators, World: r.world, Log: quiet, Clock: clk, Adaptor: r.sim}
	o.Store = store.NewMemory()
	if c.store {
		st, err := store.Open(filepath.Join(t.TempDir(), "edgeagent.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		r.store, o.Store = st, st
	}
	if c.raise != nil {
		o.Raise = c.raise(r)
	}
	set, err := actuator.New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.set = set
	r.reg, err = tools.NewRegistry(tools.Options{Log: quiet, Grants: map[string][]string{
		"cli": {"*"}, "mqtt": {"read", "actuate", "publish"}, "llm": {"read", "actuate"}, "reflex": {"read", "actuate"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range set.Tools() {
		if err := r.reg.Register("actuators", tl); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := set.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		_ = r.reg.Close()
	})
	if !c.noStart {
		if err := set.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// call invokes a tool through the registry, as MQTT, the LLM or a reflex
// would.
func (r *rig) call(caller, tool, params string) (tools.Result, error) {
	r.t.Helper()
	return r.reg.Invoke(context.Background(), tools.Call{Caller: caller, Tool: tool, Params: json.RawMessage(params)})
}

func (r *rig) must(caller, tool, params string) tools.Result {
	r.t.Helper()
	res, err := r.call(caller, tool, params)
	if err != nil {
		r.t.Fatalf("%s %s: %v", tool, params, err)
	}
	return res
}

// direct invokes a tool without the registry (no schema validation, no
// permission check): the envelope must hold on its own.
func (r *rig) direct(tool, params string) (tools.Result, error) {
	r.t.Helper()
	for _, tl := range r.set.Tools() {
		if tl.Spec().Name == tool {
			return tl.Invoke(context.Background(), json.RawMessage(params))
		}
	}
	r.t.Fatalf("no tool %s", tool)
	return tools.Result{}, nil
}

func (r *rig) digital(pin string) byte {
	r.t.Helper()
	return r.written("pin", pin, r.sim.Digital)
}

func (r *rig) pwm(pin string) byte {
	r.t.Helper()
	return r.written("pwm pin", pin, r.sim.PWM)
}

// written is the last value read(pin) says was written, failing the test
// when none was.
func (r *rig) written(what, pin string, read func(string) (byte, bool)) byte {
	r.t.Helper()
	v, ok := read(pin)
	if !ok {
		r.t.Fatalf("%s %s never written", what, pin)
	}
	return v
}

func (r *rig) state(name string) string { return r.world.Actuators()[name] }

// step advances the fake clock by d once n timers are armed (the
// goroutines under test are waiting for time to pass), then waits until the
// sim adaptor has seen at least wantWrites more writes.
func (r *rig) step(n int, d time.Duration, wantWrites uint64) {
	r.t.Helper()
	armed := make(chan struct{})
	go func() { r.clk.BlockUntil(n); close(armed) }()
	select {
	case <-armed:
	case <-time.After(5 * time.Second):
		r.t.Fatalf("timed out waiting for %d armed timers (have %d)", n, r.clk.Pending())
	}
	before := r.sim.Count()
	r.clk.Advance(d)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if wantWrites > 0 && !r.sim.WaitCount(ctx, before+wantWrites) {
		r.t.Fatalf("after advancing %s: %d writes, want %d more", d, r.sim.Count()-before, wantWrites)
	}
}

// eventually polls cond; only for state that a goroutine sets after a
// write the test already waited for.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func contains(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func value(t testing.TB, res tools.Result) map[string]any {
	t.Helper()
	data, err := json.Marshal(res.Value)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("result %s: %v", data, err)
	}
	return m
}

func (r *rig) auditEntries(limit int, tool string) []actuator.Entry {
	r.t.Helper()
	entries, err := r.set.AuditQuery(context.Background(), actuator.Query{Limit: limit, Tool: tool})
	if err != nil {
		r.t.Fatal(err)
	}
	if len(entries) == 0 {
		r.t.Fatalf("no audit entries for %q", tool)
	}
	return entries
}

func loadRepoBoard(name string) (*testBoard, error) {
	src, err := os.ReadFile(filepath.Join("..", "..", "board-configs", name+".yaml"))
	if err != nil {
		return nil, err
	}
	return decodeBoard(src, false) // the rest of the file is not ours to check
}

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
