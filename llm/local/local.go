// Package local adapts a local Ollama server to llm.LLM, through Ollama's
// own Go client (github.com/ollama/ollama/api).
//
// Every chat call asks for structured output (the request's JSON Schema as
// Ollama's "format") with the same temperature, seed and num_ctx, because a
// changed num_ctx makes Ollama reload the model. Every call has a deadline
// and honours its context: cancelling it closes the HTTP request, which is
// how a preempted agent cycle stops the model.
//
// Run supervises the server: it checks the version and that the models are
// pulled, preloads the chat model, and when the server stops answering it
// marks the client unavailable (calls then fail at once with
// llm.ErrUnavailable, so the agent keeps to its fast paths) and retries
// with backoff until it answers again.
package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/llm"
)

// Options configure a Client. Zero values take the defaults noted.
type Options struct {
	// Host is the server address: "host:port", "http://host:port" …
	// Empty means $OLLAMA_HOST, else http://127.0.0.1:11434.
	Host string
	// Model answers Generate; it must be pulled on the server.
	Model string
	// EmbedModel answers Embed; empty means no embeddings
	// (Embed returns llm.ErrNoEmbedModel).
	EmbedModel  string
	NumCtx      int // context window of every chat call (default 4096)
	Seed        int
	Temperature float64
	// KeepAlive is how long the server keeps the models loaded after a
	// call; negative keeps them loaded, 0 leaves it to the server.
	KeepAlive time.Duration
	// Timeout bounds one call (default 30s).
	Timeout time.Duration
	// MaxTokens caps an answer when the request does not (default 512).
	MaxTokens int
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts while the server is down (default 500ms and 30s).
	MinBackoff, MaxBackoff time.Duration
	// Clock times the backoff, the preload and the deadline of every call (default the wall clock): a replay ends a call on its virtual clock.
	Clock clock.Clock
	// HTTPClient carries the requests (default: a client without a global
	// timeout; each call has its own deadline).
	HTTPClient *http.Client
	Log        *slog.Logger
}

// States of the client, as Status reports them.
const (
	StateStarting    = "starting"
	StateAvailable   = "available"
	StateUnavailable = "unavailable"
)

// Client is an Ollama-backed llm.LLM. It is safe for concurrent use.
type Client struct {
	o    Options
	base *url.URL
	api  *api.Client
	log  *slog.Logger

	kick chan string // a call failed: the supervisor marks the server down

	checked chan struct{} // closed once the state leaves "starting"

	mu         sync.Mutex
	state      string
	reason     string
	warned     string // the reason last logged, so a steady outage logs once
	callOK     bool   // a call succeeded since the supervisor last connected
	embedState string // ok | missing | off | unknown
	embedWhy   string
	version    string
	supervised bool
	retryAt    time.Time
	lastLoad   time.Duration
	stats      Stats
}

// Stats are running totals of the calls made.
type Stats struct {
	Calls        uint64 `json:"calls"`
	Failures     uint64 `json:"failures"`
	Cancelled    uint64 `json:"cancelled"`
	EmbedCalls   uint64 `json:"embed_calls"`
	PromptTokens uint64 `json:"prompt_tokens"`
	EvalTokens   uint64 `json:"eval_tokens"`
}

// Status is the client's state for agent.status.
type Status struct {
	State      string `json:"state"`
	Reason     string `json:"reason,omitempty"`
	Host       string `json:"host"`
	Model      string `json:"model"`
	Version    string `json:"version,omitempty"`
	EmbedModel string `json:"embed_model,omitempty"`
	// Embeddings: ok, missing (not pulled), off (no embed model
	// configured) or unknown (not checked yet).
	Embeddings string `json:"embeddings"`
	RetryIn    string `json:"retry_in,omitempty"`
	LastLoad   string `json:"last_load,omitempty"` // how long the last preload took
	Stats
}

