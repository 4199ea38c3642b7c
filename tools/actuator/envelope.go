package actuator

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/edgeagent/edgeagent/tools"
)

// Refusals. Every refusal error matches ErrRefused and one of the causes
// with errors.Is, so the MQTT control plane can reply with a precise code
// ("refused by the envelope") while the message says why in words.
var (
	ErrRefused     = tools.ErrRefused
	ErrEnvelope    = errors.New("outside the safety envelope")
	ErrRateLimited = errors.New("rate limit exceeded")
	ErrEStop       = errors.New("e-stop latched")
	ErrNotStarted  = errors.New("actuators are not started")
)

type refusedError struct {
	cause error
	msg   string
}

func (e *refusedError) Error() string   { return "refused: " + e.msg }
func (e *refusedError) Unwrap() []error { return []error{ErrRefused, e.cause} }

// Refuse returns a refusal matching ErrRefused and cause with errors.Is.
func Refuse(cause error, format string, args ...any) error {
	return &refusedError{cause: cause, msg: fmt.Sprintf(format, args...)}
}

// Bound applies one limit of the envelope: a value in [lo, hi] passes; one
// outside is clamped (with a note saying so) or refused, as the actuator's
// on_violation says.
func Bound(what string, v, lo, hi float64, unit string, clamp bool) (float64, string, error) {
	if v >= lo && v <= hi {
		return v, "", nil
	}
	c := math.Min(math.Max(v, lo), hi)
	if !clamp {
		return 0, "", Refuse(ErrEnvelope, "%s %s%s is outside the envelope %s–%s%s (on_violation: refuse)",
			what, Num(v), unit, Num(lo), Num(hi), unit)
	}
	return c, fmt.Sprintf("%s clamped from %s%s to %s%s (envelope %s–%s%s)",
		what, Num(v), unit, Num(c), unit, Num(lo), Num(hi), unit), nil
}

// Num prints a number the short way people write it (90, 0.5, 12.25).
func Num(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)
}

// bucket is a token bucket: rate commands per second on average, bursts
// of up to one second's worth (at least one). A burst allowance matters on
// a network: two MQTT commands sent 100 ms apart can arrive 5 ms apart.
type bucket struct {
	rate, burst float64
	tokens      float64
	last        time.Time
}

func newBucket(rate float64) *bucket {
	if rate <= 0 {
		return nil
	}
	b := math.Max(1, math.Floor(rate))
	return &bucket{rate: rate, burst: b, tokens: b}
}

// take spends one token if there is one; otherwise it says how long until
// there will be.
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	if !b.last.IsZero() {
		b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
	return false, wait
}

// RangeSchema is the JSON Schema bounds of a limited parameter. With
// on_violation: refuse the schema carries the envelope itself, so the
// registry rejects an out-of-envelope value before the tool runs (and the
// LLM's constrained output cannot produce one); with clamp it carries the
// bounds of the quantity itself (a duty from 0 to 1, an angle from 0 to
// 180), because a value outside the envelope but inside those is exactly
// what clamping is for, while one outside them is a mistake of units — "50"
// for a 50 % duty must be refused, not clamped to full power. A ceiling of
// +Inf leaves the top open (an angle of 400° is clamped, not a unit slip).
func RangeSchema(lo, hi, floor, ceil float64, clamp bool) string {
	if clamp && math.IsInf(ceil, 1) {
		return fmt.Sprintf(`"minimum":%s`, Num(floor))
	}
	if clamp {
		return fmt.Sprintf(`"minimum":%s,"maximum":%s`, Num(floor), Num(ceil))
	}
	return fmt.Sprintf(`"minimum":%s,"maximum":%s`, Num(lo), Num(hi))
}

// InitialInside checks a numeric `initial` against the envelope: it is
// written at start without going through a tool, so the envelope must hold
// it here too (the board checks only its form, through Kind.Initial; the
// limits are the kind's, decoded in New).
func InitialInside(initial string, lo, hi float64, unit string) error {
	if initial == "" {
		return nil
	}
	v, err := strconv.ParseFloat(initial, 64)
	if err != nil {
		return errors.New("initial: not a number")
	}
	if !(v >= lo && v <= hi) { // NaN included
		return fmt.Errorf("initial: outside the envelope %s–%s%s (limits)", Num(lo), Num(hi), unit)
	}
	return nil
}

// Period is the PWM period of a frequency in Hz; 0 (the platform default)
// for none.
func Period(hz float64) time.Duration {
	if hz <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / hz)
}
