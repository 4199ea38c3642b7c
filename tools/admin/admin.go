// Package admin is the agent's administration as tools like any other (one
// command language, one permission model, one audit path): plugins.list,
// plugins.load, plugins.unload and config.reload, which MQTT, the CLI or the
// dashboard call with the admin permission. The node registers them, since
// they change the node itself, and gives them a Config: the few things of
// the node they change, never the node.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
)

// Plugins are the running agent's plugins, as the plugins.* tools change
// them. Load and unload refusals leave the agent as it was.
type Plugins interface {
	// PluginStates are the compiled-in plugins and any loaded ones
	// besides, with whether each is loaded.
	PluginStates() []PluginState
	// LoadRegistered builds the compiled-in plugin registered under name
	// and loads it.
	LoadRegistered(ctx context.Context, name string) error
	// UnloadPlugin removes a plugin; a hooks.Failure means it is gone but
	// its stop failed.
	UnloadPlugin(ctx context.Context, name string) error
}

// PluginState is one line of plugins.list.
type PluginState struct {
	Name   string `json:"name"`
	Loaded bool   `json:"loaded"`
}

// Config is what the admin tools work on.
type Config struct {
	Plugins Plugins
	// Check builds an agent from cfg without starting it (node.CheckConfig):
	// it checks what the board's own validation cannot, sensor kinds,
	// their options and every plugin's options.
	Check func(cfg *board.Config, dir string) error
	// Dir is the running board's directory: a reload by path is confined
	// to it, and relative paths in a reloaded yaml resolve against it.
	Dir string
	// File is the board file the agent runs, "" when the board did not
	// come from one: config.reload {save: true} writes to it.
	File string
	// Reloads hands an accepted config to whoever runs the agent.
	Reloads chan<- Reload
	Log     *slog.Logger
	// Clock bounds the reload's hand-off (default: the wall clock).
	Clock clock.Clock
}

// Tools are the admin tools over c.
func Tools(c Config) []tools.Tool {
	c.Clock = clock.Or(c.Clock)
	a := &admin{c}
	return []tools.Tool{
		tools.Func(tools.Spec{Name: "plugins.list", Description: "The compiled-in plugins and whether each is loaded.",
			Permission: "admin", Params: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Result{Value: c.Plugins.PluginStates()}, nil
			}),
		a.pluginTool("plugins.load", "Build a compiled-in plugin and load it into the running agent.", true, c.Plugins.LoadRegistered),
		a.pluginTool("plugins.unload", "Stop a plugin and remove its tools, sensors and hooks.", false, c.Plugins.UnloadPlugin),
		tools.Typed(tools.Spec{Name: "config.reload",
			Description: "Validate a board config and, if valid, rebuild the agent from it. Give path (a board file in the running board's directory) or yaml (the file's content); with yaml, save: true also writes it to the board file the agent runs (the previous one kept as .bak).",
			Permission:  "admin",
			Params: json.RawMessage(`{"type":"object","properties":{
  "path":{"type":"string","minLength":1,"maxLength":256,"description":"a board file in the running board's directory"},
  "yaml":{"type":"string","minLength":1,"maxLength":262144,"description":"a board file's content"},
  "save":{"type":"boolean","description":"with yaml: write it to the running board file once it is accepted, so it outlives a restart"}},
  "additionalProperties":false}`)},
			a.reload),
	}
}

type admin struct{ Config }

// pluginTool is plugins.load or plugins.unload: do to the named plugin.
func (a *admin) pluginTool(name, desc string, load bool, do func(context.Context, string) error) tools.Tool {
	type args struct {
		Plugin string `json:"plugin"`
	}
	return tools.Typed(tools.Spec{Name: name, Description: desc, Permission: "admin",
		Params: json.RawMessage(`{"type":"object","properties":{"plugin":{"type":"string","minLength":1,"maxLength":64,"description":"a compiled-in plugin's name (see plugins.list)"}},"required":["plugin"],"additionalProperties":false}`)},
		func(ctx context.Context, req args) (tools.Result, error) {
			if err := notThroughItself(ctx, req.Plugin); err != nil {
				return tools.Result{}, err
			}
			return a.pluginResult(ctx, req.Plugin, load, do(ctx, req.Plugin))
		})
}

// notThroughItself refuses to load or unload the plugin a request came
// through (the mqtt plugin over MQTT): the reply would have no way back.
func notThroughItself(ctx context.Context, plugin string) error {
	if plugin == tools.CallerOf(ctx) {
		return &tools.Error{Code: tools.CodeRefused, Msg: fmt.Sprintf("the %s plugin cannot be loaded or unloaded by a request that comes through it", plugin)}
	}
	return nil
}

// pluginResult: whatever stops a load or unload (unknown plugin, a
// dependency, a failed start) leaves the agent as it was, so it is a refusal.
func (a *admin) pluginResult(ctx context.Context, name string, load bool, err error) (tools.Result, error) {
	var stopErr hooks.Failure
	if !load && errors.As(err, &stopErr) { // unloaded, but its OnAgentStop failed
		a.Log.Warn("plugin unloaded; its stop failed", "plugin", name, "err", err)
		return tools.Result{Value: map[string]any{"plugin": name, "loaded": false, "stop_error": err.Error()}}, nil
	}
	if err != nil {
		return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: err.Error()}
	}
	verb := "unloaded"
	if load {
		verb = "loaded"
	}
	a.Log.Info("plugin "+verb, "plugin", name, "by", tools.CallerOf(ctx))
	return tools.Result{Value: map[string]any{"plugin": name, "loaded": load}}, nil
}