// New builds a client; it does not contact the server (Check and Run do).
func New(o Options) (*Client, error) {
	if strings.TrimSpace(o.Model) == "" {
		return nil, errors.New("ollama: no model configured")
	}
	base, err := ParseHost(o.Host)
	if err != nil {
		return nil, err
	}
	if o.NumCtx <= 0 {
		o.NumCtx = 4096
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 512
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(30*time.Second, o.MinBackoff)
	}
	if o.HTTPClient == nil {
		// A transport of its own, so Close can drop its idle connections.
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	c := &Client{o: o, base: base, api: api.NewClient(base, o.HTTPClient), log: o.Log,
		kick: make(chan string, 1), checked: make(chan struct{}), state: StateStarting, embedState: "unknown"}
	if o.EmbedModel == "" {
		c.embedState = "off"
	}
	return c, nil
}

// ParseHost resolves an Ollama address the way the ollama CLI reads
// OLLAMA_HOST: the scheme defaults to http, the port to 11434 (80/443 when
// a scheme is given). Empty means $OLLAMA_HOST, else 127.0.0.1:11434.
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	}
	port := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, errors.New("the Ollama host (llm.host or OLLAMA_HOST): the scheme must be http or https")
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
		if host == "" {
			host = "127.0.0.1"
		}
	} else {
		port = p
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("ollama host %q: bad port %q", s, port)
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: path}, nil
}

// Close drops idle connections to the server. The client stays usable.
func (c *Client) Close() { c.o.HTTPClient.CloseIdleConnections() }

// Host is the server's base URL.
func (c *Client) Host() string { return c.base.String() }

// ModelMissingError says that a model is not pulled on the server.
type ModelMissingError struct {
	Model, Host string
}

func (e *ModelMissingError) Error() string {
	return fmt.Sprintf("model %q is not pulled on the Ollama server at %s: run `ollama pull %s`", e.Model, e.Host, e.Model)
}

// Check asks the server for its version and its models. It returns a
// *ModelMissingError when the chat model is not pulled; a missing embedding
// model is only recorded (Status, and Embed fails with ErrNoEmbedModel),
// since the agent then embeds with its lexical embedder.
//
// Its deadline, and the preload's, are on the wall clock: they bound a wait
// for a server outside the run, and a replay waits for the first check
// before it moves its virtual clock (a replay's server answers at once;
// what it answers is what the recording decides).
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := clock.WithTimeout(ctx, clock.Real(), min(c.o.Timeout, 5*time.Second))
	defer cancel()
	v, err := c.api.Version(ctx)
	if err != nil {
		return fmt.Errorf("ollama at %s: %w", c.base, err)
	}
	list, err := c.api.List(ctx)
	if err != nil {
		return fmt.Errorf("ollama at %s: listing models: %w", c.base, err)
	}
	have := func(want string) bool {
		want = canonical(want)
		for _, m := range list.Models {
			if canonical(m.Name) == want || canonical(m.Model) == want {
				return true
			}
		}
		return false
	}
	c.mu.Lock()
	c.version = v
	if c.o.EmbedModel != "" {
		if have(c.o.EmbedModel) {
			c.embedState, c.embedWhy = "ok", ""
		} else {
			c.embedState = "missing"
			c.embedWhy = (&ModelMissingError{c.o.EmbedModel, c.base.String()}).Error()
		}
	}
	c.mu.Unlock()
	if !have(c.o.Model) {
		return &ModelMissingError{c.o.Model, c.base.String()}
	}
	return nil
}

// canonical adds the ":latest" tag Ollama lists untagged models under.
func canonical(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		name += ":latest"
	}
	return name
}

// Preload loads the chat model with the options every call uses, so the
// first decision does not pay the load time. Ollama answers a load request
// without metrics, so it returns how long the request took: the load time
// when the model was not loaded, a few milliseconds when it was.
func (c *Client) Preload(ctx context.Context) (time.Duration, error) {
	ctx, cancel := clock.WithTimeout(ctx, clock.Real(), c.o.Timeout) // see Check
	defer cancel()
	start := c.o.Clock.Now()
	done := false
	err := c.api.Generate(ctx, &api.GenerateRequest{
		Model: c.o.Model, KeepAlive: c.keepAlive(), Options: c.options(0),
	}, func(r api.GenerateResponse) error {
		done = done || r.Done
		return nil
	})
	took := c.o.Clock.Since(start)
	if err == nil && !done {
		err = errors.New("the server closed the stream before loading finished")
	}
	if err != nil {
		return 0, fmt.Errorf("preloading %s: %w", c.o.Model, c.describe(err))
	}
	c.mu.Lock()
	c.lastLoad = took
	c.mu.Unlock()
	return took, nil
}

func (c *Client) keepAlive() *api.Duration {
	if c.o.KeepAlive == 0 {
		return nil
	}
	return &api.Duration{Duration: c.o.KeepAlive}
}

