// Package node assembles one running agent from a board config: world
// model, hooks, store, tool registry, agent loop, sensors and plugins, and
// owns their lifecycles. It is wiring with a lifecycle; the logic lives in
// the packages it assembles.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// ShutdownGrace bounds how long stopping may take (SIGTERM to exit).
const ShutdownGrace = 2 * time.Second

// Node is one agent built from a board config.
type Node struct {
	Board *board.Config
	World *worldmodel.Model
	Hooks *hooks.Manager
	Tools *tools.Registry
	Store *store.Store
	Agent *agent.Loop
	Log   *slog.Logger

	reflexes *agent.Reflexes
	ready    chan struct{}
	dir      string

	mu       sync.Mutex
	sensors  []sensors.Sensor               // from the board config
	limits   map[string][]sensors.Threshold // sensor name -> its thresholds
	owned    map[string][]sensors.Sensor    // plugin name -> its sensors
	runs     map[string]*sensorRun          // sensor name -> running goroutine
	critical []namedCritical
	deciders []namedDecider
	runCtx   context.Context // set while Run is running; plugins loaded later start under it
}

type namedDecider struct {
	plugin string
	d      agent.Decider
}

type namedCritical struct {
	plugin string
	h      CriticalHandler
}

// Factory builds a compiled-in plugin from the node (its board config,
// registry, world model …). It returns hooks.Decline(reason) when the plugin
// does not apply to this board (e.g. no LLM configured).
type Factory func(n *Node) (hooks.Plugin, error)

var (
	factoriesMu sync.Mutex
	factories   = map[string]Factory{}
)

// RegisterPlugin makes a compiled-in plugin available; called from init.
func RegisterPlugin(name string, f Factory) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	if _, dup := factories[name]; dup {
		panic("node: plugin registered twice: " + name)
	}
	factories[name] = f
}

// Optional plugin capabilities the node looks for.
type (
	// SensorProvider plugins bring sensors, started and stopped with them.
	SensorProvider interface{ Sensors() []sensors.Sensor }
	// DeciderProvider plugins bring a decider, asked after the fast paths.
	DeciderProvider interface{ Decider() agent.Decider }
	// StatusProvider plugins add a component to agent.status.
	StatusProvider interface{ Status() any }
	// CriticalHandler plugins see every Critical event synchronously, in
	// Raise, before the agent loop does: the e-stop path.
	CriticalHandler interface{ HandleCritical(worldmodel.Event) }
)

// Options for New.
type Options struct {
	Log *slog.Logger
	// ConfigDir is the board file's directory: sensors resolve relative
	// paths (clips, templates) against it.
	ConfigDir string
	// NoStore keeps history in memory and leaves the store file alone, so
	// `edgeagent check` and `tools` work while an agent holds the store.
	NoStore bool
}

// New builds everything without starting anything or touching hardware:
// `edgeagent check`, `tools` and `invoke` use it too.
func New(cfg *board.Config, o Options) (*Node, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	n := &Node{Board: cfg, Log: log, dir: o.ConfigDir, ready: make(chan struct{}), owned: map[string][]sensors.Sensor{}, runs: map[string]*sensorRun{}}
	n.World = worldmodel.New(worldmodel.Config{
		DefaultCapacity: cfg.World.DefaultCapacity, Capacities: cfg.World.Capacities,
		MaxSources: cfg.World.MaxSources, Events: cfg.World.Events,
	})
	n.Hooks = hooks.NewManager(log)
	var err error
	ok := false
	if !o.NoStore {
		if n.Store, err = store.Open(filepath.Join(cfg.DataDir, "edgeagent.db")); err != nil {
			return nil, err
		}
		defer func() {
			if !ok {
				_ = n.Store.Close()
			}
		}()
	}
	grants := map[string][]string{}
	for _, caller := range []string{"cli", "mqtt", "llm", "reflex", "motive"} {
		grants[caller], _ = cfg.Permissions.Of(caller)
	}
	n.Tools, err = tools.NewRegistry(tools.Options{Store: n.Store, Filters: n.Hooks, Grants: grants, Log: log})
	if err != nil {
		return nil, err
	}
	n.Agent = agent.New(agent.Config{
		Heartbeat: cfg.Agent.Heartbeat, Queue: cfg.Agent.Queue,
		CycleTimeout: cfg.Agent.CycleTimeout, SummaryBytes: cfg.LLM.SummaryBytes,
	}, n.World, n.Tools, n.Hooks, log)
	for _, t := range append(tools.Builtins(n.Tools, n.World), n.Agent.StatusTool()) {
		if err := n.Tools.Register("agent", t); err != nil {
			return nil, err
		}
	}
	rules := make([]agent.Reflex, len(cfg.Reflexes))
	for i, r := range cfg.Reflexes {
		rules[i] = agent.Reflex{On: r.On, Tool: r.Do.Tool, Params: r.Do.Params, Cooldown: r.Cooldown}
	}
	n.reflexes = agent.NewReflexes(rules)
	n.updateDecider()
	if err := n.buildSensors(); err != nil {
		return nil, err
	}
	if err := n.buildPlugins(); err != nil {
		return nil, err
	}
	n.Agent.Report("sensors", n.sensorStatus)
	ok = true
	return n, nil
}

