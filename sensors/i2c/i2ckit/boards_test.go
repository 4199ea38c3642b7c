package i2ckit_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	_ "github.com/edgeagent/edgeagent/sensors/gpio/button"
	_ "github.com/edgeagent/edgeagent/sensors/gpio/hcsr04"
	_ "github.com/edgeagent/edgeagent/sensors/gpio/pir"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/ads1x15"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bh1750"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// The kinds of this tree (sensors/i2c and sensors/gpio).
var ourKinds = []string{"bme280", "bmp280", "ads1115", "ads1015", "ina219", "bh1750", "mpu9250", "scd4x", "generic", "pir", "button", "estop", "hcsr04"}

func ourSensors(t *testing.T, file string) []sensors.Config {
	t.Helper()
	c, err := board.Load(filepath.Join("..", "..", "..", "board-configs", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []sensors.Config
	for _, s := range c.Sensors {
		if !s.Enabled || !slices.Contains(ourKinds, s.Kind) {
			continue
		}
		out = append(out, sensors.Config{
			Name: s.Name, Kind: s.Kind, Platform: c.Device.Platform, Interval: s.Interval,
			Bus: s.Bus, Address: uint16(s.Address), Pins: s.Pins, Decode: s.Options.Decode,
		})
	}
	return out
}

// Every board file loads and validates, and every I2C/GPIO sensor block in
// it builds (options decoded strictly, pins and addresses accepted by the
// kind) without touching hardware.
func TestBoardConfigsBuild(t *testing.T) {
	for _, f := range []string{"sim.yaml", "rpi4.yaml", "rpi5.yaml", "jetson-orin-nano.yaml"} {
		cfgs := ourSensors(t, f)
		var kinds []string
		for _, cfg := range cfgs {
			if _, err := sensors.New(cfg); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			kinds = append(kinds, cfg.Kind)
		}
		// The minimum set on every real board.
		for _, k := range []string{"bme280", "ads1115", "pir", "estop"} {
			if !slices.Contains(kinds, k) {
				t.Errorf("%s has no %s block", f, k)
			}
		}
	}
}

// The sim board's I2C and GPIO sensors all produce readings, with no
// fault, through the simulated bus and lines.
func TestSimBoardSensorsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sim board's sensors for several seconds")
	}
	cfgs := ourSensors(t, "sim.yaml")
	rec := sensortest.NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, len(cfgs))
	for _, cfg := range cfgs {
		s, err := sensors.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		go func() { s.Run(ctx, rec); done <- struct{}{} }()
	}
	want := map[string]bool{
		"env.temperature": true, "env.pressure": true, "env.humidity": true,
		"power.battery": true, "supply.voltage": true, "supply.current": true, "supply.power": true,
		"light.illuminance": true, "imu.accel_z": true, "imu.gyro_z": true, "air.co2": true,
		"board_temp.temperature": true, "hall_pir.motion": true, "estop.engaged": true, "front_range.distance": true,
	}
	// The SCD4x's first measurement comes 5 s after it starts.
	rec.WaitFor(t, 15*time.Second, "a reading from every sensor", func() bool {
		for src := range want {
			if len(rec.Observations(src)) == 0 {
				return false
			}
		}
		return true
	})
	if f := rec.Events(sensors.EventFault); len(f) != 0 {
		t.Errorf("faults on the sim board: %+v", f)
	}
	if e := rec.Events("estop"); len(e) != 0 {
		t.Errorf("the sim board's e-stop fired: %+v", e)
	}
	if v := rec.Values("power.battery")[0]; v < 12.5 || v > 12.7 {
		t.Errorf("battery %.2f V at start, want ~12.6", v)
	}
	start := time.Now()
	cancel()
	for range cfgs {
		<-done
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("sensors took %s to stop (budget 2 s)", d)
	}
}
