package gpiokit

import (
	"context"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"periph.io/x/conn/v3/gpio"
)

type change struct {
	l  gpio.Level
	at time.Time
}

func collect(t *testing.T, w *Watcher) (<-chan change, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan change, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			l, at, err := w.Next(ctx)
			if err != nil {
				return
			}
			ch <- change{l, at}
		}
	}()
	return ch, func() { cancel(); <-done }
}

func expectNone(t *testing.T, ch <-chan change, d time.Duration) {
	t.Helper()
	select {
	case c := <-ch:
		t.Fatalf("unexpected change to %v", c.l)
	case <-time.After(d):
	}
}

func expect(t *testing.T, ch <-chan change, l gpio.Level) change {
	t.Helper()
	select {
	case c := <-ch:
		if c.l != l {
			t.Fatalf("change to %v, want %v", c.l, l)
		}
		return c
	case <-time.After(2 * time.Second):
		t.Fatalf("no change to %v", l)
	}
	return change{}
}

// A bouncing contact is one change after it settles, dated from its first
// edge. (Periods are long next to the 1 ms bounce so that a loaded test
// machine stalling a sleep cannot turn a bounce into a real change.)
func TestSettleDebounce(t *testing.T) {
	p := gpiosim.NewPin("b")
	w, err := NewWatcher(nil, p, gpio.PullUp, Debounce{Period: 100 * time.Millisecond}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Level() != gpio.High {
		t.Fatal("initial level")
	}
	ch, stop := collect(t, w)
	defer stop()
	first := time.Now()
	p.Bounce(gpio.Low, 7, time.Millisecond) // press with 7 bounces
	c := expect(t, ch, gpio.Low)
	if c.at.Before(first) || c.at.Sub(first) > 50*time.Millisecond {
		t.Errorf("change dated %s after the first edge", c.at.Sub(first))
	}
	expectNone(t, ch, 200*time.Millisecond)
	// A glitch shorter than the debounce period is no change at all.
	p.Set(gpio.High)
	time.Sleep(2 * time.Millisecond)
	p.Set(gpio.Low)
	expectNone(t, ch, 200*time.Millisecond)
	p.Bounce(gpio.High, 3, time.Millisecond)
	expect(t, ch, gpio.High)
}

// Leading-edge mode reports at the first edge, before the bounce ends.
func TestLeadingDebounce(t *testing.T) {
	p := gpiosim.NewPin("e")
	p.Set(gpio.Low)
	w, _ := NewWatcher(nil, p, gpio.PullUp, Debounce{Period: 200 * time.Millisecond, Leading: true}, 0)
	ch, stop := collect(t, w)
	defer stop()
	start := time.Now()
	go p.Bounce(gpio.High, 9, 2*time.Millisecond) // 18 ms of bounce
	c := expect(t, ch, gpio.High)
	if d := c.at.Sub(start); d > 100*time.Millisecond {
		t.Errorf("leading edge reported after %s (debounce is 200 ms)", d)
	}
	expectNone(t, ch, 400*time.Millisecond)
	// A glitch that returns: reported, then the return once settled.
	p.Set(gpio.Low)
	expect(t, ch, gpio.Low)
	p.Set(gpio.High)
	expect(t, ch, gpio.High)
}

// Lines without edge detection are polled.
type noEdgePin struct{ *gpiosim.Pin }

func (n noEdgePin) In(pull gpio.Pull, e gpio.Edge) error {
	if e != gpio.NoEdge {
		return context.DeadlineExceeded // any error: "edge detection not supported"
	}
	return n.Pin.In(pull, e)
}

func (n noEdgePin) WaitForEdge(time.Duration) bool { panic("WaitForEdge on a polled line") }

func TestPolledLine(t *testing.T) {
	p := gpiosim.NewPin("poll")
	w, err := NewWatcher(nil, noEdgePin{p}, gpio.PullDown, Debounce{Period: 10 * time.Millisecond}, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if !w.polled {
		t.Fatal("not polling")
	}
	ch, stop := collect(t, w)
	defer stop()
	p.Set(gpio.High)
	expect(t, ch, gpio.High)
	p.Set(gpio.Low)
	expect(t, ch, gpio.Low)
}

func TestHeaderTables(t *testing.T) {
	// Every GPIO pin of the board package's header tables resolves.
	pi := []string{"3", "5", "7", "8", "10", "11", "12", "13", "15", "16", "18", "19", "21", "22", "23", "24", "26", "29", "31", "32", "33", "35", "36", "37", "38", "40"}
	jetson := []string{"7", "11", "12", "13", "15", "16", "18", "19", "21", "22", "23", "24", "26", "29", "31", "32", "33", "35", "36", "37", "38", "40"}
	for _, p := range pi {
		if c, err := candidates("raspi", p); err != nil || len(c) != 1 {
			t.Errorf("raspi %s: %v", p, err)
		}
	}
	for _, p := range jetson {
		if c, err := candidates("jetson", p); err != nil || len(c) != 2 {
			t.Errorf("jetson %s: %v %v", p, c, err)
		}
	}
	for _, c := range []struct{ platform, pin, want string }{
		{"raspi", "11", "GPIO17"}, {"raspi", "40", "GPIO21"}, {"raspi", "3", "GPIO2"},
		{"jetson", "7", "PAC.06"}, {"jetson", "33", "PH.00"},
	} {
		l, _ := candidates(c.platform, c.pin)
		if l[0].name != c.want {
			t.Errorf("%s %s = %s, want %s", c.platform, c.pin, l[0].name, c.want)
		}
	}
	// tegra210 names: GPIO216 is PBB.00 (AUD_MCLK), 50 is PG.02, 79 PJ.07.
	for n, want := range map[int]string{216: "PBB.00", 50: "PG.02", 79: "PJ.07", 12: "PB.04"} {
		if got := tegra210Name(n); got != want {
			t.Errorf("tegra210Name(%d) = %s, want %s", n, got, want)
		}
	}
	for _, bad := range []struct{ platform, pin string }{{"raspi", "1"}, {"raspi", "GPIO17"}, {"jetson", "3"}, {"beaglebone", "11"}} {
		if _, err := candidates(bad.platform, bad.pin); err == nil {
			t.Errorf("%s %s resolved", bad.platform, bad.pin)
		}
	}
}

func TestOpenPinSim(t *testing.T) {
	cfg := sensors.Config{Platform: "sim", Pins: map[string]string{"signal": "sim:5"}}
	p, err := OpenPin(cfg, "signal")
	if err != nil || p != gpiosim.Shared("sim:5") {
		t.Fatalf("%v %v", p, err)
	}
	if _, err := OpenPin(cfg, "echo"); err == nil {
		t.Fatal("missing role opened")
	}
}
