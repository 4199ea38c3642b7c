package i2csim_test

// These tests run periph.io's own device drivers, unchanged, against the
// simulated devices and check that what the driver reads is the scripted
// physical value within the accuracy the device's datasheet states (and,
// where the simulator is exact, within a much tighter bound, so a subtly
// wrong register map cannot hide inside a loose datasheet tolerance).

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ads1x15"
	"periph.io/x/devices/v3/bh1750"
	"periph.io/x/devices/v3/bmxx80"
	"periph.io/x/devices/v3/ina219"
	"periph.io/x/devices/v3/mpu9250"
	"periph.io/x/devices/v3/mpu9250/accelerometer"
	"periph.io/x/devices/v3/mpu9250/reg"
	"periph.io/x/devices/v3/scd4x"
)

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if d := math.Abs(got - want); d > tol || math.IsNaN(got) {
		t.Errorf("%s = %.5g, want %.5g ± %.3g (off by %.3g)", what, got, want, tol, d)
	}
}

func celsius(e physic.Temperature) float64 {
	return float64(e-physic.ZeroCelsius) / float64(physic.Celsius)
}
func hpa(p physic.Pressure) float64             { return float64(p) / float64(physic.Pascal) / 100 }
func percent(h physic.RelativeHumidity) float64 { return float64(h) / float64(physic.PercentRH) }
func volts(v physic.ElectricPotential) float64  { return float64(v) / float64(physic.Volt) }
func amps(i physic.ElectricCurrent) float64     { return float64(i) / float64(physic.Ampere) }
func watts(p physic.Power) float64              { return float64(p) / float64(physic.Watt) }

func TestBME280ThroughPeriphDriver(t *testing.T) {
	cases := []struct{ temp, press, hum float64 }{
		{23.4, 1007.3, 41.5},
		{-10.25, 1030.1, 82},
		{61.7, 905.5, 9.5},
		{0, 1013.25, 50},
	}
	for _, c := range cases {
		bus := i2csim.NewBus("t")
		dev := i2csim.NewBME280(i2csim.BME280Config{
			Temperature: i2csim.Const(c.temp), Pressure: i2csim.Const(c.press), Humidity: i2csim.Const(c.hum),
		})
		if err := bus.Attach(0x76, dev); err != nil {
			t.Fatal(err)
		}
		d, err := bmxx80.NewI2C(bus, 0x76, &bmxx80.DefaultOpts)
		if err != nil {
			t.Fatal(err)
		}
		if d.String() != "BME280{i2csim:t(118)}" {
			t.Errorf("driver detected %s", d)
		}
		var e physic.Env
		if err := d.Sense(&e); err != nil {
			t.Fatal(err)
		}
		// Datasheet (BME280 rev 1.6, tables 1-3): ±1 °C, ±1 hPa, ±3 %RH.
		within(t, "temperature °C", celsius(e.Temperature), c.temp, 1)
		within(t, "pressure hPa", hpa(e.Pressure), c.press, 1)
		within(t, "humidity %RH", percent(e.Humidity), c.hum, 3)
		// The simulator itself: resolution plus intrinsic noise at 4x.
		within(t, "temperature °C (sim)", celsius(e.Temperature), c.temp, 0.02)
		within(t, "pressure hPa (sim)", hpa(e.Pressure), c.press, 0.1)
		within(t, "humidity %RH (sim)", percent(e.Humidity), c.hum, 0.3)
	}
}

func TestBMP280HasNoHumidity(t *testing.T) {
	bus := i2csim.NewBus("t")
	bus.Attach(0x77, i2csim.NewBME280(i2csim.BME280Config{Chip: "bmp280", Temperature: i2csim.Const(18), Pressure: i2csim.Const(990), Humidity: i2csim.Const(50)}))
	d, err := bmxx80.NewI2C(bus, 0x77, &bmxx80.DefaultOpts)
	if err != nil {
		t.Fatal(err)
	}
	var e physic.Env
	if err := d.Sense(&e); err != nil {
		t.Fatal(err)
	}
	if d.String() != "BMP280{i2csim:t(119)}" || e.Humidity != 0 {
		t.Fatalf("%s read humidity %s", d, e.Humidity)
	}
	within(t, "temperature", celsius(e.Temperature), 18, 0.02)
	within(t, "pressure", hpa(e.Pressure), 990, 0.1)
}

