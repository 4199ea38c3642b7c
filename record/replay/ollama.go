package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/edgeagent/edgeagent/clock"
)

// ollama answers the replay's LLM calls from the recording, speaking
// Ollama's HTTP protocol on loopback, so the agent's real client and
// engine run unchanged (--llm recorded). Calls are answered in recorded
// order. A prompt other than the recorded one is a divergence (the first
// is kept); it is still answered, so the replay goes on. A call that was
// cut off when recorded (a preemption) is held until the agent gives up on
// it, which is what lets the replay feed the preempting event at that
// moment. So is a call that ran out its deadline when recorded (the
// cycle's, or the client's per call): the client's deadline is on the
// replay's clock (clock.WithTimeout), so the call ends when the replay
// moves its clock past that deadline, and fails with the recorded error
// text; meanwhile the agent waits for virtual time, as a call that says
// clock.Waiting does, and the replay goes on feeding (hold).
type ollama struct {
	clk   clock.Clock // the replay's: an answer takes its recorded time on it
	srv   *http.Server
	ln    net.Listener
	model string
	// embeds answer /api/embed; read-only once serving.
	embeds embeddings

	mu    sync.Mutex
	tape  []exchange
	next  int
	first string // the first prompt mismatch
	// Calls held open now: cut off when recorded (a cancellation), and
	// until their deadline; holds counts the holds begun, ever (the
	// latest one's number).
	cutHeld, lateHeld int
	holds             int
	answered          int
	vectors           int // embedding calls answered with recorded vectors
}

func startOllama(clk clock.Clock, tape []exchange, embeds embeddings, model, embedModel string) (*ollama, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("--llm recorded: %w", err)
	}
	o := &ollama{clk: clk, ln: ln, tape: tape, model: model, embeds: embeds}
	models := []map[string]string{{"name": model, "model": model}}
	if embedModel != "" {
		models = append(models, map[string]string{"name": embedModel, "model": embedModel})
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/version", o.version)
	mux.HandleFunc("/api/tags", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"models": models})
	})
	mux.HandleFunc("/api/generate", func(w http.ResponseWriter, _ *http.Request) { // the preload
		writeJSON(w, http.StatusOK, map[string]any{"model": model, "created_at": time.Unix(0, 0).UTC(), "done": true, "done_reason": "load"})
	})
	mux.HandleFunc("/api/embed", o.embed)
	mux.HandleFunc("/api/chat", o.chat)
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = o.srv.Serve(ln) }() // ends with close
	return o, nil
}

// version answers the client's health check: down while the next recorded
// call found the server down, so the client is where it was when recorded
// and no replay ever dials a real model server.
func (o *ollama) version(w http.ResponseWriter, _ *http.Request) {
	o.mu.Lock()
	down := o.next < len(o.tape) && unavailable(o.tape[o.next].Error) || len(o.tape) == 0
	o.mu.Unlock()
	if down {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "replay: the model server was unavailable when recorded"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"version": "0.0.0-replay"})
}

func (o *ollama) url() string { return "http://" + o.ln.Addr().String() }

func (o *ollama) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = o.srv.Shutdown(ctx)
}

// prompt is what of an LLM request a replay compares: the system prompt and
// the messages without their world summary ("World now:" to the end of a
// message). The summary's ages are on the virtual clock now, but a cycle
// senses the world when it starts, and live that is after a wall-clock
// delay (the loop finishing a cycle, the scheduler) during which readings
// kept coming; the replay feeds nothing while a cycle runs. A heartbeat's
// prompt matches with its summary; a command's need not (seen: 48 sources
// live, 46 replayed, 0.1 s apart in age).
func prompt(system string, msgs []llmMessage) string {
	var b strings.Builder
	if system != "" {
		b.WriteString("system: " + system + "\n")
	}
	for _, m := range msgs {
		c := m.Content
		if i := strings.Index(c, "World now:\n"); i >= 0 {
			c = c[:i] + "World now: (not compared)\n"
		}
		b.WriteString(m.Role + ": " + c + "\n")
	}
	return b.String()
}

