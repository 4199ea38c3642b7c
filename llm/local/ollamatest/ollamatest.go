// Package ollamatest is a fake Ollama server for tests. It speaks Ollama's
// HTTP API — /api/chat and /api/generate (NDJSON streaming and single JSON
// answers), /api/embed, /api/tags, /api/show, /api/version and HEAD / —
// with Ollama's status codes and {"error": "..."} bodies, so the real
// github.com/ollama/ollama/api client is exercised end to end. What the
// "model" answers is scripted by the test: good answers, slow ones, broken
// streams, malformed bodies, errors.
//
// It replaces the model, never the code under test: the adapter and the
// decision engine parse and validate whatever it says.
package ollamatest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/edgeagent/edgeagent/internal/embedinput"
)

// Version is what /api/version reports.
const Version = "0.17.4"

// Answer is what the fake model does with one chat or generate request.
type Answer struct {
	// Content is the answer text (the JSON document for structured calls).
	Content string
	// ChunkBytes splits a streamed answer into pieces of about this many
	// bytes (default 8), each its own NDJSON line.
	ChunkBytes int
	// Delay passes before the first byte, like a model reading a long
	// prompt. The fake notices when the client goes away meanwhile.
	Delay time.Duration
	// Hang never answers: the handler waits until the client closes the
	// connection (cancellation tests).
	Hang bool
	// Status answers with this HTTP status and Ollama's error body
	// {"error": Error} instead of content.
	Status int
	// Error without Status is sent as an NDJSON error line after the first
	// chunk, the way Ollama reports a failure in the middle of a stream.
	Error string
	// Raw is sent verbatim as the body with status 200: malformed answers.
	Raw string
	// Cut breaks the connection halfway through the stream, like a server
	// that was killed.
	Cut bool
	// DoneReason of the final chunk (default "stop"; "length" means the
	// answer hit num_predict).
	DoneReason string
	// Token counts; zero counts the request's and the answer's tokens.
	PromptEvalCount, EvalCount int
	LoadDuration               time.Duration
}

// Request is what the fake received.
type Request struct {
	Path     string
	Chat     *api.ChatRequest
	Generate *api.GenerateRequest
	Embed    *api.EmbedRequest
	// PromptBytes is the text a real server would put in the prompt:
	// message contents and the JSON of any tool specs.
	PromptBytes int
	// PromptTokens is PromptBytes counted in tokens (see Tokens).
	PromptTokens int
}

// Server is a fake Ollama server on a loopback port.
type Server struct {
	addr string

	mu       sync.Mutex
	respond  func(Request) Answer
	embedFn  func(model string, texts []string) ([][]float32, error)
	dims     int
	models   []string
	queue    []Answer
	requests []Request
	srv      *http.Server
	ln       net.Listener
	gone     chan string
	inFlight int
}

