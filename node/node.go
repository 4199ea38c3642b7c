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
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/memstat"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensorconf"
	"github.com/edgeagent/edgeagent/sensors/supervise"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/admin"
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
	Store store.Store
	Agent *agent.Loop
	Log   *slog.Logger

	reflexes *agent.Reflexes
	ready    chan struct{}
	dir      string
	file     string // the board file, "" when the board did not come from one
	clock    clock.Clock
	reloads  chan admin.Reload
	// noSensors: see Options.NoSensors.
	noSensors bool

	supervisor *supervise.Supervisor // runs the sensors, keeps their health

	mu       sync.Mutex
	sensors  []sensors.Sensor               // from the board config
	limits   map[string][]sensors.Threshold // sensor name -> its thresholds
	owned    map[string][]sensors.Sensor    // plugin name -> its sensors
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
	h      plugin.CriticalHandler
}

// Options for New.
type Options struct {
	Log *slog.Logger
	// ConfigDir is the board file's directory: sensors resolve relative
	// paths (clips, templates) against it.
	ConfigDir string
	// ConfigFile is the board file itself when the board comes from one:
	// config.reload {save: true} writes an accepted config to it.
	ConfigFile string
	// NoStore keeps history in memory and leaves the store file alone, so
	// `edgeagent check` and `tools` work while an agent holds the store.
	NoStore bool
	// Store, when set, is the store to use instead of opening one (a
	// replay's node, and the node a replay's reload builds, share one in
	// memory, as a robot's reload keeps its store file).
	Store store.Store
	// NoSensors keeps the board's sensors on the board, so that the plugins
	// and tools see it as it is, but never runs them, and a sensor that
	// this binary cannot build is no error: a replay feeds their recorded
	// readings instead.
	NoSensors bool
	// Clock is the time source given to plugins (default: the wall clock;
	// a replay gives a virtual one).
	Clock clock.Clock
}

// New builds everything without starting anything or touching hardware:
// `edgeagent check`, `tools` and `invoke` use it too.
func New(cfg *board.Config, o Options) (*Node, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	n := &Node{Board: cfg, Log: log, dir: o.ConfigDir, file: o.ConfigFile, clock: o.Clock, noSensors: o.NoSensors, ready: make(chan struct{}), reloads: make(chan admin.Reload),
		owned: map[string][]sensors.Sensor{}}
	if n.clock == nil {
		n.clock = clock.Real()
	}
	n.World = worldmodel.New(worldmodel.Config{
		DefaultCapacity: cfg.World.DefaultCapacity, Capacities: capacities(cfg), Horizon: cfg.World.Horizon,
		MaxSources: cfg.World.MaxSources, Events: cfg.World.Events, Clock: n.clock,
	})
	n.supervisor = supervise.New(n.World, n.Raise, n.clock, log)
	n.Hooks = hooks.NewManager(log)
	n.Store = store.NewMemory()
	switch {
	case o.Store != nil:
		n.Store = o.Store
	case !o.NoStore:
		st, err := store.Open(filepath.Join(cfg.DataDir, "edgeagent.db"))
		if err != nil {
			return nil, err
		}
		n.Store = st
	}
	ok := false
	defer func() {
		if !ok {
			_ = n.Store.Close()
		}
	}()
	var err error
	grants := map[string][]string{}
	for _, caller := range []string{"cli", "mqtt", "llm", "reflex", "motive"} {
		grants[caller], _ = cfg.Permissions.Of(caller)
	}
	n.Tools, err = tools.NewRegistry(tools.Options{Store: n.Store, Filters: n.Hooks, Grants: grants, Log: log, Journal: n.World, Clock: n.clock})
	if err != nil {
		return nil, err
	}
	n.Agent = agent.New(agent.Config{
		Heartbeat: cfg.Agent.Heartbeat, Queue: cfg.Agent.Queue,
		CycleTimeout: cfg.Agent.CycleTimeout, SummaryBytes: cfg.LLM.SummaryBytes, Clock: n.clock,
	}, n.World, n.Tools, n.Hooks, log)
	for _, t := range append(tools.Builtins(n.Tools, n.World), n.Agent.StatusTool()) {
		if err := n.Tools.Register("agent", t); err != nil {
			return nil, err
		}
	}
	for _, t := range n.adminTools() {
		if err := n.Tools.Register("node", t); err != nil {
			return nil, err
		}
	}
	rules := make([]agent.Reflex, len(cfg.Reflexes))
	for i, r := range cfg.Reflexes {
		rules[i] = agent.Reflex{On: r.On, Tool: r.Do.Tool, Params: r.Do.Params, Cooldown: r.Cooldown}
	}
	n.reflexes = agent.NewReflexes(rules)
	n.reflexes.UseClock(n.clock.Now)
	n.updateDecider()
	if err := n.buildSensors(); err != nil && !o.NoSensors {
		return nil, err
	}
	if err := n.buildPlugins(); err != nil {
		return nil, err
	}
	n.Agent.Report("sensors", n.supervisor.Status)
	n.Agent.Report("memory", func() any { return memstat.Read() })
	cfg.ReleaseTrees() // every kind and plugin has decoded its options block
	ok = true
	return n, nil
}