func (o *ollama) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string       `json:"model"`
		Messages []llmMessage `json:"messages"`
		Stream   *bool        `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request"})
		return
	}
	got := prompt("", req.Messages)
	o.mu.Lock()
	if o.next >= len(o.tape) {
		if o.first == "" {
			o.first = fmt.Sprintf("LLM call %d (%s…) was not in the recording (it has %d)", o.next+1, head(got), len(o.tape))
		}
		o.next++
		o.mu.Unlock()
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "replay: no recorded answer left"})
		return
	}
	x := o.tape[o.next]
	o.next++
	if want := prompt(x.System, x.Messages); want != got && o.first == "" {
		o.first = fmt.Sprintf("LLM call %d (%s): the prompt differs from the recorded one at byte %d:\n  recorded …%s…\n  replayed …%s…",
			o.next, x.Purpose, firstDiff(want, got), around(want, firstDiff(want, got)), around(got, firstDiff(want, got)))
	}
	o.answered++
	var held *int
	switch {
	case cutOff(x.Error):
		held = &o.cutHeld
	case timedOut(x.Error):
		held = &o.lateHeld
	}
	if held != nil {
		*held++
		o.holds++
	}
	o.mu.Unlock()
	switch {
	case held != nil:
		<-r.Context().Done()
		o.mu.Lock()
		*held--
		o.mu.Unlock()
		return
	case unavailable(x.Error):
		// Recorded while the server was down: the client must see it down
		// (a missing model is how this server can say so).
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "replay: the model server was unavailable when recorded"})
		return
	case fromAnswer(x.Error):
		// The client found the answer wanting: it does again, from the
		// recorded answer.
	case x.Error != "":
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": x.Error})
		return
	}
	if !o.took(r, x.Duration) {
		return // the client gave up first (a preemption, a deadline)
	}
	reason := "stop"
	if strings.Contains(x.Error, truncated) {
		reason = "length"
	}
	done := map[string]any{"model": req.Model, "created_at": time.Unix(0, 0).UTC(), "done": true, "done_reason": reason,
		"message": map[string]string{"role": "assistant", "content": ""}}
	if req.Stream != nil && !*req.Stream {
		done["message"] = map[string]string{"role": "assistant", "content": x.Answer}
		writeJSON(w, http.StatusOK, done)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	_ = enc.Encode(map[string]any{"model": req.Model, "created_at": time.Unix(0, 0).UTC(), "done": false,
		"message": map[string]string{"role": "assistant", "content": x.Answer}})
	_ = enc.Encode(done)
}

// took holds an answered call for the time it took when recorded, on the
// replay's clock, as a call held until its deadline is held (lateHeld:
// the replay moves its clock through it, see driver.throughDeadlines), so
// what came from outside while the model answered comes before the
// answer again. It reports false when the client gave up first.
func (o *ollama) took(r *http.Request, ms float64) bool {
	d := time.Duration(ms * float64(time.Millisecond))
	if d <= 0 {
		return true
	}
	answer := make(chan struct{})
	t := o.clk.AfterFunc(d, func() { close(answer) })
	defer t.Stop()
	o.mu.Lock()
	o.lateHeld++
	o.holds++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.lateHeld--
		o.mu.Unlock()
	}()
	select {
	case <-answer:
		return true
	case <-r.Context().Done():
		return false
	}
}

// hold reports the number of the latest hold while calls are held (0:
// none), and whether one of them waits for its deadline (else it waits to
// be cut off by what the replay feeds next).
func (o *ollama) hold() (n int, late bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cutHeld+o.lateHeld == 0 {
		return 0, false
	}
	return o.holds, o.lateHeld > 0
}

func (o *ollama) served() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.answered
}

func (o *ollama) embedded() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.vectors
}

// mismatch is the first prompt that was not the recorded one.
func (o *ollama) mismatch() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func around(s string, i int) string {
	lo, hi := max(0, i-40), min(len(s), i+40)
	for lo > 0 && !utf8.RuneStart(s[lo]) {
		lo--
	}
	for hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi++
	}
	return strings.ReplaceAll(s[lo:hi], "\n", `\n`)
}

func head(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

// unavailable: the recorded call failed because the model server was down
// (llm.ErrUnavailable's text leads the error).
func unavailable(err string) bool { return strings.HasPrefix(err, "llm unavailable") }

// cutOff: the recorded call was abandoned by the agent (a preemption).
func cutOff(err string) bool {
	return strings.Contains(err, "preempted") || strings.Contains(err, "context canceled")
}

// truncated is llm.ErrTruncated's text: the answer hit the token limit
// (Ollama's done_reason "length").
const truncated = "answer cut off at the token limit"

// fromAnswer: the recorded call's error is the client's verdict on the
// answer the model gave (cut off at the token limit, or refused: a key
// twice), not the server's.
func fromAnswer(err string) bool {
	return strings.Contains(err, truncated) || strings.Contains(err, ": answer refused: ")
}

// timedOut: the recorded call ran out a deadline, the agent's cycle's or
// the client's own (context.DeadlineExceeded's text ends both errors).
func timedOut(err string) bool { return strings.HasSuffix(err, context.DeadlineExceeded.Error()) }