func (n *Node) buildSensors() error {
	var errs []error
	n.limits = map[string][]sensors.Threshold{}
	for _, sc := range n.Board.Sensors {
		if !sc.Enabled {
			continue
		}
		scfg, limits, err := SensorConfig(n.Board, sc, n.dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n.limits[sc.Name] = limits
		s, err := sensors.New(scfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n.sensors = append(n.sensors, s)
	}
	return errors.Join(errs...)
}

// SensorConfig turns a board's sensor block into what a sensor kind and the
// threshold wrapper get. Tests of sensor kinds use it too, so that they see
// exactly what the runtime passes.
func SensorConfig(b *board.Config, sc board.Sensor, dir string) (sensors.Config, []sensors.Threshold, error) {
	cfg := sensors.Config{
		Name: sc.Name, Kind: sc.Kind, Platform: b.Device.Platform, Interval: sc.Interval,
		Bus: sc.Bus, Address: uint16(sc.Address), Pins: sc.Pins, Decode: sc.Options.Decode, Dir: dir,
	}
	if sc.Priority != "" {
		p, err := worldmodel.ParsePriority(sc.Priority)
		if err != nil {
			return cfg, nil, fmt.Errorf("sensor %q: %w", sc.Name, err)
		}
		cfg.Priority = &p
	}
	var limits []sensors.Threshold
	var errs []error
	for _, t := range sc.Thresholds {
		th := sensors.Threshold{Quantity: t.Quantity, Above: t.Above, Below: t.Below, Change: t.Change,
			Hysteresis: t.Hysteresis, Priority: worldmodel.High, Event: t.Event}
		if t.Priority != "" {
			p, err := worldmodel.ParsePriority(t.Priority)
			if err != nil {
				errs = append(errs, fmt.Errorf("sensor %q threshold on %q: %w", sc.Name, t.Quantity, err))
				continue
			}
			th.Priority = p
		}
		if err := th.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("sensor %q threshold on %q: %w", sc.Name, t.Quantity, err))
			continue
		}
		limits = append(limits, th)
	}
	return cfg, limits, errors.Join(errs...)
}

// buildPlugins constructs every registered plugin in name order; hooks then
// orders them by dependencies and priority.
func (n *Node) buildPlugins() error {
	factoriesMu.Lock()
	names := make([]string, 0, len(factories))
	for name := range factories {
		names = append(names, name)
	}
	factoriesMu.Unlock()
	sort.Strings(names)
	var plugins []hooks.Plugin
	for _, name := range names {
		factoriesMu.Lock()
		f := factories[name]
		factoriesMu.Unlock()
		p, err := f(n)
		if reason, declined := hooks.IsDeclined(err); declined {
			n.Log.Info("plugin not loaded", "plugin", name, "reason", reason)
			continue
		}
		if err != nil {
			return fmt.Errorf("plugin %s: %w", name, err)
		}
		plugins = append(plugins, p)
	}
	if err := n.Hooks.AddAll(plugins...); err != nil {
		return err
	}
	for _, p := range plugins {
		if err := n.attach(p); err != nil {
			return err
		}
	}
	return nil
}

// attach registers what a plugin brings besides hooks.
func (n *Node) attach(p hooks.Plugin) error {
	name := p.Info().Name
	if tp, ok := p.(tools.Provider); ok {
		for _, t := range tp.Tools() {
			if err := n.Tools.Register(name, t); err != nil {
				n.Tools.UnregisterOwner(name)
				return fmt.Errorf("plugin %s: %w", name, err)
			}
		}
	}
	n.mu.Lock()
	if sp, ok := p.(SensorProvider); ok {
		n.owned[name] = sp.Sensors()
	}
	if dp, ok := p.(DeciderProvider); ok {
		n.deciders = append(n.deciders, namedDecider{name, dp.Decider()})
	}
	if ch, ok := p.(CriticalHandler); ok {
		n.critical = append(n.critical, namedCritical{name, ch})
	}
	n.mu.Unlock()
	if sp, ok := p.(StatusProvider); ok {
		n.Agent.Report(name, sp.Status)
	}
	n.updateDecider()
	return nil
}

// detach undoes attach.
func (n *Node) detach(name string) {
	n.Tools.UnregisterOwner(name)
	n.mu.Lock()
	owned := n.owned[name]
	delete(n.owned, name)
	n.deciders = slices.DeleteFunc(n.deciders, func(d namedDecider) bool { return d.plugin == name })
	n.critical = slices.DeleteFunc(n.critical, func(c namedCritical) bool { return c.plugin == name })
	n.mu.Unlock()
	for _, s := range owned {
		n.stopSensor(s.Name())
	}
	n.Agent.Report(name, func() any { return "unloaded" })
	n.updateDecider()
}