// capacities are the board's ring capacities and, unless the board sets
// them, the small rings of the costly sources each sensor's kind declared
// (sensors.Watched): the node does not know kinds.
func capacities(cfg *board.Config) map[string]int {
	caps := maps.Clone(cfg.World.Capacities)
	for _, s := range cfg.Sensors {
		for _, w := range sensors.WatchedSources(s.Kind) {
			if caps == nil {
				caps = map[string]int{}
			}
			if _, set := caps[s.Name+w.Suffix]; !set {
				caps[s.Name+w.Suffix] = w.Size
			}
		}
	}
	return caps
}

func (n *Node) buildSensors() error {
	var errs []error
	n.limits = map[string][]sensors.Threshold{}
	for i, sc := range n.Board.Sensors {
		if !sc.Enabled {
			continue
		}
		scfg, limits, err := sensorconf.Of(n.Board, sc, n.dir)
		if err != nil {
			errs = append(errs, sensorconf.Locate(n.Board, i, err))
			continue
		}
		n.limits[sc.Name] = limits
		scfg.Clock = n.clock
		s, err := sensors.New(scfg)
		if err != nil {
			errs = append(errs, sensorconf.Locate(n.Board, i, err))
			continue
		}
		n.sensors = append(n.sensors, s)
	}
	return errors.Join(errs...)
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

// Run starts plugins, sensors and the agent loop, reports ready, and blocks
// until ctx ends; then it stops everything within ShutdownGrace and closes
// the node. started is when the process started, for the start-to-ready
// time it logs; zero means now.
func (n *Node) Run(ctx context.Context, started time.Time) error {
	if started.IsZero() {
		started = clock.Real().Now()
	}
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
		"sensors", len(all), "tools", len(n.Tools.List()), "start_to_ready", clock.Real().Since(started).Round(time.Microsecond))

	<-ctx.Done()
	n.Log.Info("stopping")
	// The grace, like the start-up time above, is the process's (SIGTERM
	// to exit), on the wall clock whatever clock the run uses: a replay's
	// virtual clock stands still while the node stops.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	cancelSensors()
	stopLoop()
	// Sensors finish in parallel with the loop and the plugins: a driver's
	// own stop can take half a second (the SCD4x waits 500 ms after its
	// stop command), which in series left the plugins too little of the 2 s.
	sensorsStopped := make(chan bool, 1)
	go func() { sensorsStopped <- n.supervisor.Wait(sctx) }()
	var errs []error
	select {
	case <-loopDone:
	case <-sctx.Done():
		errs = append(errs, errors.New("agent loop did not stop in time"))
	}
	if err := n.Hooks.Stop(sctx); err != nil {
		errs = append(errs, err)
	}
	if !<-sensorsStopped {
		errs = append(errs, errors.New("some sensors did not stop in time"))
	}
	return errors.Join(errs...)
}

// startSensor hands s to the supervisor, unless the node runs none.
func (n *Node) startSensor(ctx context.Context, s sensors.Sensor) {
	if !n.noSensors {
		n.supervisor.Start(ctx, s, n.limits[s.Name()])
	}
}

// Close saves pending state and closes the store. Run calls it; callers
// that only built the node (check, tools, invoke) call it themselves.
func (n *Node) Close() error {
	return errors.Join(n.Tools.Close(), n.Store.Close())
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
