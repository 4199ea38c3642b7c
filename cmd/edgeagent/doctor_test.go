package main

import (
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
)

// TestDoctorBroker: against mosquitto with its stock queue limits doctor
// reports the drop, prints the settings and fails; against one with those
// settings it reports no drop.
func TestDoctorBroker(t *testing.T) {
	stock := mosquittotest.Start(t, "max_queued_messages 1000", "max_inflight_messages 20")
	out, err := run(t, "doctor", "--broker", stock.URL(), "--burst", "2000")
	if err == nil || !strings.Contains(out, "980 dropped") || !strings.Contains(out, "DROPS") ||
		!strings.Contains(out, "max_queued_messages 100000") || !strings.Contains(out, "autosave_interval") {
		t.Fatalf("stock mosquitto: %v\n%s", err, out)
	}
	tuned := mosquittotest.Start(t, "max_queued_messages 100000", "max_inflight_messages 100", "set_tcp_nodelay true")
	out, err = run(t, "doctor", "--broker", tuned.URL(), "--burst", "2000")
	if err != nil || !strings.Contains(out, "no drops") {
		t.Fatalf("tuned mosquitto: %v\n%s", err, out)
	}
}
