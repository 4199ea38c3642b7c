package dashboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/netaddr"
	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/plugin"
)

//go:embed static
var staticFS embed.FS

// server holds what the handlers need: the parts of the agent the host
// shows a plugin, and the dashboard's own auth and live channel.
type server struct {
	opts  Options
	board *board.Config
	world plugin.World
	tools plugin.Tools
	host  plugin.Host
	clk   clock.Clock
	log   *slog.Logger
	auth  *auth
	hub   *hub

	streams  atomic.Int64  // camera streams open
	frames   atomic.Uint64 // camera frames sent
	commands atomic.Uint64 // text commands, for their ids

	// ctx ends when the plugin stops: long-lived responses (the live
	// channel, camera streams) end with it.
	ctx    context.Context
	cancel context.CancelFunc
}

func newServer(h plugin.Host, o Options, log *slog.Logger) (*server, error) {
	ctx, cancel := context.WithCancel(context.Background())
	a, err := newAuth(o, h.Store(), h.Clock(), newThrottle(ctx, h.Clock(), log))
	if err != nil {
		cancel()
		return nil, err
	}
	s := &server{opts: o, board: h.Board(), world: h.World(), tools: h.Tools(), host: h, clk: h.Clock(), log: log,
		auth: a, ctx: ctx, cancel: cancel}
	s.hub = newHub(ctx, h.World(), o.ClientBuffer, o.MaxClients)
	return s, nil
}

// close ends every live channel and camera stream and waits for the pump.
func (s *server) close() {
	s.cancel()
	s.hub.wait()
	s.auth.throttle.wait()
}

// routes: reads need a session (any role), state changes a session and
// its CSRF token; what a role may do is decided by the tools registry.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static") // the directory is embedded: Sub cannot fail
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // files, not listings
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, static, "index.html")
	})
	mux.HandleFunc("GET /api/session", s.handleSession)
	mux.HandleFunc("POST /api/login", s.handleLogin)
	mux.HandleFunc("POST /api/logout", s.handleLogout)

	mux.Handle("GET /api/state", s.read(s.handleState))
	mux.Handle("GET /api/history", s.read(s.handleHistory))
	mux.Handle("GET /api/live", s.read(s.handleLive))
	mux.Handle("GET /api/tools", s.read(s.handleTools))
	mux.Handle("GET /api/status", s.read(s.handleStatus))
	mux.Handle("GET /api/config", s.read(s.handleConfig))
	mux.Handle("GET /api/record/{seq}", s.read(s.handleRecord))
	mux.Handle("GET /api/camera/{name}/stream", s.read(s.handleStream))
	mux.Handle("GET /api/camera/{name}/snapshot", s.read(s.handleSnapshot))
	mux.Handle("POST /api/invoke", s.write(s.handleInvoke))
	mux.Handle("POST /api/command", s.write(s.handleCommand))
	mux.Handle("POST /api/estop", s.write(s.handleEStop))
	mux.Handle("POST /api/camera/{name}/tuning", s.write(s.handleTuning))
	return s.guard(mux)
}

// guard sets the headers every answer carries and, without a login, keeps
// the dashboard to loopback names (a DNS-rebinding page cannot reach it).
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
		if !s.opts.authRequired() && !netaddr.IsLoopback(hostOnly(r.Host)) {
			httpError(w, http.StatusMisdirectedRequest, "without a login the dashboard answers only to a loopback host name")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]any{"ok": false, "error": msg})
}

// maxBody bounds a request body: a tool call or a tuning, never a file.
const maxBody = 64 << 10

// readJSON decodes a request body strictly; the error says what is wrong
// with it, never echoing it.
// Duplicate keys are refused as everywhere the robot takes JSON: two
// parsers that disagree on {"tool":"a","tool":"b"} are a smuggling path.
func readJSON(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return errors.New("the request body could not be read")
	}
	if len(data) > maxBody {
		return errors.New("the request body is too large")
	}
	if err := strictjson.Decode(data, v); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.Is(err, strictjson.ErrDuplicateKey):
			return errors.New("the request body has a duplicate key")
		case errors.As(err, &syn):
			return errors.New("the request body is not valid JSON")
		case errors.As(err, &typ):
			return errors.New("field " + typ.Field + ": wrong type")
		case errors.Is(err, io.EOF):
			return errors.New("empty request body")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return errors.New("the request body is not valid JSON (cut short)")
		}
		return errors.New("bad request body: " + err.Error())
	}
	return nil
}
