// Package localadmin is the agent's local administration socket: a Unix
// socket in the state directory (data_dir/admin.sock), mode 0600 and owned
// by the agent's user, as docker.sock or systemd's private socket are. The
// CLI on the same machine sends it tool calls (`edgeagent invoke
// estop.reset`, `audit`, `invoke config.reload`) while the agent runs and
// holds the store, without opening the MQTT admin topic to every local
// process. A call runs as the "cli" caller (permissions.cli), as it does
// when no agent runs.
//
// Two doors: the file's mode keeps other users from connecting, and the
// peer's credentials (SO_PEERCRED) are checked on every connection, so a
// socket whose mode was widened, or the moment between its creation and
// its chmod, lets no one else in. Root is let in too (it can read the
// store anyway). Remote administration stays with MQTT users and the
// dashboard's login.
//
// The protocol is one JSON request line, {"tool": …, "params": {…}}, and
// one JSON reply line per connection.
package localadmin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/tools"
)

// SocketName is the socket's file name in the data directory.
const SocketName = "admin.sock"

// Path is where the agent with data directory dir listens.
func Path(dir string) string { return filepath.Join(dir, SocketName) }

const (
	maxRequest  = 64 << 10         // one tool call, as on MQTT
	readTimeout = 10 * time.Second // to send the request line
	maxConns    = 8                // calls served at once
)

// Request is one tool call.
type Request struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Reply is its answer, in the shape of an MQTT reply.
type Reply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
	Code   string          `json:"code,omitempty"`
	Paths  []string        `json:"paths,omitempty"`
}

// Invoker runs the calls that come in on the socket: the tools registry.
type Invoker interface {
	Invoke(context.Context, tools.Call) (tools.Result, error)
}

// Server serves the socket until Close.
type Server struct {
	ln    *net.UnixListener
	reg   Invoker
	log   *slog.Logger
	owner uint32 // the agent's user
	slots chan struct{}

	wg      sync.WaitGroup
	ctx     context.Context // ends at Close: running calls are cancelled
	cancel  context.CancelFunc
	refused atomic.Int64
}

// Listen creates the socket in dir and serves it. A socket file left by an
// agent that died is replaced: the caller holds the store's lock, so no
// other agent uses this directory.
func Listen(dir string, reg Invoker, log *slog.Logger) (*Server, error) {
	path := Path(dir)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("local admin socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("local admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("local admin socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, reg: reg, log: log, owner: uint32(os.Geteuid()), slots: make(chan struct{}, maxConns),
		ctx: ctx, cancel: cancel}
	s.wg.Go(s.accept)
	return s, nil
}

// Close stops listening and lets the calls running finish until ctx ends
// (a config.reload's reply is written while the node it replaces stops),
// then cancels them and waits; the socket file goes away.
func (s *Server) Close(ctx context.Context) error {
	err := s.ln.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	s.cancel()
	<-done
	return err
}

// Refused counts the connections of other users.
func (s *Server) Refused() int64 { return s.refused.Load() }

func (s *Server) accept() {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.log.Error("local admin socket stopped accepting", "err", err)
			}
			return
		}
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			_ = c.Close()
			return
		}
		s.wg.Go(func() {
			defer func() { <-s.slots }()
			s.serve(c)
		})
	}
}

// allowed: the agent's own user and root.
func allowed(peer, owner uint32) bool { return peer == owner || peer == 0 }

func (s *Server) serve(c *net.UnixConn) {
	defer c.Close()
	stop := context.AfterFunc(s.ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	uid, err := peerUID(c)
	if err != nil || !allowed(uid, s.owner) {
		s.refused.Add(1)
		s.log.Warn("local admin socket: a connection from another user refused", "uid", uid, "err", err)
		s.reply(c, Reply{Code: tools.CodeForbidden, Error: fmt.Sprintf("this socket takes calls from the agent's own user (uid %d) and root only", s.owner)})
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(readTimeout))
	line, err := bufio.NewReaderSize(c, maxRequest).ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxRequest {
		s.reply(c, Reply{Code: tools.CodeInvalidParams, Error: "the request is too large"})
		return
	}
	var req Request
	if err != nil || json.Unmarshal(line, &req) != nil || req.Tool == "" {
		s.reply(c, Reply{Code: tools.CodeInvalidParams, Error: "want one line of JSON: {\"tool\": …, \"params\": {…}}"})
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	res, err := s.reg.Invoke(s.ctx, tools.Call{Caller: "cli", Tool: req.Tool, Params: req.Params})
	if err != nil {
		rep := Reply{Code: tools.CodeFailed, Error: err.Error()}
		var te *tools.Error
		if errors.As(err, &te) {
			rep.Code, rep.Error, rep.Paths = te.Code, te.Msg, te.Paths
		}
		s.reply(c, rep)
		return
	}
	out, err := json.Marshal(res.Value)
	if err != nil {
		s.reply(c, Reply{Code: tools.CodeFailed, Error: "the result could not be encoded: " + err.Error()})
		return
	}
	s.reply(c, Reply{OK: true, Result: out})
}

func (s *Server) reply(c *net.UnixConn, r Reply) {
	b, _ := json.Marshal(r) // strings, a raw message that is JSON: always encodes
	_ = c.SetWriteDeadline(time.Now().Add(readTimeout))
	_, _ = c.Write(append(b, '\n'))
}
