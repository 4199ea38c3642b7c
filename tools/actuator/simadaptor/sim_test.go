package simadaptor

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"
	"gobot.io/x/gobot/v2/drivers/gpio"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/pca9685"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The sim adaptor is a gobot connection with the three writer interfaces
// the gpio drivers type-assert at run time.
var (
	_ gpio.DigitalWriter = (*Adaptor)(nil)
	_ gpio.PwmWriter     = (*Adaptor)(nil)
	_ gpio.ServoWriter   = (*Adaptor)(nil)
)

func TestRecordsWritesThroughGobotDrivers(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := New(Options{Now: func() time.Time { return now }})
	led := gpio.NewLedDriver(a, "7")
	if err := led.On(); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("write before Connect: got %v, want ErrNotConnected", err)
	}
	if err := a.Connect(); err != nil {
		t.Fatal(err)
	}
	servo := gpio.NewServoDriver(a, "12")
	motor := gpio.NewMotorDriver(a, "33", gpio.WithMotorForwardPin("29"), gpio.WithMotorBackwardPin("31"))
	steps := []func() error{led.On, func() error { return servo.Move(45) }, func() error { return motor.Backward(128) }, led.Off}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	want := []Write{
		{1, now, "digital", "7", 1},
		{2, now, "servo", "12", 45},
		{3, now, "digital", "29", 0},
		{4, now, "digital", "31", 1},
		{5, now, "pwm", "33", 128},
		{6, now, "digital", "7", 0},
	}
	got := a.Writes()
	if len(got) != len(want) {
		t.Fatalf("writes = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("write %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if v, _ := a.Digital("31"); v != 1 {
		t.Errorf("pin 31 = %d, want 1", v)
	}
	if v, _ := a.PWM("33"); v != 128 {
		t.Errorf("pwm 33 = %d, want 128", v)
	}
	if v, _ := a.Servo("12"); v != 45 {
		t.Errorf("servo 12 = %d, want 45", v)
	}
	if err := a.ServoWrite("12", 200); err == nil {
		t.Error("servo angle 200 accepted")
	}
	if err := a.Finalize(); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Digital("7"); ok {
		t.Error("pin state survives Finalize")
	}
}

func TestLogIsBounded(t *testing.T) {
	a := New(Options{Keep: 3})
	_ = a.Connect()
	for i := range 5 {
		_ = a.PwmWrite("p", byte(i))
	}
	w := a.Writes()
	if len(w) != 3 || w[0].Value != 2 || w[2].Value != 4 || a.Count() != 5 {
		t.Fatalf("writes = %+v (count %d), want the last 3 of 5", w, a.Count())
	}
}

func TestFaultsAndBlocks(t *testing.T) {
	a := New(Options{})
	_ = a.Connect()
	boom := errors.New("short circuit")
	a.Fail("5", boom)
	if err := a.DigitalWrite("5", 1); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the injected fault", err)
	}
	a.Fail("5", nil)
	if err := a.DigitalWrite("5", 1); err != nil {
		t.Fatal(err)
	}

	release := a.Block("6")
	done := make(chan error, 1)
	go func() { done <- a.DigitalWrite("6", 1) }()
	// Other pins are not held up by the blocked one.
	if err := a.DigitalWrite("7", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("blocked write returned early: %v", err)
	default:
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, _ := a.Digital("6"); v != 1 {
		t.Fatal("blocked write not applied after release")
	}
}

// periph's own PCA9685 driver runs unchanged against the simulated chip.
func TestPCA9685WithPeriphDriver(t *testing.T) {
	a := New(Options{})
	_ = a.Connect()
	bus, _ := a.OpenI2C("sim")
	if _, err := pca9685.NewI2C(bus, 0x41); err == nil {
		t.Fatal("no device at 0x41, but the driver initialised")
	}
	chip := a.I2CBus("sim").AttachPCA9685(0x40)
	if !chip.Sleeping() || chip.Pulse(0) != 0 {
		t.Fatal("power-on state: want asleep, outputs off")
	}
	dev, err := pca9685.NewI2C(bus, 0x40)
	if err != nil {
		t.Fatal(err)
	}
	if chip.Sleeping() {
		t.Fatal("driver init did not wake the chip")
	}
	// periph: prescale = round(25 MHz/4096/50 Hz) = 122 → period 4096*123/25 MHz.
	if got, want := chip.Period(), time.Duration(4096*123*40); got != want {
		t.Fatalf("period %v, want %v", got, want)
	}
	if err := dev.SetPwm(3, 0, 307); err != nil {
		t.Fatal(err)
	}
	want := time.Duration(float64(chip.Period()) * 307 / 4096)
	if got := chip.Pulse(3); got != want {
		t.Fatalf("channel 3 pulse %v, want %v", got, want)
	}
	if chip.Pulse(2) != 0 {
		t.Fatal("channel 2 changed")
	}
	if err := dev.SetFullOff(3); err != nil {
		t.Fatal(err)
	}
	if chip.Pulse(3) != 0 {
		t.Fatal("full-off ignored")
	}
	if err := dev.SetFullOn(4); err != nil {
		t.Fatal(err)
	}
	if chip.Pulse(4) != chip.Period() {
		t.Fatal("full-on ignored")
	}
	// The prescaler is writable only while asleep: writing it awake changes
	// nothing, as on the real chip.
	before := chip.Period()
	if err := bus.Tx(0x40, []byte{regPrescale, 3}, nil); err != nil {
		t.Fatal(err)
	}
	if chip.Period() != before {
		t.Fatal("prescaler changed while awake")
	}
	if err := dev.SetPwmFreq(100 * physic.Hertz); err != nil {
		t.Fatal(err)
	}
	if chip.Period() >= before {
		t.Fatal("SetPwmFreq(100 Hz) did not shorten the period")
	}
	var sawPulse bool
	for _, w := range a.WritesTo("sim/0x40/3") {
		if w.Kind == "pca9685" && w.Value > 0 {
			sawPulse = true
		}
	}
	if !sawPulse {
		t.Fatal("channel writes are not in the write log")
	}
	a.Fail("sim/0x40", errors.New("bus stuck"))
	if err := dev.SetPwm(3, 0, 100); err == nil {
		t.Fatal("injected I2C fault not reported")
	}
}