// Start runs a server listing models (default "tiny:latest") until the test
// ends.
func Start(tb testing.TB, models ...string) *Server {
	tb.Helper()
	s, err := Listen(models...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Listen runs a server listing models (default "tiny:latest") on a free
// loopback port until Stop: Start's for a process that is not a test
// (scripts/fakeollama).
func Listen(models ...string) (*Server, error) {
	if len(models) == 0 {
		models = []string{"tiny:latest"}
	}
	s := &Server{models: models, dims: 64, gone: make(chan string, 64)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	return s, nil
}

// URL is the server's base URL, for OLLAMA_HOST or local.Options.Host.
func (s *Server) URL() string { return "http://" + s.addr }

func (s *Server) serve(ln net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", s.root)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("POST /api/generate", s.generate)
	mux.HandleFunc("POST /api/embed", s.embed)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	s.mu.Lock()
	s.srv, s.ln = srv, ln
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// Stop closes the listener and every open connection: the server is down.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Restart brings a stopped server back on the same address.
func (s *Server) Restart() error {
	var ln net.Listener
	var err error
	for range 50 { // the port may linger for a moment after Stop
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			s.serve(ln)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// OnRequest sets how chat and generate requests are answered when the
// queue is empty; without it they get 500 "no answer scripted".
func (s *Server) OnRequest(fn func(Request) Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.respond = fn
}

// OnEmbed sets how /api/embed answers. Without it the fake embeds with a
// deterministic hashed bag of words (64 dimensions, L2-normalised), so
// similar texts get similar vectors.
func (s *Server) OnEmbed(fn func(model string, texts []string) ([][]float32, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFn = fn
}

// SetModels replaces the list /api/tags reports (a model pulled or removed).
func (s *Server) SetModels(models ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = models
}

// Push queues answers for the next chat/generate requests, in order.
func (s *Server) Push(a ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, a...)
}

// Requests returns what the server received, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Reset forgets received requests and queued answers.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests, s.queue = nil, nil
}

// Gone receives the path of every request whose client closed the
// connection before the answer was complete.
func (s *Server) Gone() <-chan string { return s.gone }

// WaitGone fails t unless the server sees a request to path closed by
// its client within 2 s.
func (s *Server) WaitGone(t testing.TB, path string) {
	t.Helper()
	select {
	case p := <-s.gone:
		if p != path {
			t.Fatalf("the request to %s was closed, want %s", p, path)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the fake Ollama did not see the request to %s closed", path)
	}
}

// InFlight is the number of chat/generate requests being answered.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

func (s *Server) root(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "404 page not found"})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("Ollama is running"))
}

// knownModel answers a request for a missing or unknown model as Ollama
// does (400, 404) and reports whether the model is there to serve it.
func (s *Server) knownModel(w http.ResponseWriter, model string) bool {
	switch {
	case model == "":
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "model is required"})
	case !s.has(model):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", model)})
	default:
		return true
	}
	return false
}

func (s *Server) has(model string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := canonical(model)
	for _, m := range s.models {
		if canonical(m) == want {
			return true
		}
	}
	return false
}

func canonical(name string) string {
	if i := strings.LastIndex(name, "/"); !strings.Contains(name[i+1:], ":") {
		return name + ":latest"
	}
	return name
}

func (s *Server) tags(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	models := append([]string(nil), s.models...)
	s.mu.Unlock()
	resp := api.ListResponse{Models: []api.ListModelResponse{}}
	for _, m := range models {
		resp.Models = append(resp.Models, api.ListModelResponse{
			Name: m, Model: m, ModifiedAt: time.Now().Add(-time.Hour), Size: 1 << 20,
			Digest:  fmt.Sprintf("%064x", fnv32(m)),
			Details: api.ModelDetails{Format: "gguf", Family: "llama", ParameterSize: "1M", QuantizationLevel: "F32"},
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	if !s.knownModel(w, name) {
		return
	}
	writeJSON(w, http.StatusOK, api.ShowResponse{
		Details:   api.ModelDetails{Format: "gguf", Family: "llama", ParameterSize: "1M", QuantizationLevel: "F32"},
		ModelInfo: map[string]any{"general.architecture": "llama", "llama.context_length": 4096},
	})
}

// tokenRE approximates a tokenizer: words and single punctuation marks.
var tokenRE = regexp.MustCompile(`[\pL\pN_]+|[^\pL\pN_\s]`)

// Tokens counts text the way the fake reports prompt_eval_count and
// eval_count: words and punctuation marks, close to a BPE tokenizer on
// English and JSON.
func Tokens(text string) int { return len(tokenRE.FindAllStringIndex(text, -1)) }

func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
}

func (s *Server) next(req Request) Answer {
	s.mu.Lock()
	if len(s.queue) > 0 {
		a := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return a
	}
	respond := s.respond
	s.mu.Unlock()
	if respond == nil {
		return Answer{Status: http.StatusInternalServerError, Error: "ollamatest: no answer scripted"}
	}
	return respond(req)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	text := ""
	for _, m := range req.Messages {
		text += m.Content
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		text += string(b)
	}
	rec := Request{Path: r.URL.Path, Chat: &req, PromptBytes: len(text), PromptTokens: Tokens(text)}
	s.record(rec)
	if !s.knownModel(w, req.Model) {
		return
	}
	if len(req.Messages) == 0 {
		writeJSON(w, http.StatusOK, api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(),
			Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "load"})
		return
	}
	s.answer(w, r, rec, req.Model, req.Stream, func(content string, done bool, a Answer, m api.Metrics) any {
		resp := api.ChatResponse{Model: req.Model, CreatedAt: time.Now().UTC(),
			Message: api.Message{Role: "assistant", Content: content}, Done: done}
		if done {
			resp.DoneReason, resp.Metrics = a.DoneReason, m
		}
		return resp
	})
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request) {
	var req api.GenerateRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	text := req.System + req.Prompt
	rec := Request{Path: r.URL.Path, Generate: &req, PromptBytes: len(text), PromptTokens: Tokens(text)}
	s.record(rec)
	if !s.knownModel(w, req.Model) {
		return
	}
	if req.Prompt == "" {
		writeJSON(w, http.StatusOK, api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Done: true, DoneReason: "load"})
		return
	}
	s.answer(w, r, rec, req.Model, req.Stream, func(content string, done bool, a Answer, m api.Metrics) any {
		resp := api.GenerateResponse{Model: req.Model, CreatedAt: time.Now().UTC(), Response: content, Done: done}
		if done {
			resp.DoneReason, resp.Metrics = a.DoneReason, m
		}
		return resp
	})
}

// answer plays one scripted Answer, streamed or not.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, rec Request, model string, stream *bool,
	chunk func(content string, done bool, a Answer, m api.Metrics) any) {
	s.mu.Lock()
	s.inFlight++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	a := s.next(rec)
	if a.DoneReason == "" {
		a.DoneReason = "stop"
	}
	if a.Hang {
		<-r.Context().Done()
		s.notifyGone(r.URL.Path)
		return
	}
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		select {
		case <-r.Context().Done():
			t.Stop()
			s.notifyGone(r.URL.Path)
			return
		case <-t.C:
		}
	}
	if a.Status != 0 {
		writeJSON(w, a.Status, map[string]string{"error": a.Error})
		return
	}
	if a.Raw != "" {
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write([]byte(a.Raw))
		return
	}
	m := api.Metrics{PromptEvalCount: a.PromptEvalCount, EvalCount: a.EvalCount, LoadDuration: a.LoadDuration,
		PromptEvalDuration: time.Millisecond, EvalDuration: time.Millisecond}
	if m.PromptEvalCount == 0 {
		m.PromptEvalCount = rec.PromptTokens
	}
	if m.EvalCount == 0 {
		m.EvalCount = Tokens(a.Content)
	}
	m.TotalDuration = m.LoadDuration + m.PromptEvalDuration + m.EvalDuration
	if stream != nil && !*stream {
		writeJSON(w, http.StatusOK, chunk(a.Content, true, a, m))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	size := a.ChunkBytes
	if size <= 0 {
		size = 8
	}
	pieces := split(a.Content, size)
	enc := json.NewEncoder(w)
	for i, p := range pieces {
		if a.Cut && i >= len(pieces)/2 {
			if flusher != nil {
				flusher.Flush()
			}
			panic(http.ErrAbortHandler) // drops the connection mid-stream
		}
		if err := enc.Encode(chunk(p, false, a, m)); err != nil {
			s.notifyGone(r.URL.Path)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if a.Error != "" {
			_ = enc.Encode(map[string]string{"error": a.Error})
			return
		}
	}
	if a.Cut {
		panic(http.ErrAbortHandler)
	}
	_ = enc.Encode(chunk("", true, a, m))
}

func (s *Server) notifyGone(path string) {
	select {
	case s.gone <- path:
	default:
	}
}

// split cuts s into pieces of about n bytes without splitting a rune.
func split(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && !utf8Start(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" || len(out) == 0 {
		out = append(out, s)
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	var req api.EmbedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	texts, err := embedinput.Texts(req.Input)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	n := 0
	for _, t := range texts {
		n += len(t)
	}
	s.record(Request{Path: r.URL.Path, Embed: &req, PromptBytes: n})
	if !s.knownModel(w, req.Model) {
		return
	}
	s.mu.Lock()
	fn := s.embedFn
	s.mu.Unlock()
	if fn == nil {
		fn = s.hashEmbed
	}
	vecs, err := fn(req.Model, texts)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, api.EmbedResponse{Model: req.Model, Embeddings: vecs,
		TotalDuration: time.Millisecond, PromptEvalCount: Tokens(strings.Join(texts, " "))})
}

// hashEmbed is a stand-in embedding model: lower-cased words hashed into
// 64 buckets, L2-normalised.
func (s *Server) hashEmbed(_ string, texts []string) ([][]float32, error) {
	s.mu.Lock()
	dims := s.dims
	s.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dims)
		for _, w := range tokenRE.FindAllString(strings.ToLower(t), -1) {
			v[fnv32(w)%uint32(dims)]++
		}
		var norm float64
		for _, x := range v {
			norm += float64(x * x)
		}
		if norm > 0 {
			inv := float32(1 / math.Sqrt(norm))
			for j := range v {
				v[j] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
