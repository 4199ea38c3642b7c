package i2csim

import (
	"errors"
	"math"
	"sync"
	"testing"
	"time"
)

// fakeClock is a manually stepped clock for register-level tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func mustTx(t *testing.T, b *Bus, addr uint16, w []byte, n int) []byte {
	t.Helper()
	r := make([]byte, n)
	if err := b.Tx(addr, w, r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBME280DatasheetExample(t *testing.T) {
	// BMP280 datasheet section 8.1, table 16: with its trimming parameters,
	// adc_T = 519888 is 25.08 °C and adc_P = 415148 is 100653.27 Pa (the
	// 64-bit integer formula resolves 1/256 Pa).
	c := DefaultBME280Calibration
	if got := c.CompensateTemp(519888); got != 25.08 {
		t.Errorf("T = %v, want 25.08", got)
	}
	if got := c.CompensatePressure(415148, c.tFine(519888)); math.Abs(got-100653.27) > 0.05 {
		t.Errorf("P = %v, want 100653.27", got)
	}
}

func TestBME280InversionRoundTrip(t *testing.T) {
	c := DefaultBME280Calibration
	for temp := -40.0; temp <= 85; temp += 0.73 {
		raw := c.invertTemp(temp)
		// One step of adc_T>>3 moves t_fine by T2/2048 ≈ 13: 0.0025 °C.
		if got := float64(c.tFine(raw)) / 5120; math.Abs(got-temp) > 0.0015 {
			t.Fatalf("T %.2f -> raw %d -> %.4f", temp, raw, got)
		}
		tf := c.tFine(raw)
		for _, p := range []float64{30000, 70000, 101325, 110000} {
			if got := c.CompensatePressure(c.invertPressure(p, tf), tf); math.Abs(got-p) > 0.2 {
				t.Fatalf("P %.0f at %.1f °C -> %.2f", p, temp, got)
			}
		}
		for _, h := range []float64{0.5, 20, 55.5, 99} {
			if got := c.CompensateHumidity(c.invertHumidity(h, tf), tf); math.Abs(got-h) > 0.01 {
				t.Fatalf("H %.1f at %.1f °C -> %.3f", h, temp, got)
			}
		}
	}
}

func newBMEBus(t *testing.T, cfg BME280Config) (*Bus, *fakeClock) {
	clk := newFakeClock()
	b := NewBus("t", WithClock(clk.Now))
	cfg.Quiet = true
	if err := b.Attach(0x76, NewBME280(cfg)); err != nil {
		t.Fatal(err)
	}
	clk.Step(5 * time.Millisecond) // past the NVM copy after power-on
	return b, clk
}

func readTPH(t *testing.T, b *Bus) (temp, press float64, hraw uint16) {
	r := mustTx(t, b, 0x76, []byte{0xF7}, 8)
	p := int32(r[0])<<12 | int32(r[1])<<4 | int32(r[2])>>4
	tr := int32(r[3])<<12 | int32(r[4])<<4 | int32(r[5])>>4
	c := DefaultBME280Calibration
	return c.CompensateTemp(tr), c.CompensatePressure(p, c.tFine(tr)), uint16(r[6])<<8 | uint16(r[7])
}

func TestBME280ForcedModeTiming(t *testing.T) {
	b, clk := newBMEBus(t, BME280Config{Temperature: Const(22), Pressure: Const(1000), Humidity: Const(50)})
	if _, _, h := readTPH(t, b); h != 0x8000 {
		t.Fatalf("humidity reset value %#x", h)
	}
	// ctrl_hum x1, then ctrl_meas T x1, P x1, forced: 1+2+2.5+2.5 = 8 ms.
	mustTx(t, b, 0x76, []byte{0xF2, 0x01, 0xF4, 1<<5 | 1<<2 | 1}, 0)
	if s := mustTx(t, b, 0x76, []byte{0xF3}, 1)[0]; s&8 == 0 {
		t.Fatalf("status %#x: not measuring right after the forced-mode write", s)
	}
	clk.Step(7900 * time.Microsecond)
	if s := mustTx(t, b, 0x76, []byte{0xF3}, 1)[0]; s&8 == 0 {
		t.Fatalf("status %#x: done before the typical measurement time", s)
	}
	clk.Step(200 * time.Microsecond)
	r := mustTx(t, b, 0x76, []byte{0xF3}, 2)
	if r[0]&8 != 0 || r[1]&3 != 0 {
		t.Fatalf("status %#x ctrl_meas %#x: forced mode must end in sleep", r[0], r[1])
	}
	temp, press, h := readTPH(t, b)
	if math.Abs(temp-22) > 0.01 || math.Abs(press-100000) > 3 || h == 0x8000 {
		t.Fatalf("T %.3f P %.1f H %#x", temp, press, h)
	}
}

func TestBME280CtrlHumLatchedByCtrlMeas(t *testing.T) {
	b, clk := newBMEBus(t, BME280Config{Temperature: Const(22), Pressure: Const(1000), Humidity: Const(50)})
	// Normal mode, t_sb 0.5 ms, humidity skipped.
	mustTx(t, b, 0x76, []byte{0xF5, 0, 0xF4, 1<<5 | 1<<2 | 3}, 0)
	clk.Step(50 * time.Millisecond)
	if _, _, h := readTPH(t, b); h != 0x8000 {
		t.Fatalf("humidity measured while skipped: %#x", h)
	}
	mustTx(t, b, 0x76, []byte{0xF2, 0x01}, 0) // not effective yet
	clk.Step(50 * time.Millisecond)
	if _, _, h := readTPH(t, b); h != 0x8000 {
		t.Fatalf("ctrl_hum took effect without a ctrl_meas write: %#x", h)
	}
	mustTx(t, b, 0x76, []byte{0xF4, 1<<5 | 1<<2 | 3}, 0)
	clk.Step(50 * time.Millisecond)
	if _, _, h := readTPH(t, b); h == 0x8000 {
		t.Fatal("humidity still skipped after ctrl_meas write")
	}
}

func TestBME280IIRFilterAndConfigInNormalMode(t *testing.T) {
	step := Curve{Points: []Point{{At: 0, Value: 20}, {At: time.Second, Value: 20}, {At: time.Second + time.Nanosecond, Value: 36}}}
	b, clk := newBMEBus(t, BME280Config{Temperature: step, Pressure: Const(1000)})
	// Filter coefficient 16 written in sleep mode, then normal mode with
	// T x1 only (conversion 3 ms) and t_sb 62.5 ms: 65.5 ms cycles.
	mustTx(t, b, 0x76, []byte{0xF5, 1<<5 | 4<<2, 0xF4, 1<<5 | 3}, 0)
	// Writes to config in normal mode are ignored: the filter stays on.
	mustTx(t, b, 0x76, []byte{0xF5, 0}, 0)
	if c := mustTx(t, b, 0x76, []byte{0xF5}, 1)[0]; c != 1<<5|4<<2 {
		t.Fatalf("config = %#x, write in normal mode was not ignored", c)
	}
	clk.Step(990 * time.Millisecond)
	if temp, _, _ := readTPH(t, b); math.Abs(temp-20) > 0.01 {
		t.Fatalf("before step: %.3f", temp)
	}
	// Filtered: x_n = x_{n-1} + (x - x_{n-1})/16 per conversion.
	want := 20.0
	for n := 1; n <= 30; n++ {
		clk.Step(65500 * time.Microsecond)
		want += (36 - want) / 16
		temp, _, _ := readTPH(t, b)
		if math.Abs(temp-want) > 0.02 {
			t.Fatalf("conversion %d after step: %.3f °C, want %.3f", n, temp, want)
		}
	}
	// Pressure skipped (osrs_p = 0): reset value.
	r := mustTx(t, b, 0x76, []byte{0xF7}, 3)
	if r[0] != 0x80 || r[1] != 0 || r[2] != 0 {
		t.Fatalf("skipped pressure = % x", r)
	}
}

func TestBME280Resolution(t *testing.T) {
	b, clk := newBMEBus(t, BME280Config{Temperature: Const(23.456), Pressure: Const(1000)})
	mustTx(t, b, 0x76, []byte{0xF4, 1<<5 | 1<<2 | 1}, 0) // x1: 16-bit results
	clk.Step(10 * time.Millisecond)
	r := mustTx(t, b, 0x76, []byte{0xF7}, 6)
	if r[2] != 0 || r[5] != 0 {
		t.Fatalf("x1 oversampling produced xlsb bits: % x", r)
	}
	mustTx(t, b, 0x76, []byte{0xF4, 5<<5 | 5<<2 | 1}, 0) // x16: 20-bit results
	clk.Step(80 * time.Millisecond)
	temp, _, _ := readTPH(t, b)
	if math.Abs(temp-23.456) > 0.006 {
		t.Fatalf("x16: %.4f", temp)
	}
}

func TestBME280SoftReset(t *testing.T) {
	b, _ := newBMEBus(t, BME280Config{Temperature: Const(20)})
	mustTx(t, b, 0x76, []byte{0xF2, 5, 0xF5, 0xA0, 0xF4, 0x27}, 0)
	mustTx(t, b, 0x76, []byte{0xE0, 0xB6}, 0)
	r := mustTx(t, b, 0x76, []byte{0xF2}, 4)
	if r[0] != 0 || r[2] != 0 || r[3] != 0 {
		t.Fatalf("after soft reset ctrl_hum/ctrl_meas/config = % x", r)
	}
	if r[1]&1 == 0 {
		t.Fatalf("status %#x: im_update not set right after reset", r[1])
	}
	if id := mustTx(t, b, 0x76, []byte{0xD0}, 1)[0]; id != 0x60 {
		t.Fatalf("chip id %#x", id)
	}
}

func TestADSSingleShotStatusBit(t *testing.T) {
	clk := newFakeClock()
	b := NewBus("t", WithClock(clk.Now))
	b.Attach(0x48, NewADS1x15(ADSConfig{Inputs: [4]Curve{Const(1), Const(2), Const(3), Const(-0.1)}}))
	if r := mustTx(t, b, 0x48, []byte{1}, 2); r[0] != 0x85 || r[1] != 0x83 {
		t.Fatalf("config reset value % x", r)
	}
	// OS=1, MUX=110 (AIN2), PGA=001 (±4.096 V), single-shot, 128 SPS.
	mustTx(t, b, 0x48, []byte{1, 0x80 | 6<<4 | 1<<1 | 1, 0x83}, 0)
	if r := mustTx(t, b, 0x48, nil, 2); r[0]&0x80 != 0 {
		t.Fatalf("OS reads 1 while converting: % x", r)
	}
	clk.Step(7813 * time.Microsecond) // 1/128 s
	if r := mustTx(t, b, 0x48, nil, 2); r[0]&0x80 == 0 {
		t.Fatalf("OS reads 0 after the conversion time: % x", r)
	}
	r := mustTx(t, b, 0x48, []byte{0}, 2)
	if code := int16(uint16(r[0])<<8 | uint16(r[1])); code != int16(math.Round(3/4.096*32768)) {
		t.Fatalf("code %d", code)
	}
	// Negative input against GND reads a negative code (the datasheet's
	// single-ended range is 0..FS; the code is still two's complement).
	mustTx(t, b, 0x48, []byte{1, 0x80 | 7<<4 | 1<<1 | 1, 0x83}, 0)
	clk.Step(8 * time.Millisecond)
	r = mustTx(t, b, 0x48, []byte{0}, 2)
	if code := int16(uint16(r[0])<<8 | uint16(r[1])); code != -800 {
		t.Fatalf("negative code %d", code)
	}
}

func TestBH1750ModesAndMTreg(t *testing.T) {
	clk := newFakeClock()
	b := NewBus("t", WithClock(clk.Now))
	b.Attach(0x23, NewBH1750(BH1750Config{Illuminance: Const(100)}))
	mustTx(t, b, 0x23, []byte{0x20}, 0) // one-time H-resolution
	clk.Step(100 * time.Millisecond)
	if r := mustTx(t, b, 0x23, nil, 2); r[0] != 0 || r[1] != 0 {
		t.Fatalf("data before the 120 ms measurement completed: % x", r)
	}
	clk.Step(20 * time.Millisecond)
	if r := mustTx(t, b, 0x23, nil, 2); uint16(r[0])<<8|uint16(r[1]) != 120 {
		t.Fatalf("count % x, want 120 (100 lx × 1.2)", r)
	}
	// One-time mode powered the chip down: a reset is ignored.
	mustTx(t, b, 0x23, []byte{0x07}, 0)
	if r := mustTx(t, b, 0x23, nil, 2); r[1] != 120 {
		t.Fatalf("reset in power-down cleared the data: % x", r)
	}
	// MTreg 138 doubles sensitivity and measurement time; H2 doubles again.
	mustTx(t, b, 0x23, []byte{0x01, 0x40 | 138>>5, 0x60 | 138&0x1F, 0x11}, 0)
	clk.Step(239 * time.Millisecond)
	if r := mustTx(t, b, 0x23, nil, 2); r[1] != 120 {
		t.Fatalf("new data before 240 ms: % x", r)
	}
	clk.Step(2 * time.Millisecond)
	if r := mustTx(t, b, 0x23, nil, 2); uint16(r[0])<<8|uint16(r[1]) != 480 {
		t.Fatalf("count % x, want 480", r)
	}
	if err := b.Tx(0x23, []byte{0x99}, nil); !errors.Is(err, ErrNACK) {
		t.Fatalf("unknown opcode: %v", err)
	}
}

func TestSCD4xProtocol(t *testing.T) {
	clk := newFakeClock()
	b := NewBus("t", WithClock(clk.Now))
	b.Attach(0x62, NewSCD4x(SCD4xConfig{CO2: Const(600), Temperature: Const(20), Humidity: Const(50)}))
	clk.Step(30 * time.Millisecond)
	word := func(v uint16) []byte { w := []byte{byte(v >> 8), byte(v)}; return append(w, CRC8(w)) }
	// Set altitude 420 m with a bad CRC: refused and not applied.
	bad := append([]byte{0x24, 0x27}, word(420)...)
	bad[4] ^= 1
	if err := b.Tx(0x62, bad, nil); !errors.Is(err, ErrNACK) {
		t.Fatalf("bad CRC accepted: %v", err)
	}
	if r := mustTx(t, b, 0x62, []byte{0x23, 0x22}, 3); r[0] != 0 || r[1] != 0 || r[2] != CRC8(r[:2]) {
		t.Fatalf("altitude % x", r)
	}
	mustTx(t, b, 0x62, append([]byte{0x24, 0x27}, word(420)...), 0)
	if r := mustTx(t, b, 0x62, []byte{0x23, 0x22}, 3); uint16(r[0])<<8|uint16(r[1]) != 420 {
		t.Fatalf("altitude % x", r)
	}
	// Periodic mode: config commands refused, data after 5 s.
	mustTx(t, b, 0x62, []byte{0x21, 0xb1}, 0)
	if err := b.Tx(0x62, []byte{0x23, 0x22}, make([]byte, 3)); !errors.Is(err, ErrNACK) {
		t.Fatalf("config command during periodic measurement: %v", err)
	}
	if err := b.Tx(0x62, []byte{0xec, 0x05}, make([]byte, 9)); !errors.Is(err, ErrNACK) {
		t.Fatalf("read_measurement with no data: %v", err)
	}
	clk.Step(5 * time.Second)
	if r := mustTx(t, b, 0x62, []byte{0xe4, 0xb8}, 3); (uint16(r[0])<<8|uint16(r[1]))&0x7FF == 0 {
		t.Fatalf("not ready after 5 s: % x", r)
	}
	r := mustTx(t, b, 0x62, []byte{0xec, 0x05}, 9)
	if co2 := uint16(r[0])<<8 | uint16(r[1]); co2 != 600 {
		t.Fatalf("CO2 %d", co2)
	}
	if r := mustTx(t, b, 0x62, []byte{0xe4, 0xb8}, 3); (uint16(r[0])<<8|uint16(r[1]))&0x7FF != 0 {
		t.Fatalf("still ready after read: % x", r)
	}
	// Stop: busy for 500 ms.
	mustTx(t, b, 0x62, []byte{0x3f, 0x86}, 0)
	if err := b.Tx(0x62, []byte{0x23, 0x22}, make([]byte, 3)); !errors.Is(err, ErrNACK) {
		t.Fatalf("command during stop: %v", err)
	}
	clk.Step(500 * time.Millisecond)
	mustTx(t, b, 0x62, []byte{0x23, 0x22}, 3)
	if err := b.Tx(0x62, []byte{0x36, 0xf6}, nil); err == nil {
		t.Fatal("wake_up acknowledged")
	}
}

func TestBusFaults(t *testing.T) {
	clk := newFakeClock()
	b := NewBus("i2c-1", WithClock(clk.Now))
	d := NewRegFile(1, 1)
	d.Poke(0x10, []byte{0xAB})
	if err := b.Attach(0x50, d); err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(0x50, NewRegFile(1, 1)); err == nil {
		t.Fatal("duplicate address accepted")
	}
	if err := b.Attach(0x78, NewRegFile(1, 1)); err == nil {
		t.Fatal("reserved address accepted")
	}
	err := b.Tx(0x51, []byte{0}, nil)
	var ne *NACKError
	if !errors.As(err, &ne) || ne.Addr != 0x51 || !errors.Is(err, ErrNACK) {
		t.Fatalf("empty address: %v", err)
	}
	if err.Error() != "i2csim i2c-1: address 0x51: no device (NACK)" {
		t.Errorf("message %q", err)
	}

	mustTx(t, b, 0x50, []byte{0x20, 0x55}, 0)
	// A NACKing device keeps its registers; a vanished one comes back
	// power-cycled.
	for _, f := range []struct {
		mode Fault
		want byte // register 0x20 once the fault ends
	}{{NACK, 0x55}, {Vanish, 0}} {
		b.SetFault(0x50, f.mode)
		if err := b.Tx(0x50, []byte{0x20}, make([]byte, 1)); !errors.Is(err, ErrNACK) {
			t.Fatalf("%s fault: %v", f.mode, err)
		}
		b.SetFault(0x50, NoFault)
		if r := mustTx(t, b, 0x50, []byte{0x20}, 1); r[0] != f.want {
			t.Fatalf("after a %s fault register 0x20 is %#x, want %#x", f.mode, r[0], f.want)
		}
	}
	if r := mustTx(t, b, 0x50, []byte{0x10}, 1); r[0] != 0xAB {
		t.Fatalf("power-on value %#x", r[0])
	}

	b.SetFlaky(0x50, 0.3)
	var nacks int
	for i := 0; i < 2000; i++ {
		if b.Tx(0x50, []byte{0x10}, make([]byte, 1)) != nil {
			nacks++
		}
	}
	if nacks < 500 || nacks > 700 {
		t.Fatalf("flaky 0.3 NACKed %d of 2000", nacks)
	}
	b.SetFault(0x50, NoFault)

	// Scheduled: vanish 10 s after attach for 2 s, every 60 s.
	if err := b.ScheduleFaults(0x50, []FaultWindow{{Mode: "vanish", After: 10 * time.Second, For: 2 * time.Second, Every: time.Minute}}); err != nil {
		t.Fatal(err)
	}
	probe := func() bool { return b.Tx(0x50, []byte{0x10}, make([]byte, 1)) == nil }
	for _, c := range []struct {
		at time.Duration
		ok bool
	}{{9 * time.Second, true}, {10 * time.Second, false}, {11900 * time.Millisecond, false}, {12 * time.Second, true}, {70500 * time.Millisecond, false}, {72 * time.Second, true}} {
		clk.t = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(c.at)
		if probe() != c.ok {
			t.Fatalf("at %s: ok=%v, want %v", c.at, !c.ok, c.ok)
		}
	}
	if err := b.ScheduleFaults(0x50, []FaultWindow{{Mode: "flaky", For: time.Second}}); err == nil {
		t.Fatal("flaky window without rate accepted")
	}
	tx, nacked := b.Stats()
	if tx == 0 || nacked == 0 || nacked > tx {
		t.Fatalf("stats %d/%d", tx, nacked)
	}
}

func TestCurve(t *testing.T) {
	lo, hi := 0.0, 30.0
	c := Curve{Base: 20, Drift: 2, Amplitude: 5, Period: time.Hour, Min: &lo, Max: &hi}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		t    time.Duration
		want float64
	}{{0, 20}, {15 * time.Minute, 25.5}, {30 * time.Minute, 21}, {45 * time.Minute, 16.5}, {5 * time.Hour, 30}} {
		if got := c.At(x.t); math.Abs(got-x.want) > 1e-9 {
			t.Errorf("At(%s) = %v, want %v", x.t, got, x.want)
		}
	}
	dusk := Curve{Points: []Point{{At: 0, Value: 800}, {At: 5 * time.Minute, Value: 800}, {At: 15 * time.Minute, Value: 2}}, Repeat: 20 * time.Minute}
	if err := dusk.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		t    time.Duration
		want float64
	}{{time.Minute, 800}, {10 * time.Minute, 401}, {17 * time.Minute, 2}, {30 * time.Minute, 401}} {
		if got := dusk.At(x.t); math.Abs(got-x.want) > 1e-9 {
			t.Errorf("dusk At(%s) = %v, want %v", x.t, got, x.want)
		}
	}
	noisy := Curve{Base: 10, Noise: 0.5}
	rng := newRNG(7)
	var sum, sq float64
	const n = 20000
	for i := 0; i < n; i++ {
		v := noisy.Sample(0, rng)
		sum += v
		sq += v * v
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-10) > 0.02 || math.Abs(sd-0.5) > 0.02 {
		t.Errorf("noise mean %.3f sd %.3f", mean, sd)
	}
	for _, bad := range []Curve{
		{Amplitude: 1},
		{Noise: -1},
		{Points: []Point{{At: time.Second, Value: 1}, {At: time.Second, Value: 2}}},
		{Points: []Point{{At: 0, Value: 1}, {At: time.Minute, Value: 2}}, Repeat: time.Second},
		{Min: &hi, Max: &lo},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestSharedBus(t *testing.T) {
	if Shared("shared-test") != Shared("shared-test") || Shared("shared-test") == Shared("other") {
		t.Fatal("Shared must return one bus per name")
	}
}
