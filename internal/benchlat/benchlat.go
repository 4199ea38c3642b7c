// Package benchlat reports latency percentiles from Go benchmarks, so the
// p50/p99 numbers in docs/bench/ come out the same way everywhere.
package benchlat

import (
	"slices"
	"testing"
	"time"
)

// Report sorts lat and reports its p50, p99 and maximum in µs.
func Report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Nanoseconds())/1e3, "max-µs")
}
