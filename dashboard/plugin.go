package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
)

func init() {
	plugin.Register("dashboard", func(h plugin.Host) (hooks.Plugin, error) { return newPlugin(h) })
}

// Plugin serves the dashboard while the agent runs.
type Plugin struct {
	s   *server
	log *slog.Logger

	mu     sync.Mutex
	srv    *http.Server
	done   chan struct{}
	url    string
	failed string // why it is not serving
}

func newPlugin(h plugin.Host) (*Plugin, error) {
	if h.Board().Dashboard.IsZero() {
		return nil, hooks.Decline("no dashboard: section in the board")
	}
	o, err := decodeOptions(h.Board(), h.Dir())
	if err != nil {
		return nil, err
	}
	if !o.Enabled {
		return nil, hooks.Decline("dashboard.enabled is false")
	}
	log := h.Log().With("plugin", "dashboard")
	s, err := newServer(h, o, log)
	if err != nil {
		return nil, err
	}
	return &Plugin{s: s, log: log}, nil
}

// Info implements hooks.Plugin.
func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "dashboard", Version: "1", Description: "the web dashboard: camera, sensors, decisions, tools, E-STOP"}
}

// URL is where the dashboard listens, once started.
func (p *Plugin) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// OnAgentStart listens and serves in the background. A port already taken
// (another agent, another web server) leaves the robot running without its
// dashboard, and says so in the log and in agent.status: a robot must not
// stay down for want of a web page.
func (p *Plugin) OnAgentStart(context.Context) error {
	o := p.s.opts
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		p.log.Error("dashboard not started: set dashboard.listen to a free address", "listen", o.Listen, "err", err)
		p.mu.Lock()
		p.failed = err.Error()
		p.mu.Unlock()
		return nil
	}
	scheme := "http"
	if o.TLS.Cert != "" {
		scheme = "https"
	}
	srv := &http.Server{Handler: p.s.routes(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelDebug)}
	done := make(chan struct{})
	url := scheme + "://" + ln.Addr().String() + "/"
	p.mu.Lock()
	p.srv, p.done, p.url = srv, done, url
	p.mu.Unlock()
	go func() {
		defer close(done)
		var err error
		if o.TLS.Cert != "" {
			err = srv.ServeTLS(ln, o.TLS.Cert, o.TLS.Key)
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("dashboard stopped serving", "err", err)
		}
	}()
	auth := "none (loopback only)"
	if o.authRequired() {
		auth = "login required"
	}
	p.log.Info("dashboard: open "+url, "url", url, "auth", auth)
	return nil
}

// OnAgentStop ends the live channels and streams and closes the listener.
func (p *Plugin) OnAgentStop(ctx context.Context) error {
	p.mu.Lock()
	srv, done := p.srv, p.done
	p.srv = nil
	p.mu.Unlock()
	p.s.close() // long-lived responses (SSE, MJPEG) return, so Shutdown need not wait for them
	if srv == nil {
		return nil // it never listened
	}
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, srv.Close())
	}
	<-done
	return err
}

// Status is the dashboard component of agent.status.
func (p *Plugin) Status() any {
	p.mu.Lock()
	url, failed := p.url, p.failed
	p.mu.Unlock()
	st := p.s.status()
	st.URL, st.Error = url, failed
	return st
}
