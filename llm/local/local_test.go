package local

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(stopAfter{m}) }

// stopAfter ends the E2E tests' own Ollama server before the leak check.
type stopAfter struct{ m *testing.M }

func (s stopAfter) Run() int {
	defer stopShared()
	return s.m.Run()
}

var quiet = slog.New(slog.DiscardHandler)

func newClient(t *testing.T, srv *ollamatest.Server, mod func(*Options)) *Client {
	t.Helper()
	o := Options{Host: srv.URL(), Model: "tiny", EmbedModel: "embed", NumCtx: 2048, Seed: 42, KeepAlive: -time.Second,
		Timeout: 2 * time.Second, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Log: quiet}
	if mod != nil {
		mod(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var schema = json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)

func TestParseHost(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	for in, want := range map[string]string{
		"":                       "http://127.0.0.1:11434",
		"10.0.0.2":               "http://10.0.0.2:11434",
		"127.0.0.1:9999":         "http://127.0.0.1:9999",
		"http://pi.local":        "http://pi.local:80",
		"https://x.example:8443": "https://x.example:8443",
		"[::1]:1234":             "http://[::1]:1234",
	} {
		u, err := ParseHost(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:5555")
	if u, _ := ParseHost(""); u.String() != "http://127.0.0.1:5555" {
		t.Errorf("OLLAMA_HOST not used: %v", u)
	}
	for _, bad := range []string{"ftp://x", "x:99999", "x:port"} {
		if _, err := ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
	}
}

func TestCheckModelsAndPullHint(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest", "embed:latest")
	c := newClient(t, srv, nil)
	if err := c.Check(context.Background()); err != nil {
		t.Fatalf("tiny should match tiny:latest: %v", err)
	}
	if st := c.Status(); st.Version != ollamatest.Version || st.Embeddings != "ok" {
		t.Fatalf("status %+v", st)
	}

	srv.SetModels("other:7b", "embed:latest")
	err := c.Check(context.Background())
	var missing *ModelMissingError
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "ollama pull tiny") {
		t.Fatalf("want a pull hint, got %v", err)
	}

	// A missing embedding model is not fatal: embeddings report it.
	srv.SetModels("tiny:latest")
	if err := c.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := c.Status(); st.Embeddings != "missing" || !strings.Contains(st.Reason, "ollama pull embed") {
		t.Fatalf("status %+v", st)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, llm.ErrNoEmbedModel) {
		t.Fatalf("embed with missing model: %v", err)
	}
}

func TestGenerateSendsFixedOptionsAndStreams(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, func(o *Options) { o.EmbedModel = "" })
	srv.Push(ollamatest.Answer{Content: `{"on": true}`, ChunkBytes: 3, LoadDuration: 7 * time.Millisecond},
		ollamatest.Answer{Content: `{"on": false}`})
	if _, err := c.Preload(context.Background()); err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Purpose: "params", System: "you are a robot", Messages: []llm.Message{{Role: "user", Content: "light on"}}, Schema: schema}
	resp, err := c.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != `{"on": true}` {
		t.Fatalf("content %q", resp.Content)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.EvalTokens == 0 || resp.Usage.Load != 7*time.Millisecond {
		t.Fatalf("usage %+v", resp.Usage)
	}
	req.MaxTokens = 64
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Generate == nil || reqs[1].Chat == nil {
		t.Fatalf("requests %+v", reqs)
	}
	numCtx := func(o map[string]any) any { return o["num_ctx"] }
	for i, r := range reqs {
		opts := map[string]any(nil)
		var ka *api.Duration
		if r.Generate != nil {
			opts, ka = r.Generate.Options, r.Generate.KeepAlive
		} else {
			opts, ka = r.Chat.Options, r.Chat.KeepAlive
		}
		// A changed num_ctx makes Ollama reload the model: every call,
		// the preload included, must send the same one.
		if numCtx(opts) != float64(2048) || opts["seed"] != float64(42) || opts["temperature"] != float64(0) {
			t.Errorf("request %d options %v", i, opts)
		}
		if ka == nil || ka.Duration >= 0 && ka.Duration < time.Hour {
			t.Errorf("request %d keep_alive %v: want keep loaded", i, ka)
		}
	}
	chat := reqs[1].Chat
	var sent, want any
	_ = json.Unmarshal(chat.Format, &sent)
	_ = json.Unmarshal(schema, &want)
	if !reflect.DeepEqual(sent, want) || chat.Messages[0].Role != "system" || chat.Messages[1].Content != "light on" {
		t.Fatalf("chat request %+v", chat)
	}
	if reqs[1].Chat.Options["num_predict"] != float64(512) || reqs[2].Chat.Options["num_predict"] != float64(64) {
		t.Fatalf("num_predict %v %v", reqs[1].Chat.Options["num_predict"], reqs[2].Chat.Options["num_predict"])
	}
	if st := c.Status(); st.Calls != 2 || st.PromptTokens == 0 || st.EvalTokens == 0 {
		t.Fatalf("stats %+v", st.Stats)
	}
}

func TestGenerateErrors(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, nil)
	req := llm.Request{Purpose: "classify", Messages: []llm.Message{{Role: "user", Content: "hi"}}, Schema: schema}
	cases := []struct {
		name   string
		answer ollamatest.Answer
		want   string
		is     error
	}{
		{"server error", ollamatest.Answer{Status: 500, Error: "llama runner process has terminated"}, "llama runner process has terminated", nil},
		{"bad request", ollamatest.Answer{Status: 400, Error: "invalid format"}, "invalid format", nil},
		{"error mid-stream", ollamatest.Answer{Content: `{"on": true}`, Error: "out of memory"}, "out of memory", nil},
		{"malformed body", ollamatest.Answer{Raw: "<html>proxy error</html>\n"}, "malformed answer", nil},
		{"truncated", ollamatest.Answer{Content: `{"on": tr`, DoneReason: "length"}, "token limit", llm.ErrTruncated},
		{"killed mid-stream", ollamatest.Answer{Content: `{"on": true, "padding": "xxxxxxxxxxxxxxxxxxxxxx"}`, Cut: true}, "closed the answer", llm.ErrUnavailable},
		{"duplicate key", ollamatest.Answer{Content: `{"on": false, "on": true}`}, `duplicate key "on"`, strictjson.ErrDuplicateKey},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv.Push(tc.answer)
			_, err := c.Generate(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Fatalf("%v is not %v", err, tc.is)
			}
		})
	}
	// An unknown model: the server's 404 becomes a pull hint.
	c2 := newClient(t, srv, func(o *Options) { o.Model = "nope" })
	_, err := c2.Generate(context.Background(), req)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "ollama pull nope") {
		t.Fatalf("unknown model: %v", err)
	}
}

