package dashboard

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"
)

// logLines keeps what the throttle logs, stamped with the fake clock's
// time, so the test can check the spacing of the lines.
type logLines struct {
	clk  *clock.Fake
	mu   sync.Mutex
	recs []logLine
	more chan struct{}
}

type logLine struct {
	at    time.Time
	msg   string
	attrs map[string]int64
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	line := logLine{at: l.clk.Now(), msg: r.Message, attrs: map[string]int64{}}
	r.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindInt64 {
			line.attrs[a.Key] = a.Value.Int64()
		}
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, line)
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
	return nil
}

func (l *logLines) lines() []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logLine(nil), l.recs...)
}

// waitLines waits until n lines were logged (the flush runs on its own
// goroutine once the fake clock passes its time).
func (l *logLines) waitLines(t *testing.T, n int) []logLine {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		if got := l.lines(); len(got) >= n {
			return got
		}
		select {
		case <-l.more:
		case <-deadline:
			t.Fatalf("%d log lines, want %d", len(l.lines()), n)
		}
	}
}

func TestHundredWrongLoginsAreThrottled(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	logs := &logLines{clk: clk, more: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{opts: testAuth(t, clk, store.NewMemory()).opts, log: slog.New(logs)}
	s.opts.Listen = "0.0.0.0:8080"
	a, err := newAuth(s.opts, store.NewMemory(), clk, newThrottle(ctx, clk, s.log))
	if err != nil {
		t.Fatal(err)
	}
	s.auth = a
	login := func(remote, password string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "/api/login", strings.NewReader(`{"user":"alice","password":"`+password+`"}`))
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		s.handleLogin(w, r)
		return w.Code, w.Header().Get("Retry-After")
	}
	const guesser, other = "203.0.113.5:41000", "198.51.100.9:52000"

	// 100 wrong logins at once: five are checked, the rest refused unchecked.
	codes := map[int]int{}
	for i := range 100 {
		code, retry := login(guesser, "guess")
		codes[code]++
		if i < freeFailures && code != http.StatusUnauthorized || i >= freeFailures && (code != http.StatusTooManyRequests || retry != "1") {
			t.Fatalf("login %d: %d (Retry-After %q)", i+1, code, retry)
		}
	}
	if codes[http.StatusUnauthorized] != 5 || codes[http.StatusTooManyRequests] != 95 {
		t.Fatalf("answers %v", codes)
	}
	// One line at the first refusal; the other 99 wait for the next.
	if got := logs.lines(); len(got) != 1 || got[0].attrs["wrong"] != 1 {
		t.Fatalf("log during the burst: %+v", got)
	}
	clk.Advance(logEvery)
	got := logs.waitLines(t, 2)
	if got[1].attrs["wrong"] != 4 || got[1].attrs["throttled"] != 95 || got[1].attrs["addresses"] != 1 {
		t.Fatalf("the count after the burst: %+v", got[1])
	}

	// Another address is not held up by the guesser.
	if code, _ := login(other, "guess"); code != http.StatusUnauthorized {
		t.Fatalf("another address: %d", code)
	}
	// Each further failure doubles the time the guesser is shut out.
	for _, lock := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second} {
		if code, _ := login(guesser, "guess"); code != http.StatusUnauthorized {
			t.Fatalf("after the lockout: %d", code)
		}
		if code, retry := login(guesser, "guess"); code != http.StatusTooManyRequests || retry != strconv.Itoa(int(lock/time.Second)) {
			t.Fatalf("lockout: %d Retry-After %q, want %v", code, retry, lock)
		}
		clk.Advance(lock - time.Second)
		if code, _ := login(guesser, "secret"); code != http.StatusTooManyRequests {
			t.Fatalf("a second early, even the right password is not checked: %d", code)
		}
		clk.Advance(time.Second)
	}
	// The right password once the lockout ends clears the address.
	if code, _ := login(guesser, "secret"); code != http.StatusOK {
		t.Fatalf("good login: %d", code)
	}
	for range freeFailures {
		if code, _ := login(guesser, "guess"); code != http.StatusUnauthorized {
			t.Fatalf("after a good login the count starts over: %d", code)
		}
	}

	cancel()
	a.throttle.wait() // logs what is pending
	var wrong, throttled int64
	var lines []logLine
	for _, l := range logs.lines() {
		if l.msg != "dashboard login" { // the good one is logged on its own
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		if l.msg != "dashboard logins refused" {
			t.Fatalf("line %d: %q", i, l.msg)
		}
		// The last line is the one written when the dashboard stopped.
		if i > 0 && i < len(lines)-1 && l.at.Sub(lines[i-1].at) < logEvery {
			t.Fatalf("lines %d and %d %v apart", i-1, i, l.at.Sub(lines[i-1].at))
		}
		wrong += l.attrs["wrong"]
		throttled += l.attrs["throttled"]
	}
	// 5 + 1 (other) + 4 + 5 wrong; 95 + 4 + 4 refused unchecked.
	if wrong != 15 || throttled != 103 {
		t.Fatalf("the lines count %d wrong and %d throttled, want 15 and 103", wrong, throttled)
	}
}

func TestClientKey(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2:ffff::9]:2000"}, // one /64
		{"192.0.2.1:1000", "192.0.2.1:2000"},
		{"[::ffff:192.0.2.1]:1000", "192.0.2.1:2000"},
	} {
		if clientKey(tc.a) != clientKey(tc.b) {
			t.Errorf("%s and %s should count together", tc.a, tc.b)
		}
	}
	if clientKey("[2001:db8:1:2::1]:1") == clientKey("[2001:db8:1:3::1]:1") || clientKey("192.0.2.1:1") == clientKey("192.0.2.2:1") {
		t.Error("different clients counted together")
	}
}
