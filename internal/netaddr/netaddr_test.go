package netaddr

import "testing"

func TestDialable(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:1883":     "127.0.0.1:1883",
		"[::]:1883":        "127.0.0.1:1883",
		":1883":            "127.0.0.1:1883",
		"127.0.0.1:1883":   "127.0.0.1:1883",
		"192.168.1.5:1883": "192.168.1.5:1883",
		"broker.lan:8883":  "broker.lan:8883",
		"no-port":          "no-port",
	} {
		if got := Dialable(in); got != want {
			t.Errorf("Dialable(%q) = %q, want %q", in, got, want)
		}
	}
}