func TestBME280ContinuousNormalMode(t *testing.T) {
	bus := i2csim.NewBus("t")
	bus.Attach(0x76, i2csim.NewBME280(i2csim.BME280Config{Temperature: i2csim.Const(30), Pressure: i2csim.Const(1000), Humidity: i2csim.Const(20)}))
	opts := bmxx80.Opts{Temperature: bmxx80.O2x, Pressure: bmxx80.O16x, Humidity: bmxx80.O1x, Filter: bmxx80.F4}
	d, err := bmxx80.NewI2C(bus, 0x76, &opts)
	if err != nil {
		t.Fatal(err)
	}
	// 100 ms is longer than one conversion at these settings (40 ms): a
	// faster interval reads the registers before the first conversion
	// completes, i.e. their reset values, exactly as on the chip.
	ch, err := d.SenseContinuous(100 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		e := <-ch
		if i == 0 {
			continue // the first sample may predate the first normal-mode conversion
		}
		within(t, "temperature", celsius(e.Temperature), 30, 0.02)
		within(t, "pressure", hpa(e.Pressure), 1000, 0.1)
		within(t, "humidity", percent(e.Humidity), 20, 0.3)
	}
	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
}

// After a power cycle ctrl_hum is back to 0 (humidity skipped). The
// periph driver writes ctrl_hum only when it is created, so a driver kept
// across the fault reads the skipped-measurement value 0x8000 as a bogus
// humidity. This is why the sensor kinds recreate their driver after every
// fault.
func TestBME280PowerCycleNeedsReinit(t *testing.T) {
	bus := i2csim.NewBus("t")
	bus.Attach(0x76, i2csim.NewBME280(i2csim.BME280Config{Temperature: i2csim.Const(20), Pressure: i2csim.Const(1000), Humidity: i2csim.Const(40)}))
	d, _ := bmxx80.NewI2C(bus, 0x76, &bmxx80.DefaultOpts)
	var e physic.Env
	if err := d.Sense(&e); err != nil {
		t.Fatal(err)
	}
	within(t, "humidity before", percent(e.Humidity), 40, 0.3)

	bus.SetFault(0x76, i2csim.Vanish)
	if err := d.Sense(&e); !errors.Is(err, i2csim.ErrNACK) && err == nil {
		t.Fatalf("Sense on a vanished device: %v", err)
	}
	bus.SetFault(0x76, i2csim.NoFault)
	if err := d.Sense(&e); err != nil {
		t.Fatal(err)
	}
	if math.Abs(percent(e.Humidity)-40) < 3 {
		t.Fatalf("stale driver read a plausible humidity %.1f after power cycle; the simulator did not reset ctrl_hum", percent(e.Humidity))
	}
	d2, err := bmxx80.NewI2C(bus, 0x76, &bmxx80.DefaultOpts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Sense(&e); err != nil {
		t.Fatal(err)
	}
	within(t, "humidity after reinit", percent(e.Humidity), 40, 0.3)
}

func TestADS1115ThroughPeriphDriver(t *testing.T) {
	t.Parallel()
	bus := i2csim.NewBus("t")
	in := [4]float64{1.2345, 3.0, 0.0421, 2.5}
	var cfg i2csim.ADSConfig
	for i, v := range in {
		cfg.Inputs[i] = i2csim.Const(v)
	}
	bus.Attach(0x48, i2csim.NewADS1x15(cfg))
	adc, err := ads1x15.NewADS1115(bus, &ads1x15.DefaultOpts)
	if err != nil {
		t.Fatal(err)
	}
	read := func(c ads1x15.Channel, maxV physic.ElectricPotential) float64 {
		t.Helper()
		p, err := adc.PinForChannel(c, maxV, 250*physic.Hertz, ads1x15.SaveEnergy)
		if err != nil {
			t.Fatal(err)
		}
		s, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		return volts(s.V)
	}
	// Datasheet SBAS444 table 7.5: gain error ≤ 0.15 %, offset ≤ 3 LSB.
	tol := func(v float64, fsr float64) float64 { return 0.0015*math.Abs(v) + 3*fsr/32768 }
	within(t, "AIN0", read(ads1x15.Channel0, 4096*physic.MilliVolt), in[0], tol(in[0], 4.096))
	within(t, "AIN1", read(ads1x15.Channel1, 4096*physic.MilliVolt), in[1], tol(in[1], 4.096))
	within(t, "AIN2 at ±0.256 V", read(ads1x15.Channel2, 256*physic.MilliVolt), in[2], tol(in[2], 0.256))
	within(t, "AIN3", read(ads1x15.Channel3, 6144*physic.MilliVolt), in[3], tol(in[3], 6.144))
	within(t, "AIN0-AIN1", read(ads1x15.Channel0Minus1, 2048*physic.MilliVolt), in[0]-in[1], tol(in[0]-in[1], 2.048))
	within(t, "AIN2-AIN3", read(ads1x15.Channel2Minus3, 4096*physic.MilliVolt), in[2]-in[3], tol(in[2]-in[3], 4.096))
	// 3 V on the ±1.024 V range saturates at the top code.
	p, _ := adc.PinForChannel(ads1x15.Channel1, 1024*physic.MilliVolt, 250*physic.Hertz, ads1x15.SaveEnergy)
	s, err := p.Read()
	if err != nil || s.Raw != 32767 {
		t.Errorf("saturated read = %d, %v; want 32767", s.Raw, err)
	}
}

func TestADS1015ThroughPeriphDriver(t *testing.T) {
	bus := i2csim.NewBus("t")
	bus.Attach(0x49, i2csim.NewADS1x15(i2csim.ADSConfig{Bits: 12, Inputs: [4]i2csim.Curve{i2csim.Const(1.5)}}))
	adc, _ := ads1x15.NewADS1015(bus, &ads1x15.Opts{I2cAddress: 0x49})
	p, err := adc.PinForChannel(ads1x15.Channel0, 2048*physic.MilliVolt, 1600*physic.Hertz, ads1x15.SaveEnergy)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	// 12 bits: the four low bits of the register are always 0.
	if s.Raw&0xF != 0 {
		t.Errorf("raw %#x has low bits set", s.Raw)
	}
	within(t, "AIN0", volts(s.V), 1.5, 0.0015*1.5+3*2.048/2048)
}

func TestINA219ThroughPeriphDriver(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ bus, cur float64 }{{12.0, 1.25}, {5.02, -0.310}, {11.1, 2.9}} {
		b := i2csim.NewBus("t")
		b.Attach(0x40, i2csim.NewINA219(i2csim.INA219Config{ShuntOhms: 0.1, Bus: i2csim.Const(c.bus), Current: i2csim.Const(c.cur)}))
		d, err := ina219.New(b, &ina219.Opts{Address: 0x40, SenseResistor: 100 * physic.MilliOhm, MaxCurrent: 3200 * physic.MilliAmpere})
		if err != nil {
			t.Fatal(err)
		}
		// The driver configures 128-sample averaging of shunt and bus:
		// 2 × 68.1 ms until the first result.
		time.Sleep(140 * time.Millisecond)
		pm, err := d.Sense()
		if err != nil {
			t.Fatal(err)
		}
		// Datasheet SBOS448 table 7.5: shunt offset ≤ 100 µV, gain error
		// ≤ 0.5 % over temperature; bus voltage ≤ 0.5 %.
		within(t, "bus V", volts(pm.Voltage), c.bus, 0.005*c.bus+0.004)
		within(t, "shunt V", volts(pm.Shunt), c.cur*0.1, 0.005*math.Abs(c.cur*0.1)+100e-6)
		within(t, "current A", amps(pm.Current), c.cur, 0.005*math.Abs(c.cur)+100e-6/0.1)
		within(t, "power W", watts(pm.Power), math.Abs(c.cur)*c.bus, 0.01*math.Abs(c.cur)*c.bus+0.01)
	}
}

