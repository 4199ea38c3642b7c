// Package adminsock makes the local administration socket (package
// localadmin) a plugin: it listens in the board's data directory while the
// agent runs, so `edgeagent invoke`, `audit` and `invoke config.reload` on
// the robot reach the running agent as the cli caller.
package adminsock

import (
	"context"
	"log/slog"
	"sync"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/localadmin"
	"github.com/edgeagent/edgeagent/plugin"
)

func init() {
	plugin.Register("adminsock", func(h plugin.Host) (hooks.Plugin, error) {
		if h.Board().DataDir == "" {
			return nil, hooks.Decline("no data_dir: no place for the admin socket")
		}
		return &Plugin{dir: h.Board().DataDir, reg: h.Tools(), log: h.Log().With("plugin", "adminsock")}, nil
	})
}

// Plugin serves the socket while the agent runs.
type Plugin struct {
	dir string
	reg localadmin.Invoker
	log *slog.Logger

	mu     sync.Mutex
	srv    *localadmin.Server
	failed string
}

// Info implements hooks.Plugin.
func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "adminsock", Version: "1", Description: "local administration socket " + localadmin.Path(p.dir) + " (the agent's user only)"}
}

// OnAgentStart listens. A socket that cannot be made (a data_dir path too
// long for a Unix socket) leaves the robot running without it, and says
// so: local administration then goes over MQTT as before.
func (p *Plugin) OnAgentStart(context.Context) error {
	srv, err := localadmin.Listen(p.dir, p.reg, p.log)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.failed = err.Error()
		p.log.Error("no local admin socket", "err", err)
		return nil
	}
	p.srv = srv
	return nil
}

// OnAgentStop closes the socket and waits for the calls in progress, up to
// ctx.
func (p *Plugin) OnAgentStop(ctx context.Context) error {
	p.mu.Lock()
	srv := p.srv
	p.srv = nil
	p.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close(ctx)
}

// Status is the adminsock component of agent.status.
func (p *Plugin) Status() any {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := map[string]any{"socket": localadmin.Path(p.dir)}
	if p.failed != "" {
		st["error"] = p.failed
	}
	if p.srv != nil {
		st["refused"] = p.srv.Refused()
	}
	return st
}
