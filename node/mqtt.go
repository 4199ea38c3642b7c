package node

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The MQTT control plane is a compiled-in plugin. `plugins: {mqtt:
// {enabled: false}}` in a board file runs without it.
func init() {
	RegisterPlugin("mqtt", func(n *Node) (hooks.Plugin, error) {
		return mqtt.New(mqtt.Deps{
			Board: n.Board, World: n.World, Tools: n.Tools, Agent: n.Agent,
			Host: mqttHost{n}, Log: n.Log, ConfigDir: n.dir,
		})
	})
}

// ReloadRequests delivers the board configs an administrator asked for over
// MQTT, already validated. Whoever runs the node (cmd/edgeagent run) stops
// it and runs a node built from the config instead; when nobody receives,
// the request is answered "not applied". Nil (blocks forever) without the
// mqtt plugin.
func (n *Node) ReloadRequests() <-chan mqtt.Reload {
	if p, ok := n.Hooks.Get("mqtt"); ok {
		if plane, ok := p.(*mqtt.Plane); ok {
			return plane.Reloads()
		}
	}
	return nil
}

// mqttHost is the node as the control plane sees it.
type mqttHost struct{ n *Node }

func (h mqttHost) Raise(e worldmodel.Event) { h.n.Raise(e) }

func (h mqttHost) Plugins() []mqtt.PluginState {
	factoriesMu.Lock()
	names := make([]string, 0, len(factories))
	for name := range factories {
		names = append(names, name)
	}
	factoriesMu.Unlock()
	for _, p := range h.n.Hooks.Plugins() { // loaded plugins that are not compiled-in factories
		if _, ok := factory(p.Info().Name); !ok {
			names = append(names, p.Info().Name)
		}
	}
	sort.Strings(names)
	out := make([]mqtt.PluginState, len(names))
	for i, name := range names {
		_, loaded := h.n.Hooks.Get(name)
		out[i] = mqtt.PluginState{Name: name, Loaded: loaded}
	}
	return out
}

func factory(name string) (Factory, bool) {
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	f, ok := factories[name]
	return f, ok
}

// LoadPlugin builds a compiled-in plugin by name and loads it.
func (h mqttHost) LoadPlugin(ctx context.Context, name string) error {
	f, ok := factory(name)
	if !ok {
		return fmt.Errorf("no compiled-in plugin %q", name)
	}
	if _, loaded := h.n.Hooks.Get(name); loaded {
		return fmt.Errorf("plugin %q is already loaded", name)
	}
	p, err := f(h.n)
	if reason, declined := hooks.IsDeclined(err); declined {
		return fmt.Errorf("plugin %q does not apply to this board: %s", name, reason)
	}
	if err != nil {
		return fmt.Errorf("plugin %s: %w", name, err)
	}
	return h.n.LoadPlugin(ctx, p)
}

func (h mqttHost) UnloadPlugin(ctx context.Context, name string) error {
	return h.n.UnloadPlugin(ctx, name)
}

// CheckConfig builds a node from cfg without a store and without starting
// it: sensor kinds, their options and every plugin's options are checked.
func (h mqttHost) CheckConfig(cfg *board.Config, dir string) error {
	dry, err := New(cfg, Options{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ConfigDir: dir, NoStore: true})
	if err != nil {
		return err
	}
	return dry.Close()
}