// options are the same for every chat call except the answer cap, which
// does not make Ollama reload the model.
func (c *Client) options(maxTokens int) map[string]any {
	o := map[string]any{
		"num_ctx":     c.o.NumCtx,
		"seed":        c.o.Seed,
		"temperature": c.o.Temperature,
	}
	if maxTokens > 0 {
		o["num_predict"] = maxTokens
	}
	return o
}

// Run supervises the server until ctx ends: check, preload, and after a
// failure retry with exponential backoff. Calls fail fast while it reports
// the server down.
//
// Every failure waits out its backoff step, whatever its kind (refused,
// EOF, 5xx, timeout, malformed answer) and whoever saw it (the check or a
// call): a failed call only tells the supervisor, it never starts an
// attempt early. So a server that accepts and drops every connection costs
// one attempt per step, not one per agent cycle.
func (c *Client) Run(ctx context.Context) {
	c.mu.Lock()
	c.supervised = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.supervised = false
		c.mu.Unlock()
	}()
	backoff := c.o.MinBackoff
	for {
		err := c.connect(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			up := c.o.Clock.Now()
			var why string
			select {
			case <-ctx.Done():
				return
			case why = <-c.kick:
			}
			// The step grows while the server passes its check and then fails
			// the first call (flapping); it starts over once calls worked or
			// the server stayed up for a whole step.
			if c.takeCallOK() || c.o.Clock.Now().Sub(up) >= c.o.MaxBackoff {
				backoff = c.o.MinBackoff
			}
			err = errors.New(why)
		}
		c.setDown(err.Error(), backoff)
		if !c.wait(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, c.o.MaxBackoff)
	}
}

// wait waits out one backoff step; it reports false when ctx ended. A
// call that fails meanwhile was in flight when the server went down (later
// ones fail fast): it says nothing new, so it is read and let go, and the
// step holds.
func (c *Client) wait(ctx context.Context, d time.Duration) bool {
	t := c.o.Clock.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			return true
		case why := <-c.kick:
			c.log.Debug("ollama: a call failed while waiting to retry; the backoff holds", "why", why)
		}
	}
}

func (c *Client) takeCallOK() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := c.callOK
	c.callOK = false
	return ok
}

// connect checks the server and, when it was not available before,
// preloads the model.
func (c *Client) connect(ctx context.Context) error {
	if err := c.Check(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	wasUp := c.state == StateAvailable
	c.mu.Unlock()
	if !wasUp {
		load, err := c.Preload(ctx)
		if err != nil {
			return err
		}
		c.log.Info("ollama ready", "host", c.base.String(), "version", c.Version(), "model", c.o.Model,
			"load", load.Round(time.Millisecond), "embeddings", c.Status().Embeddings)
	}
	c.setUp()
	return nil
}

// Version is the server version seen by the last check.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

func (c *Client) setUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StateAvailable && c.state != StateStarting {
		c.log.Info("ollama available again", "host", c.base.String())
	}
	c.leave(StateAvailable)
	c.reason, c.warned, c.retryAt, c.callOK = "", "", time.Time{}, false
}

func (c *Client) setDown(reason string, retry time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned != reason {
		c.log.Warn("ollama unavailable; the agent keeps to its fast paths", "reason", reason, "retry_in", retry)
		c.warned = reason
	}
	c.leave(StateUnavailable)
	c.reason, c.retryAt = reason, c.o.Clock.Now().Add(retry)
}

// leave sets the state, under mu; the first state after "starting" closes
// checked.
func (c *Client) leave(state string) {
	if c.state == StateStarting && state != StateStarting {
		close(c.checked)
	}
	c.state = state
}

// Checked is closed once the client knows whether the server answers: its
// first check, or its first call without a supervisor, has been made.
// A replay waits for it, so that an LLM call the recording found the
// server down for is refused as unavailable, not tried and failed.
func (c *Client) Checked() <-chan struct{} { return c.checked }

// trouble tells the supervisor that a call failed in a way that suggests
// the server is gone or broken (refused, EOF, 5xx, timeout, malformed
// answer, model removed): calls fail fast from now on, and the supervisor
// retries after its backoff.
func (c *Client) trouble(why string) {
	c.mu.Lock()
	if c.supervised {
		c.leave(StateUnavailable)
		c.reason = why
	}
	c.mu.Unlock()
	select {
	case c.kick <- why:
	default:
	}
}

