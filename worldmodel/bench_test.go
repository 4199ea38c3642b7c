package worldmodel

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAppend measures the hot path of DESIGN §9: one numeric reading
// appended to an existing source by one producer. "now" leaves Time zero so
// the model stamps it (the usual case); "stamped" is a producer that brings
// its own timestamp.
func BenchmarkAppend(b *testing.B) {
	stamp := time.Unix(1700000000, 0)
	for _, c := range []struct {
		name string
		time time.Time
	}{{"now", time.Time{}}, {"stamped", stamp}} {
		b.Run("Model/"+c.name, func(b *testing.B) {
			m := New(Config{})
			o := Observation{Source: "env.temperature", Kind: Reading, Value: 21.5, Unit: "°C", Time: c.time}
			for range DefaultCapacity { // fill the ring: measure the steady state
				m.Append(o)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.Value = float64(i)
				m.Append(o)
			}
		})
		b.Run("Ring/"+c.name, func(b *testing.B) {
			m := New(Config{})
			r := m.Ring("env.temperature")
			o := Observation{Kind: Reading, Value: 21.5, Unit: "°C", Time: c.time}
			for range DefaultCapacity {
				r.Append(o)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				o.Value = float64(i)
				r.Append(o)
			}
		})
	}
}

// BenchmarkAppendParallel is one producer per source and per P, as sensors
// run: the producers share only the sequence counter. ns/op is wall time
// per append over all producers.
func BenchmarkAppendParallel(b *testing.B) {
	for _, c := range []struct {
		name string
		time time.Time
	}{{"now", time.Time{}}, {"stamped", time.Unix(1700000000, 0)}} {
		b.Run(c.name, func(b *testing.B) {
			m := New(Config{})
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				src := "sensor" + strconv.FormatInt(next.Add(1), 10) + ".value"
				o := Observation{Source: src, Kind: Reading, Value: 1, Unit: "V", Time: c.time}
				for pb.Next() {
					o.Value++
					m.Append(o)
				}
			})
		})
	}
}

// BenchmarkSummary is a busy board: 40 sources, a full event log, a few
// actuators and faults, summarized into a typical 4 KB prompt budget.
func BenchmarkSummary(b *testing.B) {
	now := time.Unix(1700000000, 0)
	m := New(Config{})
	for i := range 40 {
		for j := range 300 {
			m.Append(Observation{Source: fmt.Sprintf("sensor%02d.value", i), Kind: Reading, Value: float64(j) * 1.37,
				Unit: "V", Time: now.Add(-time.Duration(j) * time.Second)})
		}
	}
	m.Append(Observation{Source: "camera.snapshot", Kind: BlobRef, Blob: &Blob{MIME: "image/jpeg", Data: make([]byte, 34<<10)}, Time: now})
	for i := range DefaultEvents {
		m.Record(Event{Kind: "motion_start", Source: "camera", Priority: Priority(i % 4), Message: "motion in 2 regions", Time: now.Add(-time.Duration(i) * time.Second)})
	}
	for i := range 6 {
		m.SetActuator(fmt.Sprintf("servo%d", i), "angle=90")
	}
	m.SetHealth("env", "degraded: i2c NACK")
	for _, budget := range []int{512, 4096, 0} {
		b.Run(fmt.Sprintf("budget=%d", budget), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = m.SummaryAt(now, budget)
			}
		})
	}
}
