package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/hass"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestMain(m *testing.M) {
	if url := os.Getenv("EDGEAGENT_MQTT_CHILD"); url != "" {
		runChild(url) // the agent process of the last-will test; killed by its parent
		return
	}
	goleak.VerifyTestMain(m)
}

var quiet = slog.New(slog.DiscardHandler)

func testLog() *slog.Logger {
	if os.Getenv("EDGEAGENT_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quiet
}

// testBoard describes the robot of the tests (what discovery and
// telemetry see); the plane's own Config is set in buildRig.
const testBoard = `
device: {id: test-bot, platform: sim, name: Test robot}
sensors:
  - {name: env, kind: test_env, telemetry: 0s}
  - {name: slow, kind: test_env, telemetry: 300ms}
  - {name: front_cam, kind: camera}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}}
  - {name: pan, kind: servo, pins: {pin: "sim:13"}, limits: {min_angle: 10, max_angle: 170}}
  - {name: pump, kind: relay, pins: {pin: "sim:14"}}
`

// rig is the runtime around one Plane, built from the real packages: world
// model, hooks, tool registry (with a store), agent loop. fakeHost stands
// in for the node, which this package may not import; node/mqtt_test.go
// tests the real wiring.
type rig struct {
	board   *board.Config
	cfg     Config
	world   *worldmodel.Model
	hooks   *hooks.Manager
	reg     *tools.Registry
	store   *store.Bolt
	loop    *agent.Loop
	host    *fakeHost
	plane   *Plane
	lamp    *lampTools
	counter *counterTool

	stopLoop func()
}

type rigOpts struct {
	broker  string         // "" = embedded on listen
	listen  string         // default 127.0.0.1:0 (a free port)
	options func(*Options) // changes to the plugin's options
	grants  []string
	dir     string
	// noLocalAdmin leaves mqtt.local_admin off on the embedded broker.
	noLocalAdmin bool
	world        worldmodel.Config
	log          *slog.Logger // the plane's; default testLog()
	fleet        Fleet        // the robot's fleet membership; zero: none
	journal      bool         // the tool calls' records go to the world model, as in a node
	kv           func(KV) KV  // wraps the journal's store
}

func buildRig(o rigOpts) (*rig, error) {
	if o.dir == "" {
		return nil, errors.New("rig needs a directory")
	}
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	b, err := board.Parse(filepath.Join(o.dir, "test.yaml"), []byte(testBoard))
	if err != nil {
		return nil, err
	}
	cfg := Config{DeviceID: "test-bot", Broker: "embedded", Listen: o.listen, LocalAdmin: !o.noLocalAdmin,
		Prefix: "edgeagent/test-bot/", ClientID: "edgeagent-test-bot", QoS: 1, KeepAlive: 30 * time.Second,
		Buffer: 8, Discovery: "homeassistant", PublishAllow: []string{"edgeagent/test-bot/notes/#"},
		Options: DefaultOptions(), Device: hass.Device{ID: b.Device.ID, Name: b.Device.Name, Platform: b.Device.Platform, Model: b.Device.Model}}
	cfg.Options.Poll = 5 * time.Millisecond
	for _, s := range b.Sensors {
		cfg.Sensors = append(cfg.Sensors, Sensor{Name: s.Name, Kind: s.Kind, Telemetry: s.Telemetry})
	}
	if o.broker != "" {
		cfg.Broker, cfg.Listen, cfg.LocalAdmin = o.broker, "", false
	}
	if o.options != nil {
		o.options(&cfg.Options)
	}
	cfg.Fleet = o.fleet
	grants := b.Permissions.MQTT
	if o.grants != nil {
		grants = o.grants
	}
	r := &rig{board: b, cfg: cfg, world: worldmodel.New(o.world), hooks: hooks.NewManager(quiet), lamp: &lampTools{}, counter: &counterTool{}}
	if r.store, err = store.Open(filepath.Join(o.dir, "edgeagent.db")); err != nil {
		return nil, err
	}
	topts := tools.Options{Store: r.store, Filters: r.hooks, Log: quiet, Grants: map[string][]string{"mqtt": grants, "cli": {"*"}}}
	if o.journal {
		topts.Journal = r.world
	}
	r.reg, err = tools.NewRegistry(topts)
	if err != nil {
		return nil, err
	}
	r.loop = agent.New(agent.Config{Heartbeat: time.Hour}, r.world, r.reg, r.hooks, quiet)
	r.host = &fakeHost{world: r.world, loop: r.loop}
	// The e-stop latch the actuators plugin will own: a critical event
	// latches it, a before_act hook refuses every call while latched.
	safety := &safetyPlugin{}
	r.host.onCritical(func(worldmodel.Event) { safety.latched.Store(true) })
	all := append(r.lamp.tools(safety), r.counter.tool(), r.loop.StatusTool())
	all = append(append(all, tools.Builtins(r.reg, r.world)...), tools.Admin(r.reg)...)
	for _, t := range all {
		if err := r.reg.Register("test", t); err != nil {
			return nil, err
		}
	}
	if err := r.hooks.Add(safety); err != nil {
		return nil, err
	}
	if o.log == nil {
		o.log = testLog()
	}
	var kv KV = r.store
	if o.kv != nil {
		kv = o.kv(kv)
	}
	r.plane, err = New(cfg, Deps{World: r.world, Tools: r.reg, Agent: r.loop, Host: r.host, Store: kv, Log: o.log})
	if err != nil {
		return nil, err
	}
	if err := r.hooks.Add(r.plane); err != nil {
		return nil, err
	}
	for _, t := range r.plane.Tools() {
		if err := r.reg.Register("mqtt", t); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.loop.Run(ctx) }()
	r.stopLoop = func() { cancel(); <-done }
	return r, nil
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	if o.dir == "" {
		o.dir = t.TempDir()
	}
	r, err := buildRig(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.stop(t)
		r.stopLoop()
		_ = r.reg.Close()
		_ = r.store.Close()
	})
	return r
}