func (n *Node) updateDecider() {
	n.mu.Lock()
	chain := agent.Chain{agent.Explicit{}, n.reflexes}
	for _, d := range n.deciders {
		chain = append(chain, d.d)
	}
	n.mu.Unlock()
	n.Agent.SetDecider(chain)
}

// Raise records an event, runs the Critical handlers and interrupts the
// agent. Sensors reach it through their Sink; MQTT and tools may call it.
func (n *Node) Raise(e worldmodel.Event) {
	e = n.World.Record(e)
	if e.Priority >= worldmodel.Critical {
		n.mu.Lock()
		handlers := slices.Clone(n.critical)
		n.mu.Unlock()
		for _, c := range handlers {
			c.h.HandleCritical(e)
		}
	}
	n.Agent.Interrupt(e)
}

// Ready is closed once Run has started everything.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// LoadPlugin adds a plugin to a running (or not yet running) node: hooks,
// tools, sensors, decider.
func (n *Node) LoadPlugin(ctx context.Context, p hooks.Plugin) error {
	if err := n.Hooks.Load(ctx, p); err != nil {
		return err
	}
	if err := n.attach(p); err != nil {
		_ = n.Hooks.Unload(ctx, p.Info().Name)
		return err
	}
	n.mu.Lock()
	runCtx, owned := n.runCtx, n.owned[p.Info().Name]
	n.mu.Unlock()
	if runCtx != nil {
		for _, s := range owned {
			n.startSensor(runCtx, s)
		}
	}
	return nil
}

// UnloadPlugin stops a plugin's sensors, removes its tools and hooks.
func (n *Node) UnloadPlugin(ctx context.Context, name string) error {
	// Hooks first: it refuses while another plugin depends on this one, and
	// then nothing must have been torn down.
	err := n.Hooks.Unload(ctx, name)
	if errors.Is(err, hooks.ErrNotFound) {
		return fmt.Errorf("plugin %q is not loaded", name)
	}
	var f hooks.Failure
	if err != nil && !errors.As(err, &f) {
		return err
	}
	n.detach(name)
	return err // a failed OnAgentStop: the plugin is gone, report why
}

// Run starts plugins, sensors and the agent loop, reports ready, and blocks
// until ctx ends; then it stops everything within ShutdownGrace and closes
// the node.
func (n *Node) Run(ctx context.Context, started time.Time) error {
	defer n.Close()
	if err := n.Hooks.Start(ctx); err != nil {
		return fmt.Errorf("starting plugins: %w", err)
	}
	runCtx, cancelSensors := context.WithCancel(ctx)
	defer cancelSensors()
	defer func() {
		n.mu.Lock()
		n.runCtx = nil // plugins loaded after Run have nothing to start under
		n.mu.Unlock()
	}()
	n.mu.Lock()
	n.runCtx = runCtx
	all := slices.Clone(n.sensors)
	for _, owned := range n.owned {
		all = append(all, owned...)
	}
	n.mu.Unlock()
	for _, s := range all {
		n.startSensor(runCtx, s)
	}
	loopCtx, stopLoop := context.WithCancel(context.WithoutCancel(ctx))
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); _ = n.Agent.Run(loopCtx) }()

	close(n.ready)
	n.Log.Info("ready", "device", n.Board.Device.ID, "platform", n.Board.Device.Platform,
		"sensors", len(all), "tools", len(n.Tools.List()), "start_to_ready", time.Since(started).Round(time.Microsecond))

	<-ctx.Done()
	n.Log.Info("stopping")
	deadline := time.Now().Add(ShutdownGrace)
	cancelSensors()
	stopLoop()
	var errs []error
	if !n.waitSensors(time.Until(deadline)) {
		errs = append(errs, errors.New("some sensors did not stop in time"))
	}
	select {
	case <-loopDone:
	case <-time.After(time.Until(deadline)):
		errs = append(errs, errors.New("agent loop did not stop in time"))
	}
	sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	if err := n.Hooks.Stop(sctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Close saves pending state and closes the store. Run calls it; callers
// that only built the node (check, tools, invoke) call it themselves.
func (n *Node) Close() error {
	err := n.Tools.Close()
	if n.Store != nil {
		err = errors.Join(err, n.Store.Close())
	}
	return err
}

// Healthy reports why the node is not healthy, or nil. A cycle running for
// more than twice its deadline means the loop is wedged (a tool ignoring its
// context); the systemd watchdog then stops being fed and restarts us.
func (n *Node) Healthy() error {
	limit := 2 * n.Board.Agent.CycleTimeout
	if limit <= 0 {
		limit = time.Minute
	}
	if busy := n.Agent.Busy(); busy > limit {
		return fmt.Errorf("agent cycle running for %v (limit %v)", busy.Round(time.Second), limit)
	}
	return nil
}
