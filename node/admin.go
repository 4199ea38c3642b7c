package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
)

// Administration is tools like any other (one command language, one
// permission model, one audit path): MQTT, the CLI or the dashboard call
// them with the admin permission. The node owns them because they change
// the node itself.

// Reload is a validated board config an administrator asked for.
type Reload struct {
	Config *board.Config
	Dir    string
	File   string // the board file the new node saves to (Options.ConfigFile)
}

// ReloadRequests delivers the board configs accepted by config.reload.
// Whoever runs the node (cmd/edgeagent run) stops it and runs a node built
// from the config instead; when nobody receives, the request is answered
// refused ("restart edgeagent with it").
func (n *Node) ReloadRequests() <-chan Reload { return n.reloads }

func (n *Node) adminTools() []tools.Tool {
	// pluginTool is plugins.load or plugins.unload: do to the named plugin.
	pluginTool := func(name, desc string, load bool, do func(context.Context, string) error) tools.Tool {
		type args struct {
			Plugin string `json:"plugin"`
		}
		return tools.Typed(tools.Spec{Name: name, Description: desc, Permission: "admin",
			Params: json.RawMessage(`{"type":"object","properties":{"plugin":{"type":"string","minLength":1,"maxLength":64,"description":"a compiled-in plugin's name (see plugins.list)"}},"required":["plugin"],"additionalProperties":false}`)},
			func(ctx context.Context, a args) (tools.Result, error) {
				if err := notThroughItself(ctx, a.Plugin); err != nil {
					return tools.Result{}, err
				}
				return n.pluginResult(ctx, a.Plugin, load, do(ctx, a.Plugin))
			})
	}
	return append(tools.Admin(n.Tools),
		tools.Func(tools.Spec{Name: "plugins.list", Description: "The compiled-in plugins and whether each is loaded.",
			Permission: "admin", Params: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Result{Value: n.PluginStates()}, nil
			}),
		pluginTool("plugins.load", "Build a compiled-in plugin and load it into the running agent.", true, n.LoadRegistered),
		pluginTool("plugins.unload", "Stop a plugin and remove its tools, sensors and hooks.", false, n.UnloadPlugin),
		tools.Typed(tools.Spec{Name: "config.reload",
			Description: "Validate a board config and, if valid, rebuild the agent from it. Give path (a board file in the running board's directory) or yaml (the file's content); with yaml, save: true also writes it to the board file the agent runs (the previous one kept as .bak).",
			Permission:  "admin",
			Params: json.RawMessage(`{"type":"object","properties":{
  "path":{"type":"string","minLength":1,"maxLength":256,"description":"a board file in the running board's directory"},
  "yaml":{"type":"string","minLength":1,"maxLength":262144,"description":"a board file's content"},
  "save":{"type":"boolean","description":"with yaml: write it to the running board file once it is accepted, so it outlives a restart"}},
  "additionalProperties":false}`)},
			n.reload),
	)
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
func (n *Node) pluginResult(ctx context.Context, name string, load bool, err error) (tools.Result, error) {
	var stopErr hooks.Failure
	if !load && errors.As(err, &stopErr) { // unloaded, but its OnAgentStop failed
		n.Log.Warn("plugin unloaded; its stop failed", "plugin", name, "err", err)
		return tools.Result{Value: map[string]any{"plugin": name, "loaded": false, "stop_error": err.Error()}}, nil
	}
	if err != nil {
		return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: err.Error()}
	}
	verb := "unloaded"
	if load {
		verb = "loaded"
	}
	n.Log.Info("plugin "+verb, "plugin", name, "by", tools.CallerOf(ctx))
	return tools.Result{Value: map[string]any{"plugin": name, "loaded": load}}, nil
}

type reloadArgs struct {
	Path string `json:"path"`
	YAML string `json:"yaml"`
	Save bool   `json:"save"`
}

