package generic_test

import (
	"math"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/i2c/generic"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

func f(v float64) *float64 { return &v }
func u8(v uint8) *uint8    { return &v }

func codec(t *testing.T, r generic.Reading) generic.Codec {
	t.Helper()
	c, err := generic.NewCodec(r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Byte strings and values from datasheets, so the decoder is checked
// against the devices, not against its own inverse.
func TestDecodeDatasheetVectors(t *testing.T) {
	// TI TMP102 (SBOS397, table 7-4): 12-bit two's complement, left-aligned.
	tmp102 := codec(t, generic.Reading{Length: 2, Signed: true, Shift: 4, Bits: 12, Scale: f(0.0625)})
	for _, v := range []struct {
		b    []byte
		want float64
	}{
		{[]byte{0x7F, 0xF0}, 127.9375},
		{[]byte{0x64, 0x00}, 100},
		{[]byte{0x19, 0x00}, 25},
		{[]byte{0x00, 0x40}, 0.25},
		{[]byte{0x00, 0x00}, 0},
		{[]byte{0xFF, 0xC0}, -0.25},
		{[]byte{0xE7, 0x00}, -25},
		{[]byte{0xC9, 0x00}, -55},
	} {
		if got := tmp102.Decode(v.b); got != v.want {
			t.Errorf("TMP102 % x = %v, want %v", v.b, got, v.want)
		}
	}
	// TI INA219 bus voltage register: bits 15..3, 4 mV per count.
	ina := codec(t, generic.Reading{Length: 2, Shift: 3, Scale: f(0.004)})
	if got := ina.Decode([]byte{0x5D, 0xC2}); math.Abs(got-12.0) > 1e-12 {
		t.Errorf("INA219 bus = %v, want 12.0", got)
	}
	// Melexis MLX90614 (SMBus, LSB first): Tobj = raw × 0.02 K.
	mlx := codec(t, generic.Reading{Length: 2, Order: "little", Scale: f(0.02), Offset: -273.15})
	if got := mlx.Decode([]byte{0xF7, 0x3A}); math.Abs(got-28.75) > 1e-9 {
		t.Errorf("MLX90614 = %v, want 28.75", got)
	}
	// 24-bit signed little-endian, full width.
	s24 := codec(t, generic.Reading{Length: 3, Order: "little", Signed: true})
	if got := s24.Decode([]byte{0x00, 0x00, 0x80}); got != -8388608 {
		t.Errorf("s24 min = %v", got)
	}
	if got := s24.Decode([]byte{0xFF, 0xFF, 0x7F}); got != 8388607 {
		t.Errorf("s24 max = %v", got)
	}
	// One unsigned byte, and a 64-bit signed value.
	if got := codec(t, generic.Reading{Length: 1}).Decode([]byte{0xFE}); got != 254 {
		t.Errorf("u8 = %v", got)
	}
	if got := codec(t, generic.Reading{Length: 8, Signed: true}).Decode([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE}); got != -2 {
		t.Errorf("s64 = %v", got)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	c := codec(t, generic.Reading{Length: 2, Signed: true, Shift: 4, Bits: 12, Scale: f(0.0625)})
	for _, v := range []float64{-55, -0.25, 0, 21.5, 127.9375} {
		if got := c.Decode(c.Encode(v)); got != v {
			t.Errorf("%v -> % x -> %v", v, c.Encode(v), got)
		}
	}
	if b := c.Encode(-25); b[0] != 0xE7 || b[1] != 0x00 {
		t.Errorf("Encode(-25) = % x, want e7 00", b)
	}
	// Out of range values clamp to the representable extremes.
	if got := c.Decode(c.Encode(500)); got != 127.9375 {
		t.Errorf("clamp high: %v", got)
	}
	if got := c.Decode(c.Encode(-500)); got != -128 {
		t.Errorf("clamp low: %v", got)
	}
}

func TestCodecValidation(t *testing.T) {
	for _, r := range []generic.Reading{
		{Length: 0},
		{Length: 9},
		{Length: 2, Order: "middle"},
		{Length: 2, Shift: 16},
		{Length: 2, Shift: 4, Bits: 13},
		{Length: 1, Scale: f(0)},
	} {
		if _, err := generic.NewCodec(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
}

func TestGenericOnSimBoard(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: board_temp
  kind: generic
  bus: "31"
  address: 0x48
  interval: 10ms
  options:
    init:
      - {register: 0x01, data: [0x60, 0xA0]}
    readings:
      - {name: temperature, register: 0x00, length: 2, signed: true, shift: 4, bits: 12, scale: 0.0625, unit: "°C"}
      - {name: raw_le, register: 0x10, length: 3, order: little, signed: true, scale: 0.5, offset: 100}
    sim:
      register_bytes: 2
      readings:
        temperature: {base: -21.3}
        raw_le: {base: -4000.5}
`)
	rec.WaitFor(t, 3*time.Second, "readings", func() bool { return len(rec.Values("board_temp.raw_le")) >= 2 })
	// -21.3 °C is stored as the nearest 1/16 °C: -21.3125.
	for _, o := range rec.Observations("board_temp.temperature") {
		if o.Value != -21.3125 || o.Unit != "°C" {
			t.Fatalf("temperature %+v", o)
		}
	}
	for _, v := range rec.Values("board_temp.raw_le") {
		if v != -4000.5 {
			t.Fatalf("raw_le %v", v)
		}
	}
	// The init write reached the device.
	rf := i2csim.Shared("31").Device(0x48).(*i2csim.RegFile)
	if got := rf.Peek(0x01); got[0] != 0x60 || got[1] != 0xA0 {
		t.Errorf("init not written: % x", got)
	}
}

func TestGenericCommandWithDelay(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: hum
  kind: generic
  bus: "32"
  address: 0x40
  interval: 10ms
  options:
    readings:
      - {name: humidity, command: [0xF5], delay: 5ms, length: 2, scale: 0.0019073486, offset: -6, unit: "%RH"}
    sim: {readings: {humidity: {base: 48.2}}}
`)
	rec.WaitFor(t, 3*time.Second, "humidity", func() bool { return len(rec.Values("hum.humidity")) >= 2 })
	if v := rec.Values("hum.humidity")[0]; math.Abs(v-48.2) > 0.002 {
		t.Fatalf("humidity %v", v)
	}
}

func TestGenericOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: g, kind: generic, options: {readings: [{name: t, length: 2}]}}`, "address: required"},
		{`- {name: g, kind: generic, address: 0x48}`, "at least one reading"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: T, length: 2}]}}`, "readings[0].name: must match"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: t, length: 2, register: 0, command: [1]}]}}`, "register or command, not both"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: t, length: 2, bits: 17}]}}`, "readings[0].bits: must be 1..16"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: t, length: 2, endian: big}]}}`, "options.readings[0].endian: unknown key"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: t, length: 1}], sim: {readings: {x: {base: 1}}}}}`, "options.sim.readings: a key names no reading"},
		{`- {name: g, kind: generic, address: 0x48, options: {readings: [{name: t, length: 1, register: 256}]}}`, "register: the number does not fit in uint8"},
	})
}

func BenchmarkDecode(b *testing.B) {
	c, _ := generic.NewCodec(generic.Reading{Length: 2, Signed: true, Shift: 4, Bits: 12, Scale: f(0.0625)})
	buf := []byte{0xE7, 0x00}
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += c.Decode(buf)
	}
	_ = sink
}
