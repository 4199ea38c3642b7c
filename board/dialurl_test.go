package board

import "testing"

func TestDialURL(t *testing.T) {
	for _, tc := range []struct{ m MQTT }{
		{MQTT{Broker: "embedded", Listen: "127.0.0.1:1883"}},
		{MQTT{Broker: "embedded", Listen: "0.0.0.0:1883"}},
		{MQTT{Broker: "embedded", Listen: ":1883"}},
		{MQTT{Broker: "tcp://10.0.0.2:1883"}},
	} {
		want := "tcp://127.0.0.1:1883"
		if tc.m.Broker != "embedded" {
			want = tc.m.Broker
		}
		if got := tc.m.DialURL(); got != want {
			t.Errorf("%+v: %s, want %s", tc.m, got, want)
		}
	}
}
