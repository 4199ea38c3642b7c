package hcsr04

// The ranger times the echo: its width is the measurement, polled to the
// microsecond on the CPU's clock as a hardware timer would count it, and
// the gap between pings is the module's own (its echoes must die down).
// That is the device's time, not the run's: internal/layout's clock rule
// lets this file, and only it in the package, read the wall clock. A
// reading is stamped on the run's clock by the sensor (hcsr04.go).

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"periph.io/x/conn/v3/gpio"
)

// SpeedOfSound in dry air at t °C, in m/s: 331.3·√(1 + t/273.15), which
// is 343.2 m/s at 20 °C.
func SpeedOfSound(t float64) float64 { return 331.3 * math.Sqrt(1+t/273.15) }

// Ranger measures distances with one HC-SR04.
type Ranger struct {
	Trigger      gpio.PinOut
	Echo         gpio.PinIn
	MaxDistance  float64 // m
	TemperatureC float64
	// Edges says Echo was configured with edge detection (gpio.BothEdges).
	// The kernel queues edge events whatever the scheduler does, which
	// makes "the module did not answer" certain even when polling was
	// preempted; timing still comes from polling.
	Edges bool

	// hint is the last precise flight time. The next echo is likely to be
	// about as long, so the poller sleeps through most of it instead of
	// spinning (see ping).
	hint time.Duration
}

// Measure returns the median distance of n pings, 60 ms apart, that saw
// an obstacle; ok is false when none did (nothing within MaxDistance). A
// module that never answers is an error.
//
// The echo is timed by polling the line, so a ping is only as good as the
// gaps between polls: if the thread was preempted while the echo began or
// ended (a loaded two-core board does that for milliseconds at a time),
// the ping's timing is unknown to within that gap. Such pings are thrown
// away and retried, up to 3n pings in all, rather than outvoted: a reading
// that is wrong by a metre is worse than one that comes late.
func (r *Ranger) Measure(ctx context.Context, n int) (dist float64, ok bool, err error) {
	c := SpeedOfSound(r.TemperatureC)
	maxFlight := time.Duration(2 * r.MaxDistance / c * float64(time.Second))
	var flights []time.Duration
	far, noEcho, tries := 0, 0, 0
	for ; len(flights)+far < n && tries < 3*n; tries++ {
		if tries > 0 {
			if err := clock.Sleep(ctx, clock.Real(), pingGap); err != nil {
				return 0, false, err
			}
		}
		p, err := r.ping(maxFlight, r.hint)
		if err != nil {
			return 0, false, err
		}
		switch {
		case p.uncertainty > Precision:
			// Preempted at an edge, or the echo ended while sleeping on a
			// stale hint: timing unknown, try again without a hint.
			r.hint = 0
		case p.noEcho:
			noEcho++
		case !p.inRange:
			far++
			r.hint = 0
		default:
			flights = append(flights, p.flight)
			r.hint = p.flight
		}
	}
	if len(flights) == 0 && far == 0 {
		if noEcho > 0 {
			return 0, false, ErrNoEcho
		}
		return 0, false, nil // no ping was precise enough
	}
	if len(flights) == 0 {
		return 0, false, nil
	}
	slices.Sort(flights)
	return flights[len(flights)/2].Seconds() * c / 2, true, nil
}

// Precision is the largest timing uncertainty of a ping that is kept:
// 40 µs of round trip is 7 mm.
const Precision = 40 * time.Microsecond

type pingResult struct {
	flight      time.Duration
	uncertainty time.Duration // how late the two edges may have been seen
	inRange     bool
	noEcho      bool
}

