package sensors

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// stepUntilFired advances f in steps of step until the one pending timer
// fires. The goroutine under test arms no other timer meanwhile: it is
// blocked until the test takes what its session sends.
func stepUntilFired(f *clock.Fake, step time.Duration) {
	f.BlockUntil(1)
	for f.Pending() > 0 {
		f.Advance(step)
	}
}

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
	for i, w := range want {
		w *= time.Millisecond
		for range 50 { // jitter is random: check its bounds many times
			d := b.Delay(i)
			if d < w*8/10 || d > w*12/10 {
				t.Fatalf("Delay(%d) = %s, want %s ±20%%", i, d, w)
			}
		}
	}
	// Zero value falls back to the defaults.
	if d := (Backoff{}).Delay(0); d < 400*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("default first delay %s", d)
	}
	if d := (Backoff{}).Delay(1000); d > 36*time.Second {
		t.Errorf("default max delay %s", d)
	}
}

func TestHealthTransitions(t *testing.T) {
	rec := &recSink{}
	h := NewHealth(clock.NewFake(t0), "env", rec, worldmodel.High)
	h.OK()
	h.OK()
	h.Fault(errors.New("nack"), time.Second)
	h.Fault(errors.New("nack"), 2*time.Second)
	if !h.Degraded() {
		t.Fatal("not degraded after fault")
	}
	h.OK()
	h.OK()
	if h.Degraded() {
		t.Fatal("still degraded after OK")
	}
	if got := strings.Join(rec.kinds(), ","); got != "sensor_fault,sensor_recovered" {
		t.Fatalf("events = %s", got)
	}
	if rec.events[0].Priority != worldmodel.High || rec.events[0].Source != "env" {
		t.Errorf("fault event %+v", rec.events[0])
	}
	if rec.events[1].Data["failures"] != 2 {
		t.Errorf("recovered data %+v", rec.events[1].Data)
	}
	var texts []string
	for _, o := range rec.obs {
		if o.Source != "env.health" || o.Kind != worldmodel.Text {
			t.Fatalf("unexpected observation %+v", o)
		}
		texts = append(texts, o.Text)
	}
	got := strings.Join(texts, "|")
	want := "ok|degraded: nack (attempt 1, retry in 1s)|degraded: nack (attempt 2, retry in 2s)|ok"
	if got != want {
		t.Fatalf("health texts\n got %s\nwant %s", got, want)
	}
}

func TestSuperviseRetriesAndRecovers(t *testing.T) {
	rec := &recSink{}
	f := clock.NewFake(t0)
	h := NewHealth(f, "imu", rec, worldmodel.Normal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan int)
	done := make(chan error)
	go func() {
		n := 0
		done <- Supervise(ctx, h, Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}, func(ctx context.Context) error {
			n++
			called <- n
			switch {
			case n <= 3: // device absent at first
				return errors.New("no ack")
			case n == 4: // comes back, samples, then fails once more
				h.OK()
				return errors.New("read: i/o error")
			default:
				h.OK()
				<-ctx.Done()
				return ctx.Err()
			}
		})
	}()
	for n := <-called; n < 5; n = <-called {
		stepUntilFired(f, time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Supervise returned %v after cancel", err)
	}
	want := "sensor_fault,sensor_recovered,sensor_fault,sensor_recovered"
	if got := strings.Join(rec.kinds(), ","); got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
}

func TestSupervisePermanent(t *testing.T) {
	rec := &recSink{}
	h := NewHealth(clock.NewFake(t0), "x", rec, worldmodel.Normal)
	bad := errors.New("bus 9 does not exist")
	var calls int
	err := Supervise(context.Background(), h, Backoff{}, func(context.Context) error {
		calls++
		return Permanent(bad)
	})
	if !errors.Is(err, bad) || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
	if len(rec.events) != 1 || rec.events[0].Kind != EventFault {
		t.Fatalf("events %v", rec.kinds())
	}
}

func TestSuperviseBackoffGrowsWithoutProgress(t *testing.T) {
	f := clock.NewFake(t0)
	h := NewHealth(f, "x", &recSink{}, worldmodel.Normal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	called := make(chan time.Time)
	done := make(chan error)
	go func() {
		done <- Supervise(ctx, h, Backoff{Initial: 5 * time.Millisecond, Max: time.Second}, func(ctx context.Context) error {
			called <- f.Now()
			return errors.New("gone")
		})
	}()
	stamps := []time.Time{<-called}
	for len(stamps) < 5 {
		stepUntilFired(f, 100*time.Microsecond)
		stamps = append(stamps, <-called)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Gaps follow 5, 10, 20, 40 ms ±20 % (jitter), to the step.
	for i := 1; i < len(stamps); i++ {
		gap := stamps[i].Sub(stamps[i-1])
		d := time.Duration(5<<(i-1)) * time.Millisecond
		if gap < d*8/10 || gap > d*12/10+100*time.Microsecond {
			t.Errorf("gap %d = %s, want %s ±20 %%", i, gap, d)
		}
	}
}
