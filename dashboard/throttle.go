package dashboard

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

// Password guessing is slowed per client address: the first freeFailures
// wrong logins cost nothing but the bcrypt check; after that each failure
// shuts the address out for twice as long as the one before (1 s, 2 s,
// 4 s … up to maxLockout), and a login tried meanwhile is refused without
// a check. A good login clears the address. IPv6 clients are counted per
// /64, the block one subscriber usually holds. Behind a reverse proxy
// every client is the proxy's address; X-Forwarded-For is not trusted,
// since any client can write it.
const (
	freeFailures  = 5
	firstLockout  = time.Second
	maxLockout    = 15 * time.Minute
	forgetAfter   = time.Hour // an address quiet this long starts over
	maxAddresses  = 4096      // bounds the table when guesses come from many addresses
	logEvery      = 10 * time.Second
	retryAfterMin = time.Second
)

// throttle counts failed logins per address and logs refusals as counts,
// at most one line per logEvery.
type throttle struct {
	clk clock.Clock
	log *slog.Logger
	ctx context.Context // ends when the dashboard stops; a pending count is logged then
	wg  sync.WaitGroup  // the flush goroutine

	mu    sync.Mutex
	addrs map[netip.Prefix]*strikes
	// What the next log line reports.
	lastLog   time.Time
	refused   int // wrong logins since the last line
	throttled int // logins refused unchecked since the last line
	seen      map[netip.Prefix]bool
	latest    string // the address of the latest refusal, and its failures
	latestN   int
	flushing  bool
}

type strikes struct {
	failures int
	until    time.Time // shut out until then
	last     time.Time // the latest failure
}

func newThrottle(ctx context.Context, clk clock.Clock, log *slog.Logger) *throttle {
	return &throttle{clk: clk, log: log, ctx: ctx, addrs: map[netip.Prefix]*strikes{}, seen: map[netip.Prefix]bool{}}
}

// clientKey is the address a failure is counted against.
func clientKey(remote string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return netip.Prefix{} // not TCP (a test's recorder): one shared bucket
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64) // cannot fail for an IPv6 address
		return p
	}
	return netip.PrefixFrom(a, 32)
}

// throttledError says that an address is shut out; it carries how long.
type throttledError struct{ RetryAfter time.Duration }

func (e *throttledError) Error() string {
	return fmt.Sprintf("too many failed logins from this address: try again in %s", e.RetryAfter.Round(time.Second))
}

// check refuses an address that is shut out, and counts the refusal.
func (t *throttle) check(remote string) error {
	key := clientKey(remote)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.addrs[key]
	if s == nil {
		return nil
	}
	now := t.clk.Now()
	if wait := s.until.Sub(now); wait > 0 {
		t.throttled++
		t.note(key, remote, s.failures, now)
		return &throttledError{RetryAfter: max(wait, retryAfterMin)}
	}
	return nil
}

// failed counts a wrong login from remote.
func (t *throttle) failed(remote string) {
	key := clientKey(remote)
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clk.Now()
	s := t.addrs[key]
	if s == nil || now.Sub(s.last) >= forgetAfter {
		t.makeRoom(now)
		s = &strikes{}
		t.addrs[key] = s
	}
	s.failures++
	s.last = now
	if over := s.failures - freeFailures; over >= 0 {
		s.until = now.Add(min(firstLockout<<min(over, 20), maxLockout))
	}
	t.refused++
	t.note(key, remote, s.failures, now)
}

// succeeded clears remote's failures.
func (t *throttle) succeeded(remote string) {
	t.mu.Lock()
	delete(t.addrs, clientKey(remote))
	t.mu.Unlock()
}

// makeRoom keeps the table under maxAddresses: addresses quiet for
// forgetAfter go first, then the one that failed longest ago.
func (t *throttle) makeRoom(now time.Time) {
	if len(t.addrs) < maxAddresses {
		return
	}
	var oldest netip.Prefix
	var oldestAt time.Time
	for k, s := range t.addrs {
		if now.Sub(s.last) >= forgetAfter && now.After(s.until) {
			delete(t.addrs, k)
			continue
		}
		if oldestAt.IsZero() || s.last.Before(oldestAt) {
			oldest, oldestAt = k, s.last
		}
	}
	if len(t.addrs) >= maxAddresses {
		delete(t.addrs, oldest)
	}
}

// note records a refusal for the log: a line at once when none was
// written for logEvery (or the dashboard is stopping), else the count
// waits for the next line.
func (t *throttle) note(key netip.Prefix, remote string, failures int, now time.Time) {
	t.seen[key] = true
	t.latest, t.latestN = remote, failures
	if t.lastLog.IsZero() || now.Sub(t.lastLog) >= logEvery || t.ctx.Err() != nil {
		t.flushLocked(now)
		return
	}
	if !t.flushing {
		t.flushing = true
		// Armed here, not in the goroutine: the time it waits for is
		// counted from now, however late the goroutine runs.
		timer := t.clk.NewTimer(t.lastLog.Add(logEvery).Sub(now))
		t.wg.Go(func() { t.flushAfter(timer) })
	}
}

// flushAfter writes the counts gathered since the last line once logEvery
// has passed since it, or when the dashboard stops.
func (t *throttle) flushAfter(timer clock.Timer) {
	defer timer.Stop()
	select {
	case <-timer.C():
	case <-t.ctx.Done():
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flushing = false
	t.flushLocked(t.clk.Now())
}

func (t *throttle) flushLocked(now time.Time) {
	if t.refused+t.throttled == 0 {
		return
	}
	t.log.Warn("dashboard logins refused", "wrong", t.refused, "throttled", t.throttled,
		"addresses", len(t.seen), "latest", t.latest, "latest_failures", t.latestN, "shut_out", t.shutOut(now))
	t.lastLog, t.refused, t.throttled = now, 0, 0
	clear(t.seen)
}

// shutOut is how many addresses are refused unchecked right now.
func (t *throttle) shutOut(now time.Time) int {
	n := 0
	for _, s := range t.addrs {
		if s.until.After(now) {
			n++
		}
	}
	return n
}

// wait returns once the flush goroutine (if any) has logged and ended;
// the caller has ended ctx.
func (t *throttle) wait() { t.wg.Wait() }
