package sensors

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

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
	h := NewHealth("env", rec, worldmodel.High)
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
	h := NewHealth("imu", rec, worldmodel.Normal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	done := make(chan error)
	go func() {
		done <- Supervise(ctx, h, Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}, func(ctx context.Context) error {
			n := calls.Add(1)
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
	deadline := time.After(5 * time.Second)
	for calls.Load() < 5 {
		select {
		case <-deadline:
			t.Fatal("supervise did not retry")
		case <-time.After(time.Millisecond):
		}
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
	h := NewHealth("x", rec, worldmodel.Normal)
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
	h := NewHealth("x", &recSink{}, worldmodel.Normal)
	ctx, cancel := context.WithCancel(context.Background())
	var stamps []time.Time
	Supervise(ctx, h, Backoff{Initial: 5 * time.Millisecond, Max: time.Second}, func(context.Context) error {
		stamps = append(stamps, time.Now())
		if len(stamps) == 5 {
			cancel()
			return nil
		}
		return errors.New("gone")
	})
	// Gaps follow 5, 10, 20, 40 ms (±20 % jitter, timers only run late).
	for i := 1; i < len(stamps); i++ {
		gap := stamps[i].Sub(stamps[i-1])
		min := time.Duration(5<<(i-1)) * time.Millisecond * 8 / 10
		if gap < min {
			t.Errorf("gap %d = %s, want >= %s", i, gap, min)
		}
	}
}
