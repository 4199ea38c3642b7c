package gpiosim

import (
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/simcurve"
	"periph.io/x/conn/v3/gpio"
)

func TestEdgesFollowConfiguration(t *testing.T) {
	p := NewPin("t")
	if err := p.In(gpio.PullUp, gpio.FallingEdge); err != nil {
		t.Fatal(err)
	}
	if !p.Read() {
		t.Fatal("pull-up input floating low")
	}
	p.Set(gpio.High) // no change: no edge
	p.Set(gpio.Low)  // falling: edge
	p.Set(gpio.High) // rising: not asked for
	if !p.WaitForEdge(10 * time.Millisecond) {
		t.Fatal("falling edge not delivered")
	}
	if p.WaitForEdge(10 * time.Millisecond) {
		t.Fatal("rising edge delivered to a falling-edge line")
	}
	// Reconfiguring flushes pending edges, as the kernel does.
	p.In(gpio.PullUp, gpio.BothEdges)
	p.Set(gpio.Low)
	p.In(gpio.PullUp, gpio.BothEdges)
	if p.WaitForEdge(5 * time.Millisecond) {
		t.Fatal("edge survived In")
	}
	// Halt interrupts a wait.
	go func() { time.Sleep(5 * time.Millisecond); p.Halt() }()
	start := time.Now()
	if p.WaitForEdge(time.Second) || time.Since(start) > 500*time.Millisecond {
		t.Fatal("Halt did not interrupt WaitForEdge")
	}
}

func TestFloatReadsPull(t *testing.T) {
	p := NewPin("t")
	p.In(gpio.PullDown, gpio.BothEdges)
	p.Set(gpio.High)
	p.Float()
	if p.Read() {
		t.Fatal("floating line with pull-down reads high")
	}
	if !p.WaitForEdge(time.Millisecond) || !p.WaitForEdge(time.Millisecond) {
		t.Fatal("rise and fall edges missing")
	}
}

func TestBusy(t *testing.T) {
	p := NewPin("t")
	p.SetBusy(true)
	if p.In(gpio.PullUp, gpio.NoEdge) != ErrBusy || p.Out(gpio.High) != ErrBusy {
		t.Fatal("busy line accepted a request")
	}
	p.SetBusy(false)
	if err := p.Out(gpio.High); err != nil || !bool(p.Read()) {
		t.Fatal(err)
	}
}

func TestWindow(t *testing.T) {
	w := Window{After: 10 * time.Second, For: 2 * time.Second, Every: time.Minute}
	for _, c := range []struct {
		at time.Duration
		on bool
	}{{0, false}, {10 * time.Second, true}, {12 * time.Second, false}, {71 * time.Second, true}, {72500 * time.Millisecond, false}} {
		if w.Active(c.at) != c.on {
			t.Errorf("Active(%s) = %v", c.at, !c.on)
		}
	}
	if (Window{For: time.Second, Every: time.Second}).Valid() || !(Window{For: time.Second}).Valid() {
		t.Error("Valid")
	}
}

func TestHCSR04EchoPulse(t *testing.T) {
	trig, echo := NewPin("trig"), NewPin("echo")
	m := &HCSR04{Trigger: trig, Echo: echo, Distance: simcurve.Const(0.5), TemperatureC: 20}
	m.Attach()
	echo.In(gpio.PullDown, gpio.BothEdges)
	trig.Out(gpio.High)
	time.Sleep(20 * time.Microsecond)
	trig.Out(gpio.Low)
	fired := time.Now()
	// Edge events come from timers, which fire late under load but never
	// early: check their count and lower bounds.
	if !echo.WaitForEdge(100 * time.Millisecond) {
		t.Fatal("no rising echo event")
	}
	if d := time.Since(fired); d < 450*time.Microsecond {
		t.Fatalf("echo rose %s after the trigger, before the burst ended", d)
	}
	if !echo.WaitForEdge(100 * time.Millisecond) {
		t.Fatal("no falling echo event")
	}
	// 1 m round trip at 343.2 m/s: 2.914 ms, after the 450 µs burst.
	if d := time.Since(fired); d < 3364*time.Microsecond {
		t.Fatalf("echo fell %s after the trigger", d)
	}
	if echo.Read() {
		t.Fatal("echo still high after its falling edge")
	}

	// The level itself is exact: drive the trigger with explicit times.
	t0 := time.Now().Add(time.Second)
	m.onTrigger(gpio.High, t0)
	m.onTrigger(gpio.Low, t0.Add(5*time.Microsecond)) // too short: ignored
	if m.level(t0.Add(time.Millisecond)) {
		t.Fatal("echo after a 5 µs trigger")
	}
	m.onTrigger(gpio.High, t0)
	m.onTrigger(gpio.Low, t0.Add(10*time.Microsecond))
	rise := t0.Add(10*time.Microsecond + 450*time.Microsecond)
	fall := rise.Add(time.Duration(1.0 / SpeedOfSound(20) * float64(time.Second)))
	for _, c := range []struct {
		at   time.Time
		want gpio.Level
	}{{rise.Add(-time.Nanosecond), gpio.Low}, {rise, gpio.High}, {fall.Add(-time.Nanosecond), gpio.High}, {fall, gpio.Low}} {
		if m.level(c.at) != c.want {
			t.Errorf("level at %s = %v", c.at.Sub(t0), !c.want)
		}
	}
	// Unplugged windows silence it; Detach unhooks it from the trigger.
	m.Unplugged = []Window{{After: 0, For: time.Hour}}
	m.onTrigger(gpio.High, t0.Add(time.Second))
	m.onTrigger(gpio.Low, t0.Add(time.Second+20*time.Microsecond))
	if m.level(t0.Add(time.Second + time.Millisecond)) {
		t.Fatal("echo while unplugged")
	}
	m.Unplugged = nil
	m.Detach()
	echo.In(gpio.PullDown, gpio.BothEdges)
	trig.Out(gpio.High)
	time.Sleep(20 * time.Microsecond)
	trig.Out(gpio.Low)
	if echo.WaitForEdge(20 * time.Millisecond) {
		t.Fatal("detached module still answers")
	}
}