func (r *rig) start(t testing.TB) {
	t.Helper()
	if err := r.hooks.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, "plane connected and subscribed", func() bool { rs := r.plane.current(); return rs != nil && rs.conn.connects.Load() > 0 })
}

func (r *rig) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.hooks.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

// interrupted journals the command with id "half" as an agent leaves a
// command it died running (started, never answered), and returns it: a
// redelivery of it is answered failed, not run.
func (r *rig) interrupted(t testing.TB) string {
	t.Helper()
	cmd := `{"id":"half","tool":"counter.hit","params":{"id":"half"}}`
	if err := r.store.Put(journalBucket, "half", journalRecord{Hash: payloadHash([]byte(cmd)), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// url is where the plane's broker is.
func (r *rig) url() string { return r.plane.current().conn.broker }

func (r *rig) topics() Topics { return r.plane.topics }

// startBroker starts an embedded broker that outlives everything the test
// registers after it (cleanups run last-in first-out).
func startBroker(t testing.TB, cfg broker.Config) *broker.Broker {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = quiet
	}
	b, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// fakeHost is the node as far as the plane is concerned.
type fakeHost struct {
	world *worldmodel.Model
	loop  *agent.Loop

	mu       sync.Mutex
	critical []func(worldmodel.Event)
}

func (h *fakeHost) onCritical(fn func(worldmodel.Event)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.critical = append(h.critical, fn)
}

func (h *fakeHost) Raise(e worldmodel.Event) {
	e = h.world.Record(e)
	if e.Priority >= worldmodel.Critical {
		h.mu.Lock()
		handlers := append([]func(worldmodel.Event){}, h.critical...)
		h.mu.Unlock()
		for _, fn := range handlers {
			fn(e)
		}
	}
	h.loop.Interrupt(e)
}

// lampTools are the skills of the tests: a lamp that records its calls and
// the e-stop reset (admin), as the actuators plugin will bring them.
type lampTools struct {
	calls   atomic.Int64
	on      atomic.Bool
	callers sync.Map // caller -> true
	delay   atomic.Int64
}

func (l *lampTools) tools(safety *safetyPlugin) []tools.Tool {
	return []tools.Tool{
		tools.Typed(tools.Spec{Name: "headlight.set", Description: "switch the headlight", Permission: "actuate",
			Params: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`),
			Entity: &tools.Entity{Platform: "switch", Name: "headlight", Param: "on"}},
			func(ctx context.Context, p struct {
				On bool `json:"on"`
			}) (tools.Result, error) {
				if d := time.Duration(l.delay.Load()); d > 0 {
					time.Sleep(d)
				}
				l.calls.Add(1)
				l.on.Store(p.On)
				l.callers.Store(tools.CallerOf(ctx), true)
				return tools.Result{Value: map[string]bool{"on": p.On}}, nil
			}),
		tools.Func(tools.Spec{Name: "pan.set_angle", Description: "turn the pan servo", Permission: "actuate",
			Params: json.RawMessage(`{"type":"object","properties":{"degrees":{"type":"number"}},"required":["degrees"]}`),
			// The hint the servo kind gives for the test board's pan (limits 10–170).
			Entity: &tools.Entity{Platform: "number", Name: "pan", Param: "degrees", Min: 10, Max: 170, Step: 1, Unit: "°"}},
			func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{}, nil }),
		tools.Func(tools.Spec{Name: "estop.reset", Description: "release the e-stop latch", Permission: "admin"},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				safety.latched.Store(false)
				return tools.Result{Value: "released"}, nil
			}),
	}
}

// counterTool counts its executions per command id: the chaos tests'
// witness of what ran once, twice or never.
type counterTool struct {
	mu   sync.Mutex
	hits map[string]int
	sink *os.File // every execution appended, when set (a child agent)
}

func (c *counterTool) tool() tools.Tool {
	return tools.Typed(tools.Spec{Name: "counter.hit", Description: "count one execution", Permission: "actuate",
		Params: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`)},
		func(_ context.Context, p struct {
			ID string `json:"id"`
		}) (tools.Result, error) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.hits == nil {
				c.hits = map[string]int{}
			}
			c.hits[p.ID]++
			if c.sink != nil {
				// One write per execution: it survives a SIGKILL right after.
				if _, err := c.sink.WriteString(p.ID + "\n"); err != nil {
					return tools.Result{}, err
				}
			}
			return tools.Result{Value: c.hits[p.ID]}, nil
		})
}

func (c *counterTool) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[id]
}

// safetyPlugin refuses every action while the e-stop is latched, the way
// the actuators' envelope does.
type safetyPlugin struct{ latched atomic.Bool }

func (s *safetyPlugin) Info() hooks.Info { return hooks.Info{Name: "safety"} }
func (s *safetyPlugin) BeforeAct(_ context.Context, a *hooks.Action) error {
	if s.latched.Load() && a.Tool != "estop.reset" {
		return errors.New("e-stop latched")
	}
	return nil
}

// waitPahoGone waits until no paho goroutine is left: after Disconnect,
// paho finishes a reconnect backoff sleep before its goroutines end.
func waitPahoGone(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if !strings.Contains(string(buf[:n]), "eclipse/paho") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("paho goroutines still running after %v:\n%s", d, buf[:n])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// peer is an MQTT client of the tests: it records every message on the
// topics it subscribed to, per topic.
type peer struct {
	c  paho.Client
	mu sync.Mutex
	by map[string]chan paho.Message
}

func dialPeer(t testing.TB, url, id string, filters ...string) *peer {
	t.Helper()
	p := &peer{by: map[string]chan paho.Message{}}
	o := paho.NewClientOptions().AddBroker(url).SetClientID(id).SetCleanSession(true).
		SetAutoReconnect(false).SetConnectTimeout(3 * time.Second) // in order: the tests read sequences
	p.c = paho.NewClient(o)
	if err := mqttclient.Wait(context.Background(), p.c.Connect(), 5*time.Second); err != nil {
		t.Fatalf("peer %s: connect %s: %v", id, url, err)
	}
	t.Cleanup(func() { p.c.Disconnect(50) })
	if len(filters) > 0 {
		subs := map[string]byte{}
		for _, f := range filters {
			subs[f] = 1
		}
		if err := mqttclient.Wait(context.Background(), p.c.SubscribeMultiple(subs, p.record), 5*time.Second); err != nil {
			t.Fatalf("peer subscribe: %v", err)
		}
	}
	return p
}

func (p *peer) record(_ paho.Client, m paho.Message) { p.ch(m.Topic()) <- m }

func (p *peer) ch(topic string) chan paho.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.by[topic]
	if c == nil {
		c = make(chan paho.Message, 4096)
		p.by[topic] = c
	}
	return c
}

// next returns the next message on topic.
func (p *peer) next(t testing.TB, topic string) paho.Message {
	t.Helper()
	return p.nextWithin(t, topic, 5*time.Second)
}

func (p *peer) nextWithin(t testing.TB, topic string, d time.Duration) paho.Message {
	t.Helper()
	select {
	case m := <-p.ch(topic):
		return m
	case <-time.After(d):
		t.Fatalf("no message on %s within %v", topic, d)
		return nil
	}
}

// nextMatching skips messages on topic until one satisfies ok.
func (p *peer) nextMatching(t testing.TB, topic string, ok func(paho.Message) bool) paho.Message {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-p.ch(topic):
			if ok(m) {
				return m
			}
		case <-deadline:
			t.Fatalf("no matching message on %s", topic)
			return nil
		}
	}
}

