package sensors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Event kinds a sensor raises about itself. The runtime maps them to
// worldmodel's health state; the sensor only ever sees a Sink.
const (
	EventFault     = "sensor_fault"
	EventRecovered = "sensor_recovered"
)

// Backoff is the delay between attempts to bring a failed device back.
// It doubles from Initial up to Max and is jittered by ±20 %, so that the
// sensors of one bus that vanished together do not retry in lock step.
type Backoff struct {
	Initial time.Duration `yaml:"initial"`
	Max     time.Duration `yaml:"max"`
}

// DefaultBackoff retries quickly at first (a loose connector often comes
// back within a second) and settles at 30 s, which keeps a dead device from
// costing bus time and log lines.
var DefaultBackoff = Backoff{Initial: 500 * time.Millisecond, Max: 30 * time.Second}

// Delay is the wait before retry number attempt (0 is the first retry).
func (b Backoff) Delay(attempt int) time.Duration {
	b = b.withDefaults()
	d := b.Initial
	for i := 0; i < attempt && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	j := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * j)
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoff.Initial
	}
	if b.Max <= 0 {
		b.Max = max(DefaultBackoff.Max, b.Initial)
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	return b
}

// Health is the fault state of one sensor. It reports transitions only:
// one sensor_fault event when the sensor becomes degraded, one
// sensor_recovered when a sample succeeds again. Every failure also
// updates the text observation "<name>.health", so the world summary shows
// the current error and attempt count without flooding the interrupt bus.
type Health struct {
	name          string
	source        string
	out           Sink
	faultPriority worldmodel.Priority
	clock         clock.Clock

	good atomic.Bool // fast path for OK, called after every sample

	mu       sync.Mutex
	degraded bool
	since    time.Time
	failures int
	lastOK   time.Time
	reported bool // "ok" has been observed at least once
}

// NewHealth tracks the health of sensor name, stamped on clk (nil: the wall
// clock). faultPriority is the priority of its sensor_fault event: Normal
// for most sensors, High for inputs the robot's safety depends on.
func NewHealth(clk clock.Clock, name string, out Sink, faultPriority worldmodel.Priority) *Health {
	return &Health{name: name, source: name + ".health", out: out, faultPriority: faultPriority, clock: clock.Or(clk)}
}

// OK records a good sample. It is cheap enough to call after every sample.
func (h *Health) OK() {
	if h.good.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	h.lastOK = now
	wasDegraded := h.degraded
	h.degraded = false
	h.good.Store(true)
	if wasDegraded {
		slog.Info("sensor recovered", "sensor", h.name, "down_for", now.Sub(h.since).Round(time.Millisecond), "failed_attempts", h.failures)
		h.out.Raise(worldmodel.Event{
			Time:     now,
			Kind:     EventRecovered,
			Source:   h.name,
			Priority: worldmodel.Normal,
			Message:  fmt.Sprintf("%s recovered after %s (%d failed attempts)", h.name, now.Sub(h.since).Round(time.Millisecond), h.failures),
			Data:     map[string]any{"down_for": now.Sub(h.since).String(), "failures": h.failures},
		})
	}
	if wasDegraded || !h.reported {
		h.reported = true
		h.out.Observe(worldmodel.Observation{Time: now, Source: h.source, Kind: worldmodel.Text, Text: "ok"})
	}
	h.failures = 0
}

// Fault records a failed attempt; retryIn is when the next one happens.
func (h *Health) Fault(err error, retryIn time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	h.good.Store(false)
	h.failures++
	if !h.degraded {
		slog.Warn("sensor degraded", "sensor", h.name, "err", err, "retry_in", retryIn.Round(time.Millisecond))
		h.degraded = true
		h.since = now
		h.out.Raise(worldmodel.Event{
			Time:     now,
			Kind:     EventFault,
			Source:   h.name,
			Priority: h.faultPriority,
			Message:  fmt.Sprintf("%s degraded: %v", h.name, err),
			Data:     map[string]any{"error": err.Error()},
		})
	}
	h.reported = true
	h.out.Observe(worldmodel.Observation{
		Time:   now,
		Source: h.source,
		Kind:   worldmodel.Text,
		Text:   fmt.Sprintf("degraded: %v (attempt %d, retry in %s)", err, h.failures, retryIn.Round(time.Millisecond)),
	})
}

// Degraded reports whether the last attempt failed.
func (h *Health) Degraded() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.degraded
}

func (h *Health) okSince(t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.lastOK.Before(t)
}

// Permanent marks an error that retrying cannot fix (a bad option, a bus
// that does not exist on this board): Supervise returns it instead of
// retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err was marked Permanent.
func IsPermanent(err error) bool {
	var pe *permanentError
	return errors.As(err, &pe)
}

type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

// Supervise runs session until ctx ends. A session opens the device and
// samples until something fails, calling h.OK after each good sample; when
// it returns, the sensor is marked degraded and the session is retried
// after b's delay, on h's clock. The delay starts over once a session has produced a good
// sample, so a device that flaps once a day is retried quickly each time.
// Supervise returns nil when ctx ends, or a Permanent error.
func Supervise(ctx context.Context, h *Health, b Backoff, session func(ctx context.Context) error) error {
	attempt := 0
	for {
		start := h.clock.Now()
		err := session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			err = errors.New("session ended without error")
		}
		if pe := (*permanentError)(nil); errors.As(err, &pe) {
			h.Fault(pe.err, 0)
			return pe.err
		}
		if h.okSince(start) {
			attempt = 0
		}
		d := b.Delay(attempt)
		attempt++
		h.Fault(err, d)
		if clock.Sleep(ctx, h.clock, d) != nil {
			return nil
		}
	}
}