func TestFormatSchemaMadeGrammarFriendly(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"where"},` +
		`"payload":{"description":"any JSON value"}},"required":["topic","payload"],"additionalProperties":false}`)
	srv.Push(ollamatest.Answer{Content: `{"topic":"a","payload":1}`})
	if _, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	got := string(srv.Requests()[0].Chat.Format)
	want := `{"additionalProperties":false,"properties":{"payload":{},"topic":{"description":"where","type":"string"}},"required":["topic","payload"],"type":"object"}`
	if got != want {
		t.Fatalf("format sent:\n%s\nwant\n%s", got, want)
	}
	// A schema the server still cannot turn into a grammar: plain JSON.
	srv.Reset()
	srv.Push(ollamatest.Answer{Status: 500, Error: "invalid JSON schema in format"}, ollamatest.Answer{Content: `{"on":true}`})
	resp, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}, Schema: schema})
	if err != nil || resp.Content != `{"on":true}` {
		t.Fatalf("%v %q", err, resp.Content)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || string(reqs[1].Chat.Format) != `"json"` {
		t.Fatalf("fallback request %+v", reqs)
	}
}

func TestSlowAnswerHitsDeadlineAndClosesRequest(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, func(o *Options) { o.Timeout = 100 * time.Millisecond })
	srv.Push(ollamatest.Answer{Content: `{"on":true}`, Delay: 5 * time.Second})
	start := time.Now()
	_, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want deadline, got %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("deadline not honoured: %v", took)
	}
	srv.WaitGone(t, "/api/chat")
}

func TestCancelAbortsCallInFlight(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, func(o *Options) { o.Timeout = time.Minute })
	srv.Push(ollamatest.Answer{Hang: true})
	cause := errors.New("preempted by high front_cam/motion_start")
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Generate(ctx, llm.Request{Purpose: "classify", Messages: []llm.Message{{Role: "user", Content: "x"}}})
		done <- err
	}()
	for srv.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel(cause)
	wantCause(t, done, cause)
	srv.WaitGone(t, "/api/chat")
	if st := c.Status(); st.Cancelled != 1 || st.State == StateUnavailable {
		t.Fatalf("a cancellation is not an outage: %+v", st)
	}
}

func waitState(t *testing.T, c *Client, state string) {
	t.Helper()
	waitStateWithin(t, c, state, 3*time.Second)
}

func waitStateWithin(t *testing.T, c *Client, state string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for c.Status().State != state {
		if time.Now().After(deadline) {
			t.Fatalf("state %q after %v, want %q (%+v)", c.Status().State, d, state, c.Status())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wantCause fails t unless done delivers an error of cause within 2 s:
// Generate returned promptly after its context was cancelled with cause.
func wantCause(t *testing.T, done <-chan error, cause error) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("want the cancellation cause, got %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Generate did not return within 2s of the cancellation")
	}
}

// supervise runs c's supervisor until the test ends.
func supervise(t *testing.T, c *Client) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func TestDownAtStartComesBack(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	srv.Stop()
	c := newClient(t, srv, nil)
	select {
	case <-c.Checked():
		t.Fatal("checked before the supervisor ran")
	default:
	}
	supervise(t, c)

	select {
	case <-c.Checked():
	case <-time.After(5 * time.Second):
		t.Fatal("the start-up check did not end within 5 s")
	}
	if st := c.Status(); st.State != StateUnavailable {
		t.Fatalf("checked with the server down, state %q", st.State)
	}
	st := c.Status()
	if st.Reason == "" || st.RetryIn == "" {
		t.Fatalf("status should say why and when: %+v", st)
	}
	// Calls fail at once while down: the agent's fast paths do not wait.
	start := time.Now()
	_, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, llm.ErrUnavailable) || time.Since(start) > 50*time.Millisecond {
		t.Fatalf("want fast ErrUnavailable, got %v after %v", err, time.Since(start))
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, StateAvailable)
	// Coming back preloads the model.
	var preloaded bool
	for _, r := range srv.Requests() {
		preloaded = preloaded || r.Generate != nil && r.Generate.Prompt == ""
	}
	if !preloaded || c.Status().LastLoad == "" {
		t.Fatal("no preload after the server came back")
	}
	srv.Push(ollamatest.Answer{Content: `{"on":true}`})
	if _, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}, Schema: schema}); err != nil {
		t.Fatal(err)
	}
}

func TestServerDiesAndReturns(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	c := newClient(t, srv, nil)
	supervise(t, c)
	waitState(t, c, StateAvailable)

	// The answer breaks off (a killed runner): unavailable at once, and
	// available again as soon as the supervisor finds the server answering.
	srv.Push(ollamatest.Answer{Content: strings.Repeat("x", 200), Cut: true})
	_, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	waitState(t, c, StateAvailable)

	// The server goes away and comes back.
	srv.Stop()
	_, err = c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	waitState(t, c, StateUnavailable)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitState(t, c, StateAvailable)

	// A model removed while running: the 404 marks it unavailable with the
	// pull hint until it is back.
	srv.SetModels()
	_, err = c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}})
	if !strings.Contains(err.Error(), "ollama pull tiny") {
		t.Fatalf("got %v", err)
	}
	waitState(t, c, StateUnavailable)
	srv.SetModels("tiny:latest")
	waitState(t, c, StateAvailable)
}

func TestEmbed(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest", "embed:latest")
	c := newClient(t, srv, nil)
	vecs, err := c.Embed(context.Background(), []string{"turn on the headlight", "turn on the headlight", "pan the camera"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || len(vecs[0]) != 64 {
		t.Fatalf("shape %d×%d", len(vecs), len(vecs[0]))
	}
	for i := range vecs[0] {
		if vecs[0][i] != vecs[1][i] {
			t.Fatal("same text, different vectors")
		}
	}
	srv.OnEmbed(func(string, []string) ([][]float32, error) { return [][]float32{{1}}, nil })
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "1 vectors for 2 texts") {
		t.Fatalf("count mismatch not caught: %v", err)
	}
	off := newClient(t, srv, func(o *Options) { o.EmbedModel = "" })
	if _, err := off.Embed(context.Background(), []string{"a"}); !errors.Is(err, llm.ErrNoEmbedModel) {
		t.Fatalf("no embed model: %v", err)
	}
	missing := newClient(t, srv, func(o *Options) { o.EmbedModel = "nomic-embed-text" })
	if _, err := missing.Embed(context.Background(), []string{"a"}); !errors.Is(err, llm.ErrNoEmbedModel) ||
		!strings.Contains(err.Error(), "ollama pull nomic-embed-text") {
		t.Fatalf("embed model not pulled: %v", err)
	}
}

// The fake speaks both of Ollama's answer shapes; the api client reads
// either.
func TestFakeNonStreaming(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	srv.Push(ollamatest.Answer{Content: `{"on":true}`}, ollamatest.Answer{Content: "hello"})
	base, _ := ParseHost(srv.URL())
	cl := api.NewClient(base, http.DefaultClient)
	stream := false
	var got []api.ChatResponse
	err := cl.Chat(context.Background(), &api.ChatRequest{Model: "tiny", Stream: &stream,
		Messages: []api.Message{{Role: "user", Content: "x"}}}, func(r api.ChatResponse) error {
		got = append(got, r)
		return nil
	})
	if err != nil || len(got) != 1 || !got[0].Done || got[0].Message.Content != `{"on":true}` || got[0].EvalCount == 0 {
		t.Fatalf("%v %+v", err, got)
	}
	var gen []api.GenerateResponse
	err = cl.Generate(context.Background(), &api.GenerateRequest{Model: "tiny", Prompt: "x"}, func(r api.GenerateResponse) error {
		gen = append(gen, r)
		return nil
	})
	if err != nil || len(gen) < 2 || !gen[len(gen)-1].Done {
		t.Fatalf("%v %+v", err, gen)
	}
	var text string
	for _, g := range gen {
		text += g.Response
	}
	if text != "hello" {
		t.Fatalf("streamed %q", text)
	}
	if _, err := cl.Show(context.Background(), &api.ShowRequest{Model: "tiny"}); err != nil {
		t.Fatal(err)
	}
	var se api.StatusError
	if _, err := cl.Show(context.Background(), &api.ShowRequest{Model: "nope"}); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("show unknown: %v", err)
	}
	if err := cl.Heartbeat(context.Background()); err != nil {
		t.Fatal(err)
	}
}
