package local

// End-to-end tests against a real Ollama server. They skip unless
// EDGEAGENT_E2E_MODEL names a model on the server at OLLAMA_HOST:
//
//	eval "$(../shared/tools/ollama/serve.sh)"   # tiny random-weight model
//	go test ./llm/local -run E2E -v
//
// With a random-weight model the answers are schema-valid (constrained
// decoding) but meaningless, so these tests check the protocol and the
// client's behaviour, never what the model said.
//
// Optional:
//   - EDGEAGENT_E2E_SLOW_HOST and EDGEAGENT_E2E_SLOW_MODEL: a slower model
//     (EMBD=512 LAYERS=8 serve.sh) for the cancellation test; without them
//     it uses a long free-text answer of the default model.
//   - EDGEAGENT_OLLAMA_BIN (default ~/.cache/edgeagent-ollama/bin/ollama,
//     or "ollama" on PATH) and OLLAMA_MODELS (default: the models directory
//     next to $OLLAMA_SERVE_LOG): to start a server of the test's own, which
//     the kill-and-restart test kills.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/llm"
)

func e2eModel(t *testing.T) string {
	t.Helper()
	m := os.Getenv("EDGEAGENT_E2E_MODEL")
	if m == "" {
		t.Skip("EDGEAGENT_E2E_MODEL is not set (eval \"$(../shared/tools/ollama/serve.sh)\" starts a server with a tiny model)")
	}
	return m
}