// quiet reports whether nothing arrives on topic for d.
func (p *peer) silent(topic string, d time.Duration) bool {
	select {
	case <-p.ch(topic):
		return false
	case <-time.After(d):
		return true
	}
}

func (p *peer) send(t testing.TB, topic, payload string) {
	t.Helper()
	if err := mqttclient.Wait(context.Background(), p.c.Publish(topic, 1, false, payload), 5*time.Second); err != nil {
		t.Fatalf("publish %s: %v", topic, err)
	}
}

func decodeReply(t testing.TB, m paho.Message) Reply {
	t.Helper()
	var r Reply
	if err := json.Unmarshal(m.Payload(), &r); err != nil {
		t.Fatalf("reply %q: %v", m.Payload(), err)
	}
	return r
}

func freePort(t testing.TB) int { return mosquittotest.FreePort(t) }

// startMosquitto runs a real mosquitto for the test (mqtt/mosquittotest).
func startMosquitto(t testing.TB, extra ...string) *mosquittotest.Broker {
	return mosquittotest.Start(t, extra...)
}

// runChild is the agent process of the last-will and agent-kill tests: a
// plane connected to url, "ready" on stdout once connected, then nothing
// until it is killed. EDGEAGENT_MQTT_CHILD_DIR keeps its store (and so its
// command journal) across incarnations; EDGEAGENT_MQTT_CHILD_EXEC names a
// file where every execution of counter.hit is appended, for the parent
// to count.
func runChild(url string) {
	dir := os.Getenv("EDGEAGENT_MQTT_CHILD_DIR")
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "edgeagent-mqtt-child"); err != nil {
			panic(err)
		}
	}
	o := rigOpts{broker: url, dir: dir, options: reconnectFast}
	if addr, ok := strings.CutPrefix(url, "embedded:"); ok { // the agent's own broker, killed with it
		o.broker, o.listen = "", addr
	}
	r, err := buildRig(o)
	if err != nil {
		panic(err)
	}
	if path := os.Getenv("EDGEAGENT_MQTT_CHILD_EXEC"); path != "" {
		if r.counter.sink, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
			panic(err)
		}
	}
	if err := r.hooks.Start(context.Background()); err != nil {
		panic(err)
	}
	for r.plane.current().conn.connects.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("ready")
	select {}
}

// reconnectFast is for the tests where the broker goes away.
func reconnectFast(o *Options) { o.ReconnectMax = time.Second }

// mosquittoRig starts mosquitto and a started rig on it that reconnects
// fast, for the tests that stop, kill or restart the broker.
func mosquittoRig(t testing.TB) (*mosquittotest.Broker, *rig) {
	t.Helper()
	m := startMosquitto(t)
	r := newRig(t, rigOpts{broker: m.URL(), options: reconnectFast})
	r.start(t)
	return m, r
}