// The calibration register resets to 0 on power-up, and with it current
// and power read 0: only a driver that recalibrates after a fault reads
// current again.
func TestINA219CurrentNeedsCalibration(t *testing.T) {
	t.Parallel()
	b := i2csim.NewBus("t")
	b.Attach(0x40, i2csim.NewINA219(i2csim.INA219Config{Bus: i2csim.Const(12), Current: i2csim.Const(1)}))
	d, _ := ina219.New(b, &ina219.Opts{Address: 0x40})
	time.Sleep(140 * time.Millisecond)
	b.SetFault(0x40, i2csim.Vanish)
	if _, err := d.Sense(); err == nil {
		t.Fatal("Sense on vanished device succeeded")
	}
	b.SetFault(0x40, i2csim.NoFault)
	// Let the power-on default configuration (12-bit, 532 µs) convert.
	b.Tx(0x40, []byte{0x00}, make([]byte, 2))
	time.Sleep(5 * time.Millisecond)
	pm, err := d.Sense()
	if err != nil {
		t.Fatal(err)
	}
	if pm.Current != 0 || pm.Power != 0 {
		t.Fatalf("uncalibrated current %s power %s, want 0", pm.Current, pm.Power)
	}
	within(t, "shunt V still measured", volts(pm.Shunt), 0.1, 0.001)
}

func TestBH1750ThroughPeriphDriver(t *testing.T) {
	t.Parallel()
	for _, lx := range []float64{0.7, 312.4, 10000, 54000} {
		b := i2csim.NewBus("t")
		b.Attach(0x23, i2csim.NewBH1750(i2csim.BH1750Config{Illuminance: i2csim.Const(lx)}))
		d, err := bh1750.NewI2C(b, bh1750.I2CAddr)
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.Sense()
		if err != nil {
			t.Fatal(err)
		}
		got := float64(v) / float64(physic.Lumen)
		// Datasheet: measurement accuracy 1.2 ± 0.24 (±20 %), 1 lx resolution.
		within(t, "illuminance lx", got, lx, 0.2*lx+1)
		within(t, "illuminance lx (sim)", got, lx, 1/1.2)
	}
}