// usable fails fast while the supervisor knows the server is down.
func (c *Client) usable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.supervised && c.state == StateUnavailable {
		return fmt.Errorf("%w: %s", llm.ErrUnavailable, c.reason)
	}
	return nil
}

// Status reports the client's state.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Status{State: c.state, Reason: c.reason, Host: c.base.String(), Model: c.o.Model, Version: c.version,
		EmbedModel: c.o.EmbedModel, Embeddings: c.embedState, Stats: c.stats}
	if c.embedState == "missing" && s.Reason == "" {
		s.Reason = c.embedWhy
	}
	if !c.retryAt.IsZero() {
		s.RetryIn = max(c.retryAt.Sub(c.o.Clock.Now()), 0).Round(time.Millisecond).String()
	}
	if c.lastLoad > 0 {
		s.LastLoad = c.lastLoad.Round(time.Microsecond).String()
	}
	return s
}

// Generate runs one chat call with structured output.
func (c *Client) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := c.usable(); err != nil {
		return llm.Response{}, err
	}
	msgs := make([]api.Message, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, api.Message{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, api.Message{Role: m.Role, Content: m.Content})
	}
	if len(req.Images) > 0 {
		last := len(msgs) - 1
		for last >= 0 && msgs[last].Role != "user" {
			last--
		}
		if last < 0 {
			return llm.Response{}, fmt.Errorf("ollama %s: images need a user message to go with", req.Purpose)
		}
		for _, img := range req.Images {
			msgs[last].Images = append(msgs[last].Images, api.ImageData(img))
		}
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.o.MaxTokens
	}
	creq := &api.ChatRequest{Model: c.o.Model, Messages: msgs, Format: grammarSchema(req.Schema),
		KeepAlive: c.keepAlive(), Options: c.options(maxTokens)}

	cctx, cancel := clock.WithTimeout(ctx, c.o.Clock, c.o.Timeout)
	defer cancel()
	var content strings.Builder
	var final *api.ChatResponse
	chat := func() error {
		content.Reset()
		final = nil
		err := c.api.Chat(cctx, creq, func(r api.ChatResponse) error {
			content.WriteString(r.Message.Content)
			if r.Done {
				final = &r
			}
			return nil
		})
		c.count(func(s *Stats) { s.Calls++ })
		return err
	}
	err := chat()
	var se api.StatusError
	if errors.As(err, &se) && strings.Contains(se.ErrorMessage, "invalid JSON schema") && len(creq.Format) > 0 {
		// The server cannot make a grammar of this schema: ask for plain
		// JSON instead; the caller validates against the schema anyway.
		c.log.Warn("ollama rejected a format schema; asking for plain JSON", "purpose", req.Purpose, "err", se.ErrorMessage)
		creq.Format = json.RawMessage(`"json"`)
		err = chat()
	}
	switch {
	case ctx.Err() != nil:
		// The caller gave up (a preemption): the request was closed.
		c.count(func(s *Stats) { s.Cancelled++ })
		return llm.Response{}, fmt.Errorf("ollama %s: %w", req.Purpose, context.Cause(ctx))
	case cctx.Err() != nil:
		c.count(func(s *Stats) { s.Failures++ })
		c.trouble("a call timed out")
		return llm.Response{}, fmt.Errorf("ollama %s: no answer within %s: %w", req.Purpose, c.o.Timeout, context.DeadlineExceeded)
	case err != nil:
		c.count(func(s *Stats) { s.Failures++ })
		return llm.Response{}, fmt.Errorf("ollama %s: %w", req.Purpose, c.describe(err))
	case final == nil:
		// api.Client ends quietly when the body breaks off: the server
		// went away in the middle of the answer.
		c.count(func(s *Stats) { s.Failures++ })
		c.trouble("the server broke off an answer")
		return llm.Response{}, fmt.Errorf("ollama %s: %w: the server closed the answer before it was done", req.Purpose, llm.ErrUnavailable)
	}
	u := llm.Usage{Model: final.Model, PromptTokens: final.PromptEvalCount, EvalTokens: final.EvalCount,
		Load: final.LoadDuration, PromptEval: final.PromptEvalDuration, Eval: final.EvalDuration, Total: final.TotalDuration}
	c.count(func(s *Stats) {
		s.PromptTokens += uint64(max(u.PromptTokens, 0))
		s.EvalTokens += uint64(max(u.EvalTokens, 0))
	})
	c.callWorked()
	c.setUpIfStarting()
	if final.DoneReason == "length" {
		return llm.Response{Content: content.String(), Usage: u}, fmt.Errorf("ollama %s: %w (%d tokens)", req.Purpose, llm.ErrTruncated, maxTokens)
	}
	if len(req.Schema) > 0 {
		// A structured answer with a key twice means different things to
		// different parsers; no stage of the engine may act on it.
		if err := strictjson.CheckKeys([]byte(content.String())); err != nil {
			return llm.Response{Content: content.String(), Usage: u}, fmt.Errorf("ollama %s: answer refused: %w", req.Purpose, err)
		}
	}
	return llm.Response{Content: content.String(), Usage: u}, nil
}