func e2eClient(t *testing.T, host, model string, mod func(*Options)) *Client {
	t.Helper()
	o := Options{Host: host, Model: model, EmbedModel: model, NumCtx: 2048, Seed: 42, KeepAlive: -time.Second,
		Timeout: 60 * time.Second, MaxTokens: 96, MinBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond, Log: quiet}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestE2ECheckPreloadAndLoadDuration(t *testing.T) {
	model := e2eModel(t)
	c := e2eClient(t, e2eHost(t), model, nil)
	ctx := context.Background()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("check (%q should match %q): %v", model, canonical(model), err)
	}
	if st := c.Status(); st.Embeddings != "ok" {
		t.Fatalf("embedding model: %+v", st)
	}
	unload := func() {
		zero := api.Duration{Duration: 0}
		if err := c.api.Generate(ctx, &api.GenerateRequest{Model: model, KeepAlive: &zero}, func(api.GenerateResponse) error { return nil }); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			ps, err := c.api.ListRunning(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps.Models) == 0 || time.Now().After(deadline) {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	req := llm.Request{Purpose: "e2e", Messages: []llm.Message{{Role: "user", Content: "hi"}},
		Schema: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`), MaxTokens: 16}

	// Cold: the call pays the load. (A cut-off answer is fine here: only
	// the metrics matter.)
	unload()
	cold, err := c.Generate(ctx, req)
	if err != nil && !errors.Is(err, llm.ErrTruncated) {
		t.Fatal(err)
	}
	// Preloaded: it does not.
	unload()
	took, err := c.Preload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := c.Generate(ctx, req)
	if err != nil && !errors.Is(err, llm.ErrTruncated) {
		t.Fatal(err)
	}
	t.Logf("load_duration cold %v, after a %v preload %v", cold.Usage.Load, took, warm.Usage.Load)
	if cold.Usage.Load <= 0 || warm.Usage.Load >= cold.Usage.Load || took < warm.Usage.Load {
		t.Fatalf("preload did not take the load off the first call: cold %v, preload %v, warm %v", cold.Usage.Load, took, warm.Usage.Load)
	}
	if warm.Usage.PromptTokens <= 0 || warm.Usage.EvalTokens <= 0 || warm.Usage.Total <= 0 {
		t.Fatalf("usage %+v", warm.Usage)
	}
	running, err := c.api.ListRunning(ctx)
	if err != nil || len(running.Models) == 0 {
		t.Fatalf("model not kept loaded: %v %+v", err, running)
	}
	// keep_alive < 0: loaded for good (Ollama reports a far expiry).
	if until := time.Until(running.Models[0].ExpiresAt); until < 24*time.Hour {
		t.Fatalf("keep_alive not applied: expires in %v", until)
	}
}

func TestE2EStructuredOutput(t *testing.T) {
	model := e2eModel(t)
	c := e2eClient(t, e2eHost(t), model, nil)
	schemas := []string{
		`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`,
		`{"type":"object","properties":{"scenario":{"type":"string","enum":["security","navigation","idle"]}},"required":["scenario"],"additionalProperties":false}`,
		`{"type":"object","properties":{"direction":{"type":"string","enum":["forward","backward"]},"count":{"type":"integer"}},"required":["direction","count"],"additionalProperties":false}`,
	}
	for i, s := range schemas {
		resp, err := c.Generate(context.Background(), llm.Request{Purpose: "e2e", System: "Answer in JSON.",
			Messages: []llm.Message{{Role: "user", Content: "Switch the lamp on."}}, Schema: json.RawMessage(s), MaxTokens: 48})
		if errors.Is(err, llm.ErrTruncated) {
			t.Logf("schema %d: answer truncated at 48 tokens (random weights): %q", i, resp.Content)
			continue
		}
		if err != nil {
			t.Fatalf("schema %d: %v", i, err)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		comp := jsonschema.NewCompiler()
		_ = comp.AddResource("mem://s.json", doc)
		sch, err := comp.Compile("mem://s.json")
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(resp.Content))
		if err != nil {
			t.Fatalf("schema %d: answer is not JSON: %q", i, resp.Content)
		}
		if err := sch.Validate(inst); err != nil {
			t.Fatalf("schema %d: answer %q does not match: %v", i, resp.Content, err)
		}
	}
}

func TestE2EEmbed(t *testing.T) {
	model := e2eModel(t)
	c := e2eClient(t, e2eHost(t), model, nil)
	vecs, err := c.Embed(context.Background(), []string{"turn on the headlight", "pan the camera", "turn on the headlight"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || len(vecs[0]) == 0 || len(vecs[1]) != len(vecs[0]) {
		t.Fatalf("shape %d×%d", len(vecs), len(vecs[0]))
	}
	same, differ := true, false
	for i := range vecs[0] {
		same = same && vecs[0][i] == vecs[2][i]
		differ = differ || vecs[0][i] != vecs[1][i]
	}
	if !same || !differ {
		t.Fatalf("same text → same vector: %v; different texts differ: %v", same, differ)
	}
}

func TestE2EUnknownModel(t *testing.T) {
	e2eModel(t)
	c := e2eClient(t, e2eHost(t), "no-such-model-e2e", func(o *Options) { o.EmbedModel = "" })
	err := c.Check(context.Background())
	var missing *ModelMissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "ollama pull no-such-model-e2e") {
		t.Fatalf("check: %v", err)
	}
	_, err = c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "ollama pull no-such-model-e2e") {
		t.Fatalf("generate: %v", err)
	}
}

// ginChat matches the server's access-log line of a finished /api/chat
// request: status and latency.
var ginChat = regexp.MustCompile(`\|\s+(\d{3})\s+\|\s+([0-9.]+[nµm]?s)\s+\|\s+\S+\s+\|\s+POST\s+"/api/chat"`)

// chatLatencies are the latencies of the finished chat requests in a log.
func chatLatencies(log string) []time.Duration {
	var out []time.Duration
	for _, m := range ginChat.FindAllStringSubmatch(log, -1) {
		if d, err := time.ParseDuration(m[2]); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// A cancelled call must stop the server's work, not only our wait. The
// server's access log shows the long request ending right at the
// cancellation (it would otherwise run for minutes); and since Ollama
// serves one request at a time per model, a short call right after the
// cancellation completes in seconds only if the long one was aborted.
func TestE2ECancelInFlight(t *testing.T) {
	model := e2eModel(t)
	host := e2eHost(t)
	serverLog := func() string { return "" }
	if shared.srv != nil {
		serverLog = shared.srv.logText
	}
	if h, m := os.Getenv("EDGEAGENT_E2E_SLOW_HOST"), os.Getenv("EDGEAGENT_E2E_SLOW_MODEL"); h != "" && m != "" {
		host, model = h, m
		serverLog = func() string { return readFile(os.Getenv("OLLAMA_SLOW_LOG")) }
	}
	c := e2eClient(t, host, model, func(o *Options) { o.EmbedModel = "" })
	ctx := context.Background()
	if _, err := c.Preload(ctx); err != nil {
		t.Fatal(err)
	}
	long := llm.Request{Purpose: "long", Messages: []llm.Message{{Role: "user", Content: "Tell me a very long story."}}, MaxTokens: 100000}
	short := llm.Request{Purpose: "short", Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 4}

	// How long does a short call take on its own?
	start := time.Now()
	if _, err := c.Generate(ctx, short); err != nil && !errors.Is(err, llm.ErrTruncated) {
		t.Fatal(err)
	}
	alone := time.Since(start)

	before := len(chatLatencies(serverLog()))
	cause := errors.New("preempted by a test")
	cctx, cancel := context.WithCancelCause(ctx)
	done := make(chan error, 1)
	started := time.Now()
	go func() { _, err := c.Generate(cctx, long); done <- err }()
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-done:
		t.Skipf("the model finished a long answer within 500ms (%v): set EDGEAGENT_E2E_SLOW_HOST/MODEL", err)
	default:
	}
	cancel(cause)
	wantCause(t, done, cause)
	t.Logf("cancelled after %v", time.Since(started))
	if serverLog() != "" {
		deadline := time.Now().Add(10 * time.Second)
		for len(chatLatencies(serverLog())) <= before {
			if time.Now().After(deadline) {
				t.Fatal("the server did not end the cancelled request within 10s")
			}
			time.Sleep(20 * time.Millisecond)
		}
		lat := chatLatencies(serverLog())[before]
		t.Logf("the server ended the cancelled request after %v", lat)
		if lat > 10*time.Second {
			t.Fatalf("the cancelled request ran on for %v", lat)
		}
	} else {
		t.Log("no server log to read (OLLAMA_SLOW_LOG unset): relying on the timing check")
	}
	start = time.Now()
	if _, err := c.Generate(ctx, short); err != nil && !errors.Is(err, llm.ErrTruncated) {
		t.Fatal(err)
	}
	after := time.Since(start)
	t.Logf("short call alone %v, right after the cancellation %v", alone, after)
	if after > 2*alone+20*time.Second {
		t.Fatalf("the server kept working on the cancelled request: %v vs %v", after, alone)
	}
}

func readFile(path string) string {
	if path == "" {
		return ""
	}
	b, _ := os.ReadFile(path)
	return string(b)
}

// ollamaServer is a server of the test's own, on the models the CI server
// uses, so that a test may kill it, or time loads without other packages'
// E2E tests loading the model behind its back.
type ollamaServer struct {
	bin, models, addr string
	cmd               *exec.Cmd
	log               syncbuf.Buffer // the server's and its runner's output
}

func (s *ollamaServer) logText() string { return s.log.String() }

func ownServer(t *testing.T) *ollamaServer {
	t.Helper()
	s, err := startOwnServer()
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		t.Skip("no ollama binary or models directory: set EDGEAGENT_OLLAMA_BIN and OLLAMA_MODELS")
	}
	t.Cleanup(s.kill)
	return s
}

var shared struct {
	once sync.Once
	srv  *ollamaServer
	err  error
}

// e2eHost is the server the adapter's E2E tests talk to: one of this
// package's own when it can start one (the node package's E2E tests then
// do not queue in front of ours on the shared server), else $OLLAMA_HOST.
func e2eHost(t *testing.T) string {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = startOwnServer() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	if shared.srv != nil {
		return shared.srv.addr
	}
	return ""
}

// stopShared ends the package's shared server (TestMain).
func stopShared() {
	if shared.srv != nil {
		shared.srv.kill()
	}
}

// startOwnServer starts a server, or returns nil when the binary or the
// models cannot be found.
func startOwnServer() (*ollamaServer, error) {
	bin := os.Getenv("EDGEAGENT_OLLAMA_BIN")
	if bin == "" {
		home, _ := os.UserHomeDir()
		dir := os.Getenv("EDGEAGENT_OLLAMA_DIR")
		if dir == "" {
			dir = filepath.Join(home, ".cache", "edgeagent-ollama")
		}
		bin = filepath.Join(dir, "bin", "ollama")
		if _, err := os.Stat(bin); err != nil {
			if bin, err = exec.LookPath("ollama"); err != nil {
				return nil, nil
			}
		}
	}
	models := os.Getenv("OLLAMA_MODELS")
	if models == "" && os.Getenv("OLLAMA_SERVE_LOG") != "" {
		models = filepath.Join(filepath.Dir(os.Getenv("OLLAMA_SERVE_LOG")), "models")
	}
	if _, err := os.Stat(models); models == "" || err != nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &ollamaServer{bin: bin, models: models, addr: addr}
	return s, s.start()
}

func (s *ollamaServer) start() error {
	s.cmd = exec.Command(s.bin, "serve")
	s.cmd.Env = append(os.Environ(), "OLLAMA_HOST="+s.addr, "OLLAMA_MODELS="+s.models)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the runner too
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		return err
	}
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := cl.Get("http://" + s.addr + "/api/version")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("own ollama server did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the server and its runner at once, like a crash.
func (s *ollamaServer) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

func TestE2EServerKilledMidCallAndRestarted(t *testing.T) {
	model := e2eModel(t)
	srv := ownServer(t)
	c := e2eClient(t, srv.addr, model, func(o *Options) { o.EmbedModel = "" })
	supervise(t, c)
	waitState(t, c, StateAvailable)

	calls := make(chan error, 1)
	go func() {
		_, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "Tell me a very long story."}}, MaxTokens: 100000})
		calls <- err
	}()
	time.Sleep(500 * time.Millisecond)
	srv.kill()
	select {
	case err := <-calls:
		if !errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("want ErrUnavailable when the server dies mid-call, got %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not end when the server died")
	}
	waitStateWithin(t, c, StateUnavailable, 5*time.Second)
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	waitStateWithin(t, c, StateAvailable, 30*time.Second)
	if _, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 4}); err != nil && !errors.Is(err, llm.ErrTruncated) {
		t.Fatal(err)
	}
}