// reload validates a board config and hands it to whoever runs the node. A
// broken config is refused and the running one stays; a valid one replaces
// the whole node (sensors, actuators, plugins, reflexes, permissions, MQTT
// settings), which is what "reload" can honestly mean for a config that may
// change any of them. Disabled tools and history stay in the store; the
// world model starts afresh.
//
// A path is confined to the running board's directory (symlinks resolved),
// so the tool cannot be used to probe other files, and errors name keys and
// positions only (board errors never quote the file).
func (n *Node) reload(ctx context.Context, a reloadArgs) (tools.Result, error) {
	refuse := func(format string, args ...any) (tools.Result, error) {
		return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: fmt.Sprintf(format, args...)}
	}
	var cfg *board.Config
	var err error
	dir, file := n.dir, n.file // a reload by path runs, and later saves to, that file
	switch {
	case (a.Path == "") == (a.YAML == ""):
		return tools.Result{}, &tools.Error{Code: tools.CodeInvalidParams, Msg: "config.reload: give path (a board file on the robot) or yaml (the file's content), not both"}
	case a.Save && a.YAML == "":
		return tools.Result{}, &tools.Error{Code: tools.CodeInvalidParams, Msg: "config.reload: save goes with yaml (a path names a file that is saved already)"}
	case a.Save && n.file == "":
		return refuse("config refused, the running one is kept: this agent was not started from a board file, so there is none to save to")
	case a.Path != "":
		path, perr := n.confine(a.Path)
		if perr != nil {
			return refuse("config refused, the running one is kept: %v", perr)
		}
		cfg, err = board.Load(path)
		file = path
	default:
		// Relative paths inside resolve against the running board's directory.
		cfg, err = board.Parse(filepath.Join(n.dir, "(reload).yaml"), []byte(a.YAML))
	}
	if err == nil {
		err = CheckConfig(cfg, dir)
	}
	if err != nil {
		return refuse("config refused, the running one is kept:\n%v", err)
	}
	if a.Save {
		if err := saveBoard(n.file, []byte(a.YAML)); err != nil {
			return refuse("config valid but not saved, the running one is kept: %v", err)
		}
		n.Log.Info("board file saved", "file", n.file, "backup", n.file+".bak", "by", tools.CallerOf(ctx))
	}
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case n.reloads <- Reload{Config: cfg, Dir: dir, File: file}:
		n.Log.Info("board config reload accepted: the node restarts with it", "device", cfg.Device.ID, "by", tools.CallerOf(ctx))
		v := map[string]any{"applied": true, "device": cfg.Device.ID,
			"note": "the node is being rebuilt from the new config; tool history and disabled tools are kept, the world model starts afresh"}
		if a.Save {
			v["saved"] = n.file
		}
		return tools.Result{Value: v}, nil
	case <-t.C:
		return refuse("the config is valid, but this process does not apply reloads: restart edgeagent with it")
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	}
}

// saveBoard replaces the board file with data: the old file is kept as
// file.bak, and the new one is written beside it, synced and renamed over
// it, so a power cut leaves either file whole. Errors name the step, not
// the content.
func saveBoard(file string, data []byte) error {
	old, err := os.ReadFile(file)
	if err != nil {
		return errors.New("the board file cannot be read for its backup")
	}
	if err := writeSynced(file+".bak", old); err != nil {
		return fmt.Errorf("the backup %s cannot be written: %w", filepath.Base(file)+".bak", err)
	}
	tmp := file + ".new"
	if err := writeSynced(tmp, data); err != nil {
		return fmt.Errorf("the new board file cannot be written: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		_ = os.Remove(tmp)
		return errors.New("the new board file cannot replace the old one")
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return errors.Unwrap(err) // the *PathError's cause, without the path twice
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// confine resolves a reload path inside the board's directory. The errors
// say what is wrong with the path, never what is in a file.
func (n *Node) confine(p string) (string, error) {
	if ext := strings.ToLower(filepath.Ext(p)); ext != ".yaml" && ext != ".yml" {
		return "", errors.New("path: a board file ends in .yaml or .yml")
	}
	base, err := filepath.EvalSymlinks(n.dir)
	if err != nil {
		base = n.dir
	}
	if base, err = filepath.Abs(base); err != nil {
		return "", errors.New("path: the board directory cannot be resolved")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errors.New("path: no such board file in the board directory")
		}
		return "", errors.New("path: cannot be resolved")
	}
	if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errors.New("path: outside the board directory (symlinks resolved)")
	}
	return real, nil
}

// CheckConfig builds a node from cfg without a store and without starting
// it: sensor kinds, their options and every plugin's options are checked.
func CheckConfig(cfg *board.Config, dir string) error {
	dry, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, NoStore: true})
	if err != nil {
		return err
	}
	return dry.Close()
}
