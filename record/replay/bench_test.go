package replay_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/replay"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// hourOfSim writes one hour of the sim board's stream without frames, at
// its rates (about 100 readings a second: the microphone's levels at 10 Hz,
// the IMU at 5 Hz, the range finder at 4 Hz …) with a motion start and an
// obstacle every 40 s, and returns the file. Replaying it once with --out
// adds what the agent does, so the benchmark replays a consistent
// recording.
func hourOfSim(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	cfg, err := board.Load("../../board-configs/sim.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg.LLM.Enabled = false
	y, err := cfg.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	world := worldmodel.New(worldmodel.Config{DefaultCapacity: 4096, Events: 4096})
	o := record.DefaultOptions()
	rec, err := record.New(world, o, clock.NewFake(start), slog.New(slog.NewTextHandler(io.Discard, nil)), "sim-bot",
		func() record.Header { return record.Header{Meta: map[string]string{"device": "sim-bot"}, Board: y} })
	if err != nil {
		b.Fatal(err)
	}
	inputs := filepath.Join(dir, "inputs.mcap")
	rec.StartFile(inputs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()

	rates := map[float64][]string{ // Hz -> sources
		10:  {"mic.peak_dbfs", "mic.rms_dbfs", "mic.noise_dbfs", "mic.speech", "mic.dropped"},
		5:   {"imu.accel_x", "imu.accel_y", "imu.accel_z", "imu.gyro_x", "imu.gyro_y", "imu.gyro_z", "imu.temperature"},
		4:   {"front_range.distance"},
		1:   {"front_cam.fps", "front_cam.drops", "front_cam.motion", "front_cam.motion_area", "supply.voltage", "supply.current", "supply.power", "supply.shunt_voltage"},
		0.5: {"board_temp.temperature", "power.battery", "light.illuminance"},
		0.2: {"env.temperature", "env.pressure", "env.humidity", "air.co2", "air.temperature", "air.humidity"},
	}
	var sent uint64
	for ms := 0; ms < 3600*1000; ms += 50 {
		t := start.Add(time.Duration(ms) * time.Millisecond)
		for hz, sources := range rates {
			if period := int(1000 / hz); ms%period == 0 {
				for i, s := range sources {
					world.Append(worldmodel.Observation{Time: t, Source: s, Kind: worldmodel.Reading, Value: float64(ms%997+i) / 10})
					sent++
				}
			}
		}
		if ms%40000 == 20000 {
			world.Record(worldmodel.Event{Time: t, Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High,
				Message: "motion in 1 region(s)", Data: map[string]any{"boxes": [][4]int{{10, 20, 60, 90}}, "area_pct": 3.2}})
			world.Record(worldmodel.Event{Time: t, Kind: "obstacle", Source: "front_range.distance", Priority: worldmodel.High,
				Message: "front_range.distance 0.2 m below 0.3"})
			sent += 3 // the two events and the motion boxes
		}
		if ms%10000 == 0 { // let the recorder keep up with this tight loop
			for rec.Status().Written < sent {
				time.Sleep(time.Millisecond)
			}
		}
	}
	for rec.Status().Written < sent {
		time.Sleep(time.Millisecond)
	}
	rec.Stop()
	cancel()
	<-done
	full := filepath.Join(dir, "hour.mcap")
	if _, err := replay.Run(context.Background(), inputs, replay.Options{LLM: "off", Out: full}); err != nil {
		b.Fatal(err)
	}
	return full
}

// BenchmarkReplayHour replays one hour of the sim board's stream (no
// frames) as fast as possible; budget ≤ 10 s per recorded hour.
func BenchmarkReplayHour(b *testing.B) {
	path := hourOfSim(b)
	b.ResetTimer()
	for b.Loop() {
		rep, err := replay.Run(context.Background(), path, replay.Options{LLM: "recorded"})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Diverged() {
			b.Fatalf("the replay of the hour diverged: %+v", rep.Divergence)
		}
		b.ReportMetric(rep.Took.Seconds()/rep.Span.Hours(), "s/recorded-hour")
		b.ReportMetric(float64(rep.Inputs), "inputs")
	}
}
