package node

import (
	"log/slog"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/admin"
)

// adminTools are the registry's own administration and tools/admin's: the
// node registers them as their owner, since they change the node itself,
// and gives them its plugins, its board file and its reload hand-off.
func (n *Node) adminTools() []tools.Tool {
	return append(tools.Admin(n.Tools), admin.Tools(admin.Config{
		Plugins: n, Check: CheckConfig, Dir: n.dir, File: n.file, Reloads: n.reloads, Log: n.Log, Clock: n.clock,
	})...)
}

// ReloadRequests delivers the board configs accepted by config.reload.
// Whoever runs the node (cmd/edgeagent run) stops it and runs a node built
// from the config instead; when nobody receives, the request is answered
// refused ("restart edgeagent with it").
func (n *Node) ReloadRequests() <-chan admin.Reload { return n.reloads }

// CheckConfig builds a node from cfg without a store and without starting
// it: sensor kinds, their options and every plugin's options are checked.
func CheckConfig(cfg *board.Config, dir string) error {
	dry, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, NoStore: true})
	if err != nil {
		return err
	}
	return dry.Close()
}
