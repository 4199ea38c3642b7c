package mqttsub

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// nullSink keeps the last value so the work cannot be optimised away.
type nullSink struct{ last *float64 }

func (n nullSink) Observe(o worldmodel.Observation) { *n.last = o.Value }
func (nullSink) Raise(worldmodel.Event)             {}

// BenchmarkHandleJSON is the sensor's cost per message of a Zigbee2MQTT
// sensor with three JSON readings (budget: ≤ 20 µs, 0 allocs).
func BenchmarkHandleJSON(b *testing.B) {
	cfg := sensortest.Board(b, "sim", `
- name: living
  kind: mqtt
  options:
    topics:
      - topic: zigbee2mqtt/+
        readings:
          - {name: temperature, json: temperature, unit: "°C"}
          - {name: humidity, json: humidity, unit: "%RH"}
          - {name: battery, json: battery, unit: "%"}
`)
	ss, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	s := ss.(*Sensor)
	var last float64
	out, p, now := nullSink{&last}, []byte(z2mPayload), time.Now()
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		s.handle(s.topics[0], out, "zigbee2mqtt/living_room", p, now)
	}
	if last != 97 || s.bad.Load() != 0 {
		b.Fatal(last, s.bad.Load())
	}
}

// BenchmarkEmbeddedBrokerToReading is the whole path on this machine: a
// publisher, the embedded broker, paho, the extractor (all in process, so
// ns/op is the CPU of all three per message).
func BenchmarkEmbeddedBrokerToReading(b *testing.B) {
	br := startEmbedded(b, "127.0.0.1:0", nil)
	cfg := sensortest.Board(b, "sim", `
- name: living
  kind: mqtt
  options:
    broker: `+br.URL()+`
    topics: [{topic: "zigbee2mqtt/+", readings: [{name: temperature, json: temperature, unit: "°C"}]}]
`)
	var n atomic.Int64
	s, stop := start(b, cfg, countAll{&n})
	defer stop()
	pub := dial(b, br.URL())
	p := []byte(z2mPayload)
	for n.Load() == 0 {
		pub.Publish("zigbee2mqtt/warm", 0, false, p).Wait()
		time.Sleep(5 * time.Millisecond)
	}
	n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		pub.Publish("zigbee2mqtt/living_room", 1, false, p).Wait()
	}
	for n.Load() < int64(b.N) && s.bad.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
}

type countAll struct{ n *atomic.Int64 }

func (c countAll) Observe(worldmodel.Observation) { c.n.Add(1) }
func (countAll) Raise(worldmodel.Event)           {}
