package local

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
)

var epoch = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// attempts records, on the fake clock, when a broken server was contacted.
type attempts struct {
	clk *clock.Fake
	mu  sync.Mutex
	at  []time.Duration
}

func (a *attempts) add() {
	a.mu.Lock()
	a.at = append(a.at, a.clk.Now().Sub(epoch))
	a.mu.Unlock()
}

func (a *attempts) list() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Duration(nil), a.at...)
}

// eofServer is a real listener that accepts every connection and closes
// it at once: what a client sees from an Ollama whose process dies on
// every request, or from a proxy with nothing behind it.
func eofServer(t *testing.T, a *attempts) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			a.add()
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

// httpServer answers every request with h after recording it.
func httpServer(t *testing.T, a *attempts, h http.HandlerFunc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.add()
		h(w, r)
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// closedPort is an address nothing listens on: connection refused.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestBackoffHoldsForEveryFailureKind: whatever way the server fails, the
// supervisor makes exactly one attempt per backoff step, and failed calls
// made meanwhile neither reach the server nor start an attempt early.
func TestBackoffHoldsForEveryFailureKind(t *testing.T) {
	kinds := []struct {
		name  string
		start func(*testing.T, *attempts) string
		count bool // the server can count the attempts
	}{
		{"eof", eofServer, true},
		// The server lists the model but drops every generate and chat
		// connection (a runner that dies on load, a proxy): the check
		// passes and the preload fails, each step.
		{"eof after check", func(t *testing.T, a *attempts) string {
			return httpServer(t, a, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/api/version":
					_, _ = w.Write([]byte(`{"version":"0.17.4"}`))
				case "/api/tags":
					_, _ = w.Write([]byte(`{"models":[{"name":"tiny:latest","model":"tiny:latest"}]}`))
				default:
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
				}
			})
		}, false},
		{"refused", func(t *testing.T, _ *attempts) string { return closedPort(t) }, false},
		{"5xx", func(t *testing.T, a *attempts) string {
			return httpServer(t, a, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, `{"error":"llama runner process has terminated"}`, http.StatusInternalServerError)
			})
		}, true},
		{"bad json", func(t *testing.T, a *attempts) string {
			return httpServer(t, a, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>proxy error")) })
		}, true},
		{"timeout", func(t *testing.T, a *attempts) string {
			return httpServer(t, a, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		}, true},
	}
	// The default steps, over a little more than 30 s of outage.
	steps := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			clk := clock.NewFake(epoch)
			a := &attempts{clk: clk}
			host := k.start(t, a)
			c, err := New(Options{Host: host, Model: "tiny", Timeout: 50 * time.Millisecond, Clock: clk, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			supervise(t, c)
			var want []time.Duration
			var elapsed time.Duration
			for _, step := range steps {
				want = append(want, elapsed)
				clk.BlockUntil(1) // the attempt failed; the supervisor waits
				if st := c.Status(); st.State != StateUnavailable || st.RetryIn != step.String() {
					t.Fatalf("after %v: state %s retry_in %s, want unavailable for %v", elapsed, st.State, st.RetryIn, step)
				}
				// Calls during the wait (the agent's cycles) fail fast, and a
				// call that was in flight when the server went down reports
				// its failure: neither cuts the wait short.
				if _, err := c.Generate(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}); !errors.Is(err, llm.ErrUnavailable) {
					t.Fatalf("call while down: %v", err)
				}
				// Two reports, each read by the supervisor before the next:
				// had the first started an attempt, that attempt would be
				// over (recorded, and the step doubled) by the time the
				// second is read.
				for range 2 {
					c.trouble("a call in flight failed")
					for len(c.kick) > 0 {
						runtime.Gosched()
					}
				}
				if st := c.Status(); st.RetryIn != step.String() {
					t.Fatalf("after %v: a failed call moved the retry to %s, want %v", elapsed, st.RetryIn, step)
				}
				if k.count {
					if got := a.list(); !equalDurations(got, want) {
						t.Fatalf("attempts at %v, want one per step at %v", got, want)
					}
				}
				clk.Advance(step)
				elapsed += step
			}
			clk.BlockUntil(1)
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFailedCallWaitsItsBackoff: a server that passes its check but fails
// the calls (a crashed runner, a proxy in front) is taken out of use by
// the failed call, and retried only after the backoff; the step grows while
// it keeps failing the first call after a passed check, and starts over
// once a call worked.
func TestFailedCallWaitsItsBackoff(t *testing.T) {
	srv := ollamatest.Start(t, "tiny:latest")
	clk := clock.NewFake(epoch)
	c := newClient(t, srv, func(o *Options) {
		o.Clock, o.MinBackoff, o.MaxBackoff, o.Timeout, o.EmbedModel = clk, time.Second, 4*time.Second, 200*time.Millisecond, ""
	})
	supervise(t, c)
	waitState(t, c, StateAvailable)
	req := llm.Request{Messages: []llm.Message{{Role: "user", Content: "x"}}}
	fails := []struct {
		name   string
		answer ollamatest.Answer
		step   time.Duration
	}{
		{"5xx", ollamatest.Answer{Status: http.StatusInternalServerError, Error: "llama runner process has terminated"}, time.Second},
		{"bad json", ollamatest.Answer{Raw: "<html>proxy error</html>\n"}, 2 * time.Second},
		{"eof mid-answer", ollamatest.Answer{Content: `{"on": true, "padding": "xxxxxxxxxxxxxxxxxxxxxxxx"}`, Cut: true}, 4 * time.Second},
		{"timeout", ollamatest.Answer{Content: `{"on":true}`, Delay: 5 * time.Second}, 4 * time.Second},
	}
	for _, f := range fails {
		srv.Push(f.answer)
		failed := make(chan error, 1)
		go func() {
			_, err := c.Generate(context.Background(), req)
			failed <- err
		}()
		if f.answer.Delay > 0 {
			// The call's deadline is on the client's clock; it passes once
			// the server has the request (and so has taken its answer).
			clk.BlockUntil(1)
			for srv.InFlight() == 0 {
				time.Sleep(time.Millisecond)
			}
			clk.Advance(200 * time.Millisecond)
		}
		if err := <-failed; err == nil {
			t.Fatalf("%s: the call succeeded", f.name)
		}
		if st := c.Status(); st.State != StateUnavailable {
			t.Fatalf("%s: still %s after the failed call", f.name, st.State)
		}
		clk.BlockUntil(1)
		if st := c.Status(); st.RetryIn != f.step.String() {
			t.Fatalf("%s: retry in %s, want %v", f.name, st.RetryIn, f.step)
		}
		before := len(srv.Requests())
		if _, err := c.Generate(context.Background(), req); !errors.Is(err, llm.ErrUnavailable) {
			t.Fatalf("%s: call while down: %v", f.name, err)
		}
		if n := len(srv.Requests()); n != before {
			t.Fatalf("%s: %d requests reached the server while it was down", f.name, n-before)
		}
		clk.Advance(f.step)
		waitState(t, c, StateAvailable)
	}
	// A call that works resets the step.
	srv.Push(ollamatest.Answer{Content: `{"on":true}`}, ollamatest.Answer{Status: http.StatusServiceUnavailable, Error: "busy"})
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Generate(context.Background(), req); err == nil {
		t.Fatal("the 503 succeeded")
	}
	clk.BlockUntil(1)
	if st := c.Status(); st.RetryIn != time.Second.String() {
		t.Fatalf("after a good call the step should start over: retry in %s", st.RetryIn)
	}
}