func TestMPU9250ThroughPeriphDriver(t *testing.T) {
	t.Parallel()
	b := i2csim.NewBus("t")
	accel := [3]float64{0.12, -0.5, 0.98}
	gyro := [3]float64{1.5, -200, 33}
	cfg := i2csim.MPU9250Config{Temperature: i2csim.Const(36.6)}
	for i := range 3 {
		cfg.Accel[i] = i2csim.Const(accel[i])
		cfg.Gyro[i] = i2csim.Const(gyro[i])
	}
	b.Attach(0x68, i2csim.NewMPU9250(cfg))
	tr, _ := mpu9250.NewI2cTransport(b, 0x68)
	m, _ := mpu9250.New(*tr)
	if id, err := m.GetDeviceID(); err != nil || id != 0x71 {
		t.Fatalf("WHO_AM_I = %#x, %v", id, err)
	}
	if err := m.Init(); err != nil {
		t.Fatal(err)
	}
	// periph's init sequence writes PWR_MGMT_2 = 0x01, which disables the
	// gyro's Z axis (register map 4.29); the driver then refuses to read it.
	if _, err := m.GetRotation(); err == nil {
		t.Fatal("expected the Z gyro to be disabled after periph's Init")
	}
	if err := m.WriteByteAddress(reg.MPU9250_PWR_MGMT_2, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.SetAccelRange(accelerometer.ACCEL_FS_SEL_4G); err != nil {
		t.Fatal(err)
	}
	if err := m.SetGyroRange(1); err != nil { // ±500 °/s
		t.Fatal(err)
	}
	// Outputs update at the sample rate (200 Hz after Init) and the gyro
	// needs 35 ms to start (datasheet table 1): read after both.
	time.Sleep(40 * time.Millisecond)
	a, err := m.GetAcceleration()
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.GetRotation()
	if err != nil {
		t.Fatal(err)
	}
	sens := accelerometer.Sensitivity(accelerometer.ACCEL_FS_SEL_4G)
	// Datasheet PS-MPU-9250A table 2: accel zero-g offset ±80 mg,
	// sensitivity tolerance ±3 %; table 1: gyro ZRO ±5 °/s, ±3 %.
	for i, raw := range []int16{a.X, a.Y, a.Z} {
		within(t, "accel g", float64(raw)*float64(sens), accel[i], 0.03*math.Abs(accel[i])+0.08)
		within(t, "accel g (sim)", float64(raw)*float64(sens), accel[i], 1.0/8192)
	}
	for i, raw := range []int16{g.X, g.Y, g.Z} {
		within(t, "gyro °/s", float64(raw)/65.5, gyro[i], 0.03*math.Abs(gyro[i])+5)
		within(t, "gyro °/s (sim)", float64(raw)/65.5, gyro[i], 1/65.5)
	}
	temp, err := m.GetTemperature()
	if err != nil {
		t.Fatal(err)
	}
	within(t, "die temperature", float64(int16(temp))/333.87+21, 36.6, 0.01)
}

func TestSCD41ThroughPeriphDriver(t *testing.T) {
	t.Parallel()
	b := i2csim.NewBus("t")
	b.Attach(scd4x.SensorAddress, i2csim.NewSCD4x(i2csim.SCD4xConfig{
		CO2: i2csim.Const(812), Temperature: i2csim.Const(24.3), Humidity: i2csim.Const(38.2),
		Interval: 300 * time.Millisecond,
	}))
	d, err := scd4x.NewI2C(b, scd4x.SensorAddress)
	if err != nil {
		t.Fatal(err)
	}
	var e scd4x.Env
	if err := d.Sense(&e); err != nil {
		t.Fatal(err)
	}
	// Datasheet (SCD41): CO₂ ±(50 ppm + 5 %), T ±0.8 °C, RH ±6 %RH.
	within(t, "CO2 ppm", float64(e.CO2), 812, 50+0.05*812)
	within(t, "temperature", celsius(e.Temperature), 24.3, 0.8)
	within(t, "humidity", percent(e.Humidity), 38.2, 6)
	within(t, "CO2 ppm (sim)", float64(e.CO2), 812, 0.5)
	within(t, "temperature (sim)", celsius(e.Temperature), 24.3, 0.01)
	within(t, "humidity (sim)", percent(e.Humidity), 38.2, 0.01)

	cfg, err := d.GetConfiguration() // stops periodic measurement first
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SensorType != scd4x.SCD41 || cfg.ASCTarget != 400 || !cfg.ASCEnabled || cfg.AmbientPressure != 101300*physic.Pascal {
		t.Errorf("configuration %+v", cfg)
	}
	// periph converts the offset word to physic.Temperature without the
	// unit (4 °C comes back as 4 nK); check the word the simulator sent.
	within(t, "temperature offset word", float64(cfg.TemperatureOffset), 4, 0.01)
}
