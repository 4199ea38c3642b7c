package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/edgeagent/edgeagent/internal/wait"
)

// Manager holds the loaded plugins in execution order and runs their hooks.
//
// The stage methods (BeforeSense ... OnError) run on every agent cycle and
// for every action, so they take no lock: they read an immutable snapshot in
// which each hook's plugins are already ordered and type-asserted. Add and
// Remove build a new snapshot and swap it in, so they are safe while stages
// run; a stage already under way finishes with the snapshot it started with,
// which means a plugin may still see a call that began before its Remove
// returned.
//
// Lifecycle methods (Add, AddAll, Remove, Load, Unload, Start, Stop) are
// serialised by one mutex that is held while OnAgentStart/OnAgentStop run, so
// those two hooks must not call back into their own Manager's lifecycle
// methods.
type Manager struct {
	log  *slog.Logger
	snap atomic.Pointer[snapshot]

	mu      sync.Mutex
	running bool
	started map[string]bool // plugins that went through start and are owed a stop

	bg wait.Group // parallel hook calls that outlived the stage call
}

type hook[H any] struct {
	plugin string
	h      H
}

// snapshot is never modified after it is published.
type snapshot struct {
	plugins []Plugin // execution order
	infos   []Info   // parallel to plugins
	index   map[string]int

	beforeSense   []hook[BeforeSenser]
	afterSense    []hook[AfterSenser]
	beforePlan    []hook[BeforePlanner]
	afterPlan     []hook[AfterPlanner]
	beforeAct     []hook[BeforeActer]
	afterAct      []hook[AfterActer]
	beforeReflect []hook[BeforeReflecter]
	afterReflect  []hook[AfterReflecter]
	onError       []hook[ErrorHandler]
}

// NewManager returns an empty Manager that logs to log (slog.Default() if nil).
func NewManager(log *slog.Logger) *Manager {
	if log == nil {
		log = slog.Default()
	}
	m := &Manager{log: log, started: map[string]bool{}}
	m.snap.Store(&snapshot{index: map[string]int{}})
	return m
}

// Add loads p. It fails, leaving the Manager unchanged, when the name is empty
// or already loaded, when a DependsOn plugin is not loaded, or when p's
// constraints close an ordering cycle; the cycle error names it ("a -> b -> a")
// together with the constraint behind each step.
//
// Add only registers hooks: it does not call OnAgentStart even when the
// Manager is running. Use Load for that.
func (m *Manager) Add(p Plugin) error { return m.AddAll(p) }

// AddAll loads several plugins at once, all or none. Dependencies may be
// satisfied within the batch, so a loader can add a board's plugins in
// whatever order its config lists them.
func (m *Manager) AddAll(ps ...Plugin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addLocked(ps)
}

func (m *Manager) addLocked(ps []Plugin) error {
	old := m.snap.Load()
	plugins := slices.Clip(old.plugins)
	infos := slices.Clip(old.infos)
	seen := make(map[string]bool, len(ps))
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		if p == nil {
			return errors.New("hooks: add: nil plugin")
		}
		in := p.Info()
		switch _, loaded := old.index[in.Name]; {
		case in.Name == "":
			return fmt.Errorf("hooks: add: plugin %T has an empty name", p)
		case loaded || seen[in.Name]:
			return fmt.Errorf("hooks: add: plugin %q is already loaded", in.Name)
		}
		seen[in.Name] = true
		names = append(names, in.Name)
		plugins = append(plugins, p)
		infos = append(infos, cloneInfo(in))
	}
	s, err := build(plugins, infos)
	if err != nil {
		return fmt.Errorf("hooks: add: %w", err)
	}
	m.snap.Store(s)
	for _, name := range names {
		i := s.index[name]
		m.log.Debug("plugin added", "plugin", name, "version", s.infos[i].Version, "position", i)
	}
	return nil
}

// cloneInfo copies the slices so a plugin that reuses its Info's backing
// arrays cannot change the Manager's view of its constraints.
func cloneInfo(in Info) Info {
	in.DependsOn = slices.Clone(in.DependsOn)
	in.RunAfter = slices.Clone(in.RunAfter)
	in.RunBefore = slices.Clone(in.RunBefore)
	return in
}

// Remove unloads the named plugin. It refuses while another loaded plugin
// depends on it, naming those plugins, because they were promised it would be
// there. Remove does not call OnAgentStop; Unload does.
func (m *Manager) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.removeLocked(name)
}

func (m *Manager) removeLocked(name string) error {
	old := m.snap.Load()
	i, ok := old.index[name]
	if !ok {
		return fmt.Errorf("hooks: remove %q: %w", name, ErrNotFound)
	}
	var dependents []string
	for _, in := range old.infos {
		if slices.Contains(in.DependsOn, name) {
			dependents = append(dependents, in.Name)
		}
	}
	if dependents != nil {
		slices.Sort(dependents)
		return fmt.Errorf("hooks: remove %q: loaded plugins depend on it: %s", name, strings.Join(dependents, ", "))
	}
	plugins := slices.Delete(slices.Clone(old.plugins), i, i+1)
	infos := slices.Delete(slices.Clone(old.infos), i, i+1)
	s, err := build(plugins, infos)
	if err != nil { // removing a plugin only removes constraints; cannot happen
		return fmt.Errorf("hooks: remove %q: %w", name, err)
	}
	m.snap.Store(s)
	delete(m.started, name)
	m.log.Debug("plugin removed", "plugin", name)
	return nil
}