// callWorked tells the supervisor that the server answered a call.
func (c *Client) callWorked() {
	c.mu.Lock()
	c.callOK = true
	c.mu.Unlock()
}

// setUpIfStarting marks the client available after a successful call when
// no supervisor runs (the CLI, tests).
func (c *Client) setUpIfStarting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.supervised {
		c.leave(StateAvailable)
		c.reason = ""
	}
}

func (c *Client) count(f func(*Stats)) {
	c.mu.Lock()
	f(&c.stats)
	c.mu.Unlock()
}

// describe turns the api client's errors into ours: a transport failure
// means the server is unreachable; a 404 that the model is not pulled; a
// 5xx or an answer outside Ollama's protocol that the server is broken.
// All of these take the server out of use until the supervisor's next
// attempt; other 4xx answers are about the one request.
func (c *Client) describe(err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		switch {
		case se.StatusCode == http.StatusNotFound:
			missing := &ModelMissingError{c.o.Model, c.base.String()}
			c.trouble(missing.Error())
			return fmt.Errorf("%w: %s (server said: %s)", llm.ErrUnavailable, missing, se.ErrorMessage)
		case se.StatusCode >= 500:
			c.trouble(fmt.Sprintf("server error %d", se.StatusCode))
		}
		return fmt.Errorf("server error %d: %s", se.StatusCode, se.ErrorMessage)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		c.trouble(err.Error())
		return fmt.Errorf("%w: %v", llm.ErrUnavailable, err)
	}
	// The server answered something that is not Ollama's protocol.
	c.trouble("malformed answer")
	return fmt.Errorf("malformed answer: %v", err)
}

// Embed returns one vector per text from the embedding model.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	state, why := c.embedState, c.embedWhy
	c.mu.Unlock()
	switch state {
	case "off":
		return nil, llm.ErrNoEmbedModel
	case "missing":
		return nil, fmt.Errorf("%w: %s", llm.ErrNoEmbedModel, why)
	}
	if err := c.usable(); err != nil {
		return nil, err
	}
	if len(texts) == 0 {
		return nil, nil
	}
	cctx, cancel := clock.WithTimeout(ctx, c.o.Clock, c.o.Timeout)
	defer cancel()
	truncate := true
	resp, err := c.api.Embed(cctx, &api.EmbedRequest{Model: c.o.EmbedModel, Input: texts, KeepAlive: c.keepAlive(), Truncate: &truncate})
	c.count(func(s *Stats) { s.EmbedCalls++ })
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("ollama embed: %w", context.Cause(ctx))
	case cctx.Err() != nil:
		c.trouble("an embed call timed out")
		return nil, fmt.Errorf("ollama embed: no answer within %s: %w", c.o.Timeout, context.DeadlineExceeded)
	case err != nil:
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			missing := &ModelMissingError{c.o.EmbedModel, c.base.String()}
			c.mu.Lock()
			c.embedState, c.embedWhy = "missing", missing.Error()
			c.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", llm.ErrNoEmbedModel, missing)
		}
		return nil, fmt.Errorf("ollama embed: %w", c.describe(err))
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama embed: %d vectors for %d texts", len(resp.Embeddings), len(texts))
	}
	for i, v := range resp.Embeddings {
		if len(v) == 0 || len(v) != len(resp.Embeddings[0]) {
			return nil, fmt.Errorf("ollama embed: vector %d has %d dimensions", i, len(v))
		}
	}
	c.mu.Lock()
	c.embedState, c.callOK = "ok", true
	c.mu.Unlock()
	return resp.Embeddings, nil
}

var _ llm.LLM = (*Client)(nil)
