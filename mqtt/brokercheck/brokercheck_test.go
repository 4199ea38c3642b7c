package brokercheck

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestProbeStockMosquitto: mosquitto with its stock limits (20 in flight,
// 1,000 queued per client) drops what a subscriber that holds its
// acknowledgements cannot take, after acknowledging it to the publisher;
// the check sees and reports it.
func TestProbeStockMosquitto(t *testing.T) {
	m := mosquittotest.Start(t, "max_queued_messages 1000", "max_inflight_messages 20")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, Options{URL: m.URL(), Burst: 2000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stock mosquitto: %+v", rep)
	if rep.Sent != 2000 || rep.Dropped != 980 || rep.InFlight != 20 || rep.Received != 1020 {
		t.Fatalf("%+v: want 2000 sent, 20 in flight, 1020 received, 980 dropped", rep)
	}
}

// TestProbeTunedMosquitto: with the Settings doctor prints,
// nothing is dropped.
func TestProbeTunedMosquitto(t *testing.T) {
	var lines []string
	for _, s := range Settings {
		lines = append(lines, s.Line)
	}
	m := mosquittotest.Start(t, lines...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, Options{URL: m.URL(), Burst: 2000})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tuned mosquitto: %+v", rep)
	if rep.Sent != 2000 || rep.Dropped != 0 || rep.Duplicates != 0 {
		t.Fatalf("%+v", rep)
	}
}
