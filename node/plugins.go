package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/admin"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// host is the node as its plugins see it: plugin.Host, nothing more.
type host struct{ n *Node }

func (h host) Board() *board.Config     { return h.n.Board }
func (h host) Dir() string              { return h.n.dir }
func (h host) BoardFile() string        { return h.n.file }
func (h host) World() plugin.World      { return h.n.World }
func (h host) Tools() plugin.Tools      { return h.n.Tools }
func (h host) Agent() plugin.Agent      { return h.n.Agent }
func (h host) Raise(e worldmodel.Event) { h.n.Raise(e) }
func (h host) Plugins() []hooks.Plugin  { return h.n.Hooks.Plugins() }
func (h host) Store() store.Store       { return h.n.Store }
func (h host) Clock() clock.Clock       { return h.n.clock }
func (h host) Log() *slog.Logger        { return h.n.Log }
func (n *Node) host() plugin.Host       { return host{n} }
func (n *Node) plugin(name string) bool { _, ok := n.Hooks.Get(name); return ok }

// buildPlugins constructs every registered plugin in name order; hooks then
// orders them by dependencies and priority.
func (n *Node) buildPlugins() error {
	var plugins []hooks.Plugin
	for _, name := range plugin.Names() {
		f, _ := plugin.Lookup(name)
		p, err := f(n.host())
		if reason, declined := hooks.IsDeclined(err); declined {
			n.Log.Info("plugin not loaded", "plugin", name, "reason", reason)
			for _, t := range hooks.DeclinedTools(err) {
				n.Tools.MarkAbsent(t, "plugin "+name+" did not start: "+reason)
			}
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
	if sp, ok := p.(plugin.SensorProvider); ok {
		n.owned[name] = sp.Sensors()
	}
	if dp, ok := p.(plugin.DeciderProvider); ok {
		n.deciders = append(n.deciders, namedDecider{name, dp.Decider()})
	}
	if ch, ok := p.(plugin.CriticalHandler); ok {
		n.critical = append(n.critical, namedCritical{name, ch})
	}
	n.mu.Unlock()
	if sp, ok := p.(plugin.StatusProvider); ok {
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
		n.supervisor.Stop(s.Name())
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

// LoadRegistered builds the compiled-in plugin registered under name and
// loads it.
func (n *Node) LoadRegistered(ctx context.Context, name string) error {
	f, ok := plugin.Lookup(name)
	if !ok {
		return fmt.Errorf("%w: no compiled-in plugin %q", ErrPlugin, name)
	}
	if n.plugin(name) {
		return fmt.Errorf("%w: plugin %q is already loaded", ErrPlugin, name)
	}
	p, err := f(n.host())
	if reason, declined := hooks.IsDeclined(err); declined {
		return fmt.Errorf("%w: plugin %q does not apply to this board: %s", ErrPlugin, name, reason)
	}
	if err != nil {
		return fmt.Errorf("plugin %s: %w", name, err)
	}
	return n.LoadPlugin(ctx, p)
}

// ErrPlugin classifies a plugin request the node refuses (unknown, already
// loaded, not applicable, not loaded).
var ErrPlugin = errors.New("plugin request refused")

// notLoaded is the refusal to unload a plugin that is not loaded: an
// ErrPlugin, and a hooks.ErrNotFound for callers that unload just in case.
type notLoaded string

func (n notLoaded) Error() string {
	return fmt.Sprintf("%v: plugin %q is not loaded", ErrPlugin, string(n))
}

func (notLoaded) Is(target error) bool { return target == ErrPlugin || target == hooks.ErrNotFound }

// UnloadPlugin stops a plugin's sensors, removes its tools and hooks.
func (n *Node) UnloadPlugin(ctx context.Context, name string) error {
	// Hooks first: it refuses while another plugin depends on this one, and
	// then nothing must have been torn down.
	err := n.Hooks.Unload(ctx, name)
	if errors.Is(err, hooks.ErrNotFound) {
		return notLoaded(name)
	}
	var f hooks.Failure
	if err != nil && !errors.As(err, &f) {
		return err
	}
	n.detach(name)
	return err // a failed OnAgentStop: the plugin is gone, report why
}

// PluginStates are the compiled-in plugins and any loaded ones besides,
// with whether each is loaded.
func (n *Node) PluginStates() []admin.PluginState {
	names := plugin.Names()
	for _, p := range n.Hooks.Plugins() { // loaded plugins that are not compiled in
		if _, ok := plugin.Lookup(p.Info().Name); !ok {
			names = append(names, p.Info().Name)
		}
	}
	slices.Sort(names)
	out := make([]admin.PluginState, len(names))
	for i, name := range names {
		out[i] = admin.PluginState{Name: name, Loaded: n.plugin(name)}
	}
	return out
}

// Find returns the first loaded plugin that has the capability T, e.g. the
// decision engine (interface{ Engine() *agent.Engine }).
func Find[T any](n *Node) (T, bool) {
	for _, p := range n.Hooks.Plugins() {
		if c, ok := p.(T); ok {
			return c, true
		}
	}
	var zero T
	return zero, false
}

// Engine returns the decision engine (nil when neither the llm nor the
// matcher plugin is loaded).
func (n *Node) Engine() *agent.Engine {
	if p, ok := Find[interface{ Engine() *agent.Engine }](n); ok {
		return p.Engine()
	}
	return nil
}
