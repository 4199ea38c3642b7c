package actuator_test

import (
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/store"

	"github.com/edgeagent/edgeagent/tools/actuator"
)

func TestOptionsAreCheckedAtBuild(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"  - {name: a, kind: led, pins: {pin: x}, options: {on_estop: maybe}}\n", "on_estop"},
		{"  - {name: a, kind: led, pins: {pin: x}, options: {brightness: 3}}\n", "brightness"},
		{"  - {name: a, kind: servo, pins: {pin: x}, options: {range: 270}}\n", "0–180°"},
		{"  - {name: a, kind: pca9685_servo, options: {pulse_min: 3ms, pulse_max: 2ms}}\n", "pulse_min"},
		{"  - {name: a, kind: pca9685_servo, options: {range: 90}, limits: {max_angle: 120}}\n", "exceed the servo's range"},
		// Without max_angle a servo of a smaller range is limited to its range.
		{"  - {name: a, kind: pca9685_servo, options: {range: 90}, initial: \"100\"}\n", "outside the envelope 0–90°"},
		{"  - {name: estop, kind: led, pins: {pin: x}}\n", "actuators[0].name: estop and audit name"},
		// initial is written at start without a tool call: the envelope
		// holds it too, also where board.Load lets it through (NaN).
		{"  - {name: a, kind: servo, pins: {pin: x}, limits: {min_angle: 10, max_angle: 120}, initial: \"NaN\"}\n", "actuators[0]: initial: outside the envelope 10–120°"},
		{"  - {name: a, kind: pca9685_servo, limits: {min_angle: 30}, initial: \"nan\"}\n", "outside the envelope 30–180°"},
		{"  - {name: a, kind: pwm, pins: {pin: x}, limits: {max_duty: 0.5}, initial: \"NaN\"}\n", "actuators[0]: initial: outside the envelope 0–0.5"},
	} {
		cfg := parseBoard(t, "sim", tc.yaml)
		_, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: cfg.Actuators, Log: quiet})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %q", strings.TrimSpace(tc.yaml), err, tc.want)
		}
	}
	// Actuator blocks that did not come through board.Load (no defaults,
	// no cross-checks): the envelope still holds the initial state.
	limits := func(key string, v float64) func(any) error {
		dec, _ := strictDecoder(map[string]any{key: v})
		return dec
	}
	for _, a := range []actuator.Config{
		{Name: "a", Kind: "servo", Pins: map[string]string{"pin": "x"}, DecodeLimits: limits("max_angle", 120), Initial: "150"},
		{Name: "a", Kind: "pwm", Pins: map[string]string{"pin": "x"}, DecodeLimits: limits("max_duty", 0.5), Initial: "0.9"},
	} {
		_, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: []actuator.Config{a}, Log: quiet})
		if err == nil || !strings.Contains(err.Error(), "outside the envelope") {
			t.Errorf("%s initial %s: got %v, want an envelope error", a.Kind, a.Initial, err)
		}
	}
}

func TestPlatformsRejectPinsWithoutPWM(t *testing.T) {
	cfg := parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "16"}}`+"\n")
	_, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet})
	if err == nil || !strings.Contains(err.Error(), "no hardware PWM") {
		t.Fatalf("servo on raspi pin 16: got %v", err)
	}
	cfg = parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "12"}}
  - {name: tilt, kind: servo, pins: {pin: "32"}}
`)
	_, err = actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet})
	if err == nil || !strings.Contains(err.Error(), "share channel pwm0") {
		t.Fatalf("two servos on pwm0: got %v", err)
	}
	cfg = parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "16"}}`+"\n")
	if _, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet, Settings: actuator.Settings{PWM: "pi-blaster"}}); err != nil {
		t.Fatalf("pi-blaster drives any pin: %v", err)
	}
	cfg = parseBoard(t, "jetson", `  - {name: fan, kind: pwm, pins: {pin: "31"}}`+"\n")
	if _, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "jetson", Model: "jetson-orin-nano", Actuators: cfg.Actuators, Log: quiet}); err == nil {
		t.Fatal("pwm on jetson pin 31 accepted")
	}
	// The board files in the repository build without hardware.
	for _, f := range []string{"rpi4", "rpi5", "jetson-orin-nano", "sim"} {
		cfg, err := loadRepoBoard(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: cfg.Device.Platform, Model: cfg.Device.Model, Actuators: cfg.Actuators, Log: quiet}); err != nil {
			t.Errorf("%s.yaml: %v", f, err)
		}
	}
}