// ping sends one trigger pulse and times the echo. With a hint (the last
// flight time) it sleeps through the first three quarters of the expected
// echo, less 1 ms for timer slack, before polling for its end: spinning
// through a 2 m echo costs 11.7 ms of CPU, this about 4 ms. The quarter
// left is the margin for an obstacle coming closer between pings (25 cm
// at 1 m, enough for a robot at 1 m/s pinging every 250 ms); if it came
// closer still, the echo ended during the sleep, the first poll already
// reads low, the edge cannot be dated, and the ping is rejected as
// imprecise and retried without the hint.
func (r *Ranger) ping(maxFlight, hint time.Duration) (pingResult, error) {
	if r.Echo.Read() {
		// A previous echo is still running (the 38 ms no-object pulse).
		if _, ok, _ := waitLevel(r.Echo, gpio.Low, 40*time.Millisecond, time.Time{}); !ok {
			return pingResult{}, errors.New("echo line stuck high")
		}
	}
	if r.Edges {
		// Drop the previous ping's edge events.
		for i := 0; i < 8 && r.Echo.WaitForEdge(time.Microsecond); i++ {
		}
	}
	if err := r.Trigger.Out(gpio.High); err != nil {
		return pingResult{}, err
	}
	// At least 10 µs: busy-wait, as a sleep this short would take ~50 µs
	// or more and gains nothing.
	for t := time.Now(); time.Since(t) < 10*time.Microsecond; {
	}
	if err := r.Trigger.Out(gpio.Low); err != nil {
		return pingResult{}, err
	}
	// The module sends its 8-cycle 40 kHz burst, then raises ECHO
	// (typically ~0.5 ms after the trigger).
	rise, ok, gap := waitLevel(r.Echo, gpio.High, 10*time.Millisecond, time.Time{})
	if !ok {
		res := pingResult{noEcho: true}
		switch {
		case r.Edges:
			// An edge event means it did answer and the pulse fell between
			// two polls: untimed, not absent.
			if r.Echo.WaitForEdge(30 * time.Millisecond) {
				res.uncertainty = time.Duration(math.MaxInt64)
			}
		case gap > time.Millisecond:
			// Polling alone: "no echo" is only known if the polls were close
			// enough together that no pulse fitted between two of them. A
			// connected module always answers (38 ms when nothing is in
			// range) and only an obstacle nearer than 17 cm gives a pulse
			// under 1 ms; a fault needs every ping of a reading to see
			// nothing, so a 1 ms bound is safe.
			res.uncertainty = time.Duration(math.MaxInt64)
		}
		return res, nil
	}
	last := rise.seenStart
	if nap := hint*3/4 - time.Millisecond; nap > 0 {
		time.Sleep(nap)
		before := time.Now()
		if !r.Echo.Read() {
			return pingResult{uncertainty: time.Duration(math.MaxInt64)}, nil
		}
		last = before
	}
	fall, ok, _ := waitLevel(r.Echo, gpio.Low, maxFlight-time.Since(rise.seen), last)
	// Saturating: an undatable edge's gap is MaxInt64 and must not wrap
	// around to a small (precise-looking) sum.
	res := pingResult{uncertainty: max(rise.gap(), fall.gap())}
	if g := rise.gap() + fall.gap(); g > res.uncertainty {
		res.uncertainty = g
	}
	if !ok {
		return res, nil // nothing in range; the pulse ends by itself at ~38 ms
	}
	res.flight, res.inRange = fall.seen.Sub(rise.seen), true
	return res, nil
}

// edge brackets a level change: it happened after the start of the last
// poll that saw the old level and before the end of the first poll that
// saw the new one. A poll is bracketed on both sides because the thread
// can be preempted inside the read itself, which would otherwise date an
// old sample as new.
type edge struct {
	last      time.Time // start of the last poll that saw the old level; zero if none did
	seenStart time.Time // start of the first poll that saw the new level
	seen      time.Time // its end
}

// gap is how uncertain the edge's time is; unbounded when no poll saw the
// old level (the change happened before polling started).
func (e edge) gap() time.Duration {
	if e.last.IsZero() {
		return time.Duration(math.MaxInt64)
	}
	return e.seen.Sub(e.last)
}

// waitLevel polls p until it reads l or timeout passes. last is the start
// of a poll known to have seen the old level (zero if unknown). On timeout
// the edge brackets the last poll, and maxGap is the longest stretch
// between two polls' samples: a pulse shorter than that could have come
// and gone unseen. Only a poll that began after the timeout ends the wait
// with the old level: one preempted after its sample (which may be from
// before the timeout) says nothing about the level since, and an echo
// still running when the thread went away read as "stuck high".
func waitLevel(p gpio.PinIn, l gpio.Level, timeout time.Duration, last time.Time) (e edge, ok bool, maxGap time.Duration) {
	start := time.Now()
	for {
		before := time.Now()
		v := p.Read()
		after := time.Now()
		if !last.IsZero() {
			maxGap = max(maxGap, after.Sub(last))
		}
		if v == l || before.Sub(start) > timeout {
			return edge{last, before, after}, v == l, maxGap
		}
		last = before
	}
}
