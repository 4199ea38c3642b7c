package i2ckit_test

// Sampling overhead per reading, bus time excluded: each kind's device is
// opened on the simulated bus while a recorder notes every transaction's
// answer; the benchmark then samples against a bus that replays those
// answers from a map, so what is measured is the periph driver's decoding,
// the kind's conversion, the readings' emission and threshold checks, and
// the map lookup standing in for the bus (reported on its own by
// BenchmarkReplayBusTx). Kinds whose driver sleeps through a conversion
// inside Sample (bh1750: 120 ms, ads1x15: 1/data rate) are left out; their
// cost is that sleep.
//
//	go test -run XXX -bench . -benchmem ./sensors/i2c/i2ckit/

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bmxx80"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/generic"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/ina219"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/mpu9250"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/scd4x"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// replayBus answers each (address, bytes written) with the last answer
// the simulated device gave to it.
type replayBus struct {
	mu      sync.Mutex
	sim     i2c.Bus // while recording
	answers map[uint16]map[string][]byte
}

func (b *replayBus) String() string                  { return "replay" }
func (b *replayBus) SetSpeed(physic.Frequency) error { return nil }

func (b *replayBus) Tx(addr uint16, w, r []byte) error {
	if b.sim != nil {
		if err := b.sim.Tx(addr, w, r); err != nil {
			return err
		}
		b.mu.Lock()
		if b.answers[addr] == nil {
			b.answers[addr] = map[string][]byte{}
		}
		b.answers[addr][string(w)] = append([]byte(nil), r...)
		b.mu.Unlock()
		return nil
	}
	copy(r, b.answers[addr][string(w)])
	return nil
}

type countSink struct{ n int }

func (c *countSink) Observe(worldmodel.Observation) { c.n++ }
func (c *countSink) Raise(worldmodel.Event)         {}

func benchKind(b *testing.B, block string, quantities ...string) {
	cfg, err := sensortest.ParseBoard("sim", block)
	if err != nil {
		b.Fatal(err)
	}
	s, err := sensors.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	l := s.(*i2ckit.Loop)
	simDev, _, err := l.Sim()
	if err != nil {
		b.Fatal(err)
	}
	sim := i2csim.NewBus("bench")
	if err := sim.Attach(cfg.Address, simDev); err != nil {
		b.Fatal(err)
	}
	rb := &replayBus{sim: sim, answers: map[uint16]map[string][]byte{}}
	ctx := context.Background()
	dev, err := l.Open(ctx, rb)
	if err != nil {
		b.Fatal(err)
	}
	// One realistic threshold per quantity, never crossed.
	var ts []sensors.Threshold
	limit := 1e12
	for _, q := range quantities {
		ts = append(ts, sensors.Threshold{Quantity: q, Above: &limit, Hysteresis: 1, Priority: worldmodel.High})
	}
	sink := &countSink{}
	em := i2ckit.NewEmitter(sensors.WithThresholds(cfg.Name, ts, sink), time.Now())
	if err := dev.Sample(ctx, em); err != nil { // record the sample's answers
		b.Fatal(err)
	}
	rb.sim = nil
	sink.n = 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := dev.Sample(ctx, em); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perReading := float64(b.Elapsed().Nanoseconds()) / float64(sink.n)
	b.ReportMetric(perReading, "ns/reading")
	b.ReportMetric(float64(sink.n)/float64(b.N), "readings/op")
	if strings.Contains(block, "scd4x") {
		dev.Close()
	}
}

func BenchmarkSampleGeneric(b *testing.B) {
	benchKind(b, `
- name: t
  kind: generic
  address: 0x48
  options:
    readings:
      - {name: temperature, register: 0x00, length: 2, signed: true, shift: 4, bits: 12, scale: 0.0625, unit: "°C"}
      - {name: humidity, register: 0x02, length: 2, scale: 0.0019073, offset: -6, unit: "%RH"}
`, "temperature", "humidity")
}

func BenchmarkSampleBME280(b *testing.B) {
	// Filter set: the chip runs in normal mode and a sample is one burst
	// read, with no forced-mode conversion wait inside the driver.
	benchKind(b, `
- {name: env, kind: bme280, address: 0x76, options: {filter: 4}}
`, "temperature", "pressure", "humidity")
}

func BenchmarkSampleINA219(b *testing.B) {
	benchKind(b, `
- {name: supply, kind: ina219, address: 0x40}
`, "voltage", "current", "power", "shunt_voltage")
}

func BenchmarkSampleMPU9250(b *testing.B) {
	benchKind(b, `
- {name: imu, kind: mpu9250, address: 0x68}
`, "accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z", "temperature")
}

func BenchmarkSampleSCD4x(b *testing.B) {
	benchKind(b, `
- {name: air, kind: scd4x, address: 0x62, options: {sim: {measurement_interval: 1ms}}}
`, "co2", "temperature", "humidity")
}

// BenchmarkReplayBusTx is the stand-in bus's own cost per transaction.
func BenchmarkReplayBusTx(b *testing.B) {
	rb := &replayBus{answers: map[uint16]map[string][]byte{0x76: {"\xf7": make([]byte, 8)}}}
	w, r := []byte{0xf7}, make([]byte, 8)
	b.ReportAllocs()
	for b.Loop() {
		rb.Tx(0x76, w, r)
	}
}

// BenchmarkSimBusBME280Read is what the simulator itself costs for the
// BME280's 8-byte data read, for comparison with a real bus: at 400 kHz
// that read takes about 250 µs on the wire.
func BenchmarkSimBusBME280Read(b *testing.B) {
	bus := i2csim.NewBus("b")
	bus.Attach(0x76, i2csim.NewBME280(i2csim.BME280Config{Temperature: i2csim.Const(20), Pressure: i2csim.Const(1000), Humidity: i2csim.Const(50)}))
	w, r := []byte{0xf7}, make([]byte, 8)
	b.ReportAllocs()
	for b.Loop() {
		bus.Tx(0x76, w, r)
	}
}
