package hcsr04

import (
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// scriptedEcho is an echo line whose pulse already began before the first
// poll (as when the thread is preempted between trigger and polling): the
// rise cannot be dated, so the ping must be rejected, not timed from the
// first poll.
type scriptedEcho struct {
	gpio.PinIO
	high time.Time // high until then
}

func (s *scriptedEcho) Read() gpio.Level { return gpio.Level(time.Now().Before(s.high)) }

type nopOut struct{ gpio.PinIO }

func (nopOut) Out(gpio.Level) error                  { return nil }
func (nopOut) PWM(gpio.Duty, physic.Frequency) error { return nil }

func TestUndatableRiseIsRejected(t *testing.T) {
	echo := &scriptedEcho{}
	r := Ranger{Trigger: nopOut{}, Echo: echo, MaxDistance: 4, TemperatureC: 20}
	// The echo is low until the trigger ends, then already high at the
	// first poll.
	trig := &triggerHook{on: func() { echo.high = time.Now().Add(3 * time.Millisecond) }}
	r.Trigger = trig
	p, err := r.ping(25*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !p.inRange || p.uncertainty <= Precision {
		t.Fatalf("ping %+v: a rise seen on the first poll must be imprecise", p)
	}
}

type triggerHook struct {
	nopOut
	on func()
}

func (h *triggerHook) Out(l gpio.Level) error {
	if !l {
		h.on()
	}
	return nil
}

// preemptedEcho samples high on its first poll and then loses the thread
// for longer than the wait's timeout; the line is low from then on.
type preemptedEcho struct {
	gpio.PinIO
	away  time.Duration
	polls int
}

func (p *preemptedEcho) Read() gpio.Level {
	p.polls++
	if p.polls == 1 {
		time.Sleep(p.away) // the sample is from before
		return gpio.High
	}
	return gpio.Low
}

// TestPreemptedPollIsNotATimeout: a poll whose sample came before the
// timeout but which returned after it is polled again, not taken as the
// level at the timeout (TestRangerOutOfRangeAndUnplugged saw "echo line
// stuck high" on a loaded machine).
func TestPreemptedPollIsNotATimeout(t *testing.T) {
	echo := &preemptedEcho{away: 50 * time.Millisecond}
	if _, ok, _ := waitLevel(echo, gpio.Low, 40*time.Millisecond, time.Time{}); !ok || echo.polls != 2 {
		t.Fatalf("ok=%v after %d polls: the preempted poll ended the wait", ok, echo.polls)
	}
}
