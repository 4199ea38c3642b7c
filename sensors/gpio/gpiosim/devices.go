package gpiosim

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/sensors/simcurve"
	"periph.io/x/conn/v3/gpio"
)

// Window is a recurring interval relative to when a simulation starts:
// active from After for For, repeating every Every (0: once).
type Window struct {
	After time.Duration `yaml:"after"`
	For   time.Duration `yaml:"for"`
	Every time.Duration `yaml:"every"`
}

// Active reports whether elapsed falls inside the window.
func (w Window) Active(elapsed time.Duration) bool {
	if elapsed < w.After || w.For <= 0 {
		return false
	}
	d := elapsed - w.After
	if w.Every > 0 {
		d %= w.Every
	}
	return d < w.For
}

// Valid reports a window that never or always fires.
func (w Window) Valid() bool {
	return w.After >= 0 && w.For > 0 && w.Every >= 0 && (w.Every == 0 || w.Every > w.For)
}

// Drive sets p to active while any window is active and to !active
// otherwise, until the returned stop is called; bounce > 0 makes each
// change a mechanical contact's (that many spurious transitions, 1 ms
// apart). The line is at its initial level when Drive returns, so a
// sensor that opens it next never sees a spurious first edge. It is how
// the sim board's PIR and buttons are "pressed".
func Drive(p *Pin, ws []Window, active gpio.Level, bounce int, tick time.Duration) (stop func()) {
	start := time.Now()
	state := func() gpio.Level {
		for _, w := range ws {
			if w.Active(time.Since(start)) {
				return active
			}
		}
		return !active
	}
	cur := state()
	p.Set(cur)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if want := state(); want != cur {
				cur = want
				p.Bounce(cur, bounce, time.Millisecond)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// HCSR04 simulates an HC-SR04 ultrasonic rangefinder on two lines: a
// trigger pulse of at least 10 µs makes it send a 40 kHz burst (8 cycles,
// 200 µs) and then raise Echo for the time of flight to the obstacle and
// back; with nothing within MaxRange the echo lasts 38 ms (the module's
// timeout). Triggers during a measurement are ignored.
type HCSR04 struct {
	Trigger, Echo *Pin
	Distance      simcurve.Curve // m
	TemperatureC  float64        // air temperature, for the speed of sound
	MaxRange      float64        // m; 4 when 0
	// Unplugged windows (from Attach) when the module is disconnected: its
	// echo line never rises.
	Unplugged []Window

	mu        sync.Mutex
	unwatch   func()
	start     time.Time
	trigHigh  time.Time
	rise      time.Time
	fall      time.Time
	connected bool
}

// SpeedOfSound in dry air at t °C, m/s.
func SpeedOfSound(t float64) float64 { return 331.3 * math.Sqrt(1+t/273.15) }

// Attach wires the simulated module to its lines.
func (h *HCSR04) Attach() {
	h.mu.Lock()
	h.start = time.Now()
	h.connected = true
	if h.MaxRange <= 0 {
		h.MaxRange = 4
	}
	h.mu.Unlock()
	h.Echo.SetLevelFunc(h.level)
	u := h.Trigger.Watch(h.onTrigger)
	h.mu.Lock()
	h.unwatch = u
	h.mu.Unlock()
}

// Detach disconnects the module from its lines for good (the sensor using
// the shared lines has stopped; a new one attaches its own module).
func (h *HCSR04) Detach() {
	h.mu.Lock()
	u := h.unwatch
	h.unwatch = nil
	h.mu.Unlock()
	if u != nil {
		u()
	}
}

// SetDistance replaces the scene, for tests that move the obstacle.
func (h *HCSR04) SetDistance(c simcurve.Curve) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.Distance = c
}

// LastPulse is when the last echo pulse rose and fell.
func (h *HCSR04) LastPulse() (rise, fall time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rise, h.fall
}

// SetConnected unplugs (false) or replugs the module: unplugged, its echo
// line never rises.
func (h *HCSR04) SetConnected(c bool) {
	h.mu.Lock()
	h.connected = c
	h.mu.Unlock()
}

func (h *HCSR04) level(now time.Time) gpio.Level {
	h.mu.Lock()
	defer h.mu.Unlock()
	return gpio.Level(!now.Before(h.rise) && now.Before(h.fall))
}

func (h *HCSR04) onTrigger(l gpio.Level, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l {
		h.trigHigh = at
		return
	}
	if !h.connected || h.trigHigh.IsZero() || at.Sub(h.trigHigh) < 10*time.Microsecond || at.Before(h.fall) {
		return
	}
	for _, w := range h.Unplugged {
		if w.Active(at.Sub(h.start)) {
			return
		}
	}
	d := h.Distance.At(at.Sub(h.start))
	flight := 38 * time.Millisecond
	if d >= 0.02 && d <= h.MaxRange {
		flight = time.Duration(2 * d / SpeedOfSound(h.TemperatureC) * float64(time.Second))
	}
	h.rise = at.Add(8*25*time.Microsecond + 250*time.Microsecond)
	h.fall = h.rise.Add(flight)
	h.Echo.ScheduleEdge(h.rise, gpio.High)
	h.Echo.ScheduleEdge(h.fall, gpio.Low)
}
