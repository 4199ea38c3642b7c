package agent

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/benchlat"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// BenchmarkPreemption measures the time from pushing a High event to the
// running Normal cycle's step observing its cancelled context (DESIGN §9:
// p99 ≤ 1 ms). It reports p50/p99 in µs.
func BenchmarkPreemption(b *testing.B) {
	world := worldmodel.New(worldmodel.Config{})
	reg, _ := tools.NewRegistry(tools.Options{Grants: map[string][]string{"cli": {"*"}}, Log: quiet})
	started := make(chan struct{})
	observed := make(chan time.Time, 1)
	_ = reg.Register("slow", tools.Func(tools.Spec{Name: "slow.wait", Description: "blocks"},
		func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			started <- struct{}{}
			<-ctx.Done()
			observed <- time.Now()
			return tools.Result{}, ctx.Err()
		}))
	loop := New(Config{Heartbeat: time.Hour}, world, reg, hooks.NewManager(quiet), quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = loop.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		go func() { _, _ = loop.Submit(ctx, Command{Caller: "cli", Tool: "slow.wait"}) }()
		<-started
		t0 := time.Now()
		loop.Interrupt(worldmodel.Event{Kind: "motion_start", Source: "cam", Priority: worldmodel.High})
		lat = append(lat, (<-observed).Sub(t0))
	}
	benchlat.Report(b, lat)
}
