package admin

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
)

// Reload is a validated board config an administrator asked for.
type Reload struct {
	Config *board.Config
	Dir    string
	File   string // the board file the new node saves to (node.Options.ConfigFile)
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
func (a *admin) reload(ctx context.Context, r reloadArgs) (tools.Result, error) {
	refuse := func(format string, args ...any) (tools.Result, error) {
		return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: fmt.Sprintf(format, args...)}
	}
	var cfg *board.Config
	var err error
	dir, file := a.Dir, a.File // a reload by path runs, and later saves to, that file
	switch {
	case (r.Path == "") == (r.YAML == ""):
		return tools.Result{}, &tools.Error{Code: tools.CodeInvalidParams, Msg: "config.reload: give path (a board file on the robot) or yaml (the file's content), not both"}
	case r.Save && r.YAML == "":
		return tools.Result{}, &tools.Error{Code: tools.CodeInvalidParams, Msg: "config.reload: save goes with yaml (a path names a file that is saved already)"}
	case r.Save && a.File == "":
		return refuse("config refused, the running one is kept: this agent was not started from a board file, so there is none to save to")
	case r.Path != "":
		path, perr := confine(a.Dir, r.Path)
		if perr != nil {
			return refuse("config refused, the running one is kept: %v", perr)
		}
		cfg, err = board.Load(path)
		file = path
	default:
		// Relative paths inside resolve against the running board's directory.
		cfg, err = board.Parse(filepath.Join(a.Dir, "(reload).yaml"), []byte(r.YAML))
	}
	if err == nil {
		err = a.Check(cfg, dir)
	}
	if err != nil {
		return refuse("config refused, the running one is kept:\n%v", err)
	}
	if r.Save {
		if err := saveBoard(a.File, []byte(r.YAML)); err != nil {
			return refuse("config valid but not saved, the running one is kept: %v", err)
		}
		a.Log.Info("board file saved", "file", a.File, "backup", a.File+".bak", "by", tools.CallerOf(ctx))
	}
	t := a.Clock.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case a.Reloads <- Reload{Config: cfg, Dir: dir, File: file}:
		a.Log.Info("board config reload accepted: the node restarts with it", "device", cfg.Device.ID, "by", tools.CallerOf(ctx))
		v := map[string]any{"applied": true, "device": cfg.Device.ID,
			"note": "the node is being rebuilt from the new config; tool history and disabled tools are kept, the world model starts afresh"}
		if r.Save {
			v["saved"] = a.File
		}
		return tools.Result{Value: v}, nil
	case <-t.C():
		return refuse("the config is valid, but this process does not apply reloads: restart edgeagent with it")
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	}
}