// build orders the plugins and resolves, once, which hooks each implements.
func build(plugins []Plugin, infos []Info) (*snapshot, error) {
	order, err := executionOrder(infos)
	if err != nil {
		return nil, err
	}
	s := &snapshot{
		plugins: make([]Plugin, len(order)),
		infos:   make([]Info, len(order)),
		index:   make(map[string]int, len(order)),
	}
	for k, i := range order {
		p, name := plugins[i], infos[i].Name
		s.plugins[k], s.infos[k], s.index[name] = p, infos[i], k
		collect(&s.beforeSense, name, p)
		collect(&s.afterSense, name, p)
		collect(&s.beforePlan, name, p)
		collect(&s.afterPlan, name, p)
		collect(&s.beforeAct, name, p)
		collect(&s.afterAct, name, p)
		collect(&s.beforeReflect, name, p)
		collect(&s.afterReflect, name, p)
		collect(&s.onError, name, p)
	}
	return s, nil
}

func collect[H any](dst *[]hook[H], name string, p Plugin) {
	if h, ok := p.(H); ok {
		*dst = append(*dst, hook[H]{plugin: name, h: h})
	}
}

// Get returns the loaded plugin with that name.
func (m *Manager) Get(name string) (Plugin, bool) {
	s := m.snap.Load()
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return s.plugins[i], true
}

// Plugins returns the loaded plugins in execution order.
func (m *Manager) Plugins() []Plugin { return slices.Clone(m.snap.Load().plugins) }

// Start calls OnAgentStart on every plugin in execution order, so a plugin
// can rely on its dependencies having started. The first error aborts: the
// plugins already started are stopped again in reverse order and the error
// (a Failure naming the plugin, joined with any stop errors) is returned.
// Calling Start on a running Manager is an error.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		return errors.New("hooks: start: already running")
	}
	s := m.snap.Load()
	var done []int
	for i, p := range s.plugins {
		name := s.infos[i].Name
		if err := m.start(ctx, name, p); err != nil {
			errs := []error{err}
			for _, j := range slices.Backward(done) {
				if err := m.stop(ctx, s.infos[j].Name, s.plugins[j]); err != nil {
					errs = append(errs, err)
				}
			}
			return errors.Join(errs...)
		}
		done = append(done, i)
	}
	for _, i := range done {
		m.started[s.infos[i].Name] = true
	}
	m.running = true
	m.log.Debug("plugins started", "count", len(done))
	return nil
}

// Stop first waits (bounded by ctx) for parallel hook calls still running in
// the background, so no hook runs on a stopped plugin, then calls OnAgentStop
// in reverse execution order on every plugin that was started, so dependents
// stop before what they depend on. Every plugin is stopped even if some fail
// or ctx has ended; the errors are joined. On a Manager that is not running,
// Stop only does the waiting.
func (m *Manager) Stop(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if err := m.bg.Wait(ctx); err != nil {
		errs = append(errs, fmt.Errorf("hooks: stop: %d hook calls still running: %w", m.bg.Running(), err))
	}
	if !m.running {
		return errors.Join(errs...)
	}
	s := m.snap.Load()
	for i, p := range slices.Backward(s.plugins) {
		name := s.infos[i].Name
		if !m.started[name] {
			continue
		}
		if err := m.stop(ctx, name, p); err != nil {
			errs = append(errs, err)
		}
	}
	clear(m.started)
	m.running = false
	return errors.Join(errs...)
}

// Load is Add for a running agent: after adding p it calls p.OnAgentStart if
// the Manager has been started, and removes p again if that fails, so a
// plugin loaded at run time is never half started.
func (m *Manager) Load(ctx context.Context, p Plugin) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.addLocked([]Plugin{p}); err != nil {
		return err
	}
	if !m.running {
		return nil
	}
	name := p.Info().Name
	if err := m.start(ctx, name, p); err != nil {
		_ = m.removeLocked(name) // nothing can depend on it yet
		return err
	}
	m.started[name] = true
	return nil
}

// Unload is Remove for a running agent: it removes the plugin and then, if it
// was started, calls its OnAgentStop. The plugin is removed even if stopping
// fails. Hook calls that began before Unload may still be running.
func (m *Manager) Unload(ctx context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.Get(name)
	if !ok {
		return fmt.Errorf("hooks: unload %q: %w", name, ErrNotFound)
	}
	wasStarted := m.started[name]
	if err := m.removeLocked(name); err != nil {
		return err
	}
	if wasStarted {
		return m.stop(ctx, name, p)
	}
	return nil
}

func (m *Manager) start(ctx context.Context, name string, p Plugin) error {
	if st, ok := p.(Starter); ok {
		return m.life(ctx, name, HookAgentStart, st.OnAgentStart)
	}
	return nil
}

func (m *Manager) stop(ctx context.Context, name string, p Plugin) error {
	if st, ok := p.(Stopper); ok {
		return m.life(ctx, name, HookAgentStop, st.OnAgentStop)
	}
	return nil
}

// life runs a plugin's lifecycle hook of stage; its error or panic comes
// back as a Failure naming the plugin.
func (m *Manager) life(ctx context.Context, name, stage string, f func(context.Context) error) error {
	if err := callLife(f, ctx); err != nil {
		m.logPanic(name, stage, err)
		return Failure{Stage: stage, Plugin: name, Err: err}
	}
	return nil
}

func callLife(f func(context.Context) error, ctx context.Context) (err error) {
	defer recoverInto(&err)
	return f(ctx)
}
