package actuators_test

import (
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/store"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/registry"
	"github.com/edgeagent/edgeagent/plugin/actuators" // also: the board learns the actuator kinds
	"github.com/edgeagent/edgeagent/tools/actuator"
	// The built-in kinds, each imported as cmd/edgeagent's actuator_*.go do.
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
)

// The board checks actuator blocks against the registered kinds (which it
// does not know by name): these cases moved here from board's own tests,
// because the kinds are linked here. Each is a whole board file with one
// mistake and the exact "file:line:col: path: message" prefix expected.
// (The lists of kinds in messages come from the registry, sorted.)
var mistakes = []struct {
	name string
	src  string
	want string
}{
	{"PCA9685 channel used twice", "device: {id: t, platform: sim}\nactuators:\n  - {name: pan, kind: pca9685_servo, channel: 0}\n  - {name: tilt, kind: pca9685_servo, channel: 0}\n",
		`t.yaml:4:48: actuators[1].channel: this channel of the PCA9685 is already used by actuators[0] (line 3)`},
	{"sensor at a PCA9685 address", "device: {id: t, platform: sim}\nactuators:\n  - {name: pan, kind: pca9685_servo}\nsensors:\n  - {name: x, kind: generic, address: 0x40}\n",
		`t.yaml:5:39: sensors[0].address: this bus and address are already used by actuators[0] (line 3)`},
	{"Pi bus on a Jetson", "device: {id: t, platform: jetson, model: jetson-orin-nano}\nactuators:\n  - {name: pan, kind: pca9685_servo, bus: \"0\"}\n",
		`t.yaml:3:43: actuators[0].bus: not an I2C bus of this board's header; buses: 1 (pins 27/28), 7 (pins 3/5)`},
	{"unknown actuator kind", "device: {id: t, platform: sim}\nactuators:\n  - {name: arm, kind: stepper}\n",
		`t.yaml:3:23: actuators[0].kind: want one of buzzer, digital, dimmer, led, motor, pca9685_servo, pwm, relay, servo`},
	{"motor missing a pin", "device: {id: t, platform: sim}\nactuators:\n  - name: drive\n    kind: motor\n    pins: {forward: a, backward: b}\n",
		`t.yaml:5:5: actuators[0].pins.pwm: required for kind motor`},
	{"servo with a motor pin", "device: {id: t, platform: sim}\nactuators:\n  - {name: pan, kind: servo, pins: {pin: a, pwm: b}}\n",
		`t.yaml:3:45: actuators[0].pins.pwm: kind servo uses only pin`},
	{"pin on an I2C kind", "device: {id: t, platform: sim}\nactuators:\n  - {name: pan, kind: pca9685_servo, pins: {pin: a}}\n",
		`t.yaml:3:45: actuators[0].pins.pin: kind pca9685_servo has no pins (it is driven over I2C)`},
	{"channel beyond the chip", "device: {id: t, platform: sim}\nactuators:\n  - {name: pan, kind: pca9685_servo, channel: 16}\n",
		`t.yaml:3:47: actuators[0].channel: want 0–15`},
	{"address on a pin kind", "device: {id: t, platform: sim}\nactuators:\n  - {name: led, kind: led, pins: {pin: a}, address: 0x41}\n",
		`t.yaml:3:44: actuators[0].address: only used by kind pca9685_servo`},
	{"switch initial", "device: {id: t, platform: sim}\nactuators:\n  - {name: led, kind: led, pins: {pin: a}, initial: dim}\n",
		`t.yaml:3:53: actuators[0].initial: not one of on, off`},
}

func TestMistakes(t *testing.T) {
	for _, tc := range mistakes {
		t.Run(tc.name, func(t *testing.T) {
			c, err := board.Parse("t.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; want %s", tc.want)
			}
			if c != nil {
				t.Errorf("got a Config along with the error")
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if !strings.HasPrefix(first, tc.want) {
				t.Errorf("first error:\n got %s\nwant %s…\n(all: %v)", first, tc.want, err)
			}
			var be *board.Error
			if !errors.As(err, &be) {
				t.Errorf("%T is not an *Error", err)
			}
		})
	}
}

// TestDefaults: the kinds' defaults that the board fills at load time
// (moved from board's TestDefaults); the limits are the kinds' own,
// defaulted when the kind decodes them (TestLimitErrorsHavePositions).
func TestDefaults(t *testing.T) {
	src := `
device: {id: bot, platform: raspi, model: rpi4}
data_dir: /tmp/bot
actuators:
  - {name: pan, kind: pca9685_servo}
`
	c, err := board.Parse("/etc/edgeagent/bot.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	pan := c.Actuators[0]
	check("pan.address", pan.Address, board.Addr(0x40))
	check("pan.bus", pan.Bus, "1")
	check("pan.permission", pan.Permission, "actuate")
}

// TestShippedBoardsRoundTrip: with the kinds known, the shipped board files
// load, and what `check --print` prints (the kinds' defaults filled in)
// loads again to the same actuators.
func TestShippedBoardsRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "board-configs", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no board files: %v", err)
	}
	for _, f := range files {
		c1, err := board.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c1.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := board.Parse("printed.yaml", out)
		if err != nil {
			t.Fatalf("%s printed: %v\n%s", f, err, out)
		}
		strip := func(as []board.Actuator) []board.Actuator {
			as = slices.Clone(as)
			for i := range as {
				as[i].Options, as[i].Limits = board.Options{}, board.Options{} // positions differ by design
			}
			return as
		}
		if a1, a2 := strip(c1.Actuators), strip(c2.Actuators); !reflect.DeepEqual(a1, a2) {
			t.Errorf("%s: actuators changed in the round trip:\n%+v\n%+v", f, a1, a2)
		}
	}
}

// TestOptionErrorsHavePositions: a value a kind rejects after decoding is
// reported at its key, like the decoding errors; the limits are decoded by
// the kind as its options are, and a key of another kind is unknown.
func TestOptionErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{"{name: led, kind: led, pins: {pin: a}, limits: {max_angle: 90}}",
			`t.yaml:3:53: actuators[0].limits.max_angle: unknown key (known keys: rate_limit, on_violation)`},
		{"{name: pan, kind: servo, pins: {pin: a}, limits: {min_angle: 120, max_angle: 60}}",
			`t.yaml:3:82: actuators[0].limits.max_angle: must be greater than min_angle`},
		{"{name: m, kind: motor, pins: {forward: a, backward: b, pwm: c}, limits: {max_speed: 1.5}}",
			`t.yaml:3:89: actuators[0].limits.max_speed: outside (0, 1]`},
		{"{name: m, kind: led, pins: {pin: a}, limits: {on_violation: ignore}}",
			`t.yaml:3:65: actuators[0].limits.on_violation: not one of refuse, clamp`},
		{"{name: fan, kind: pwm, pins: {pin: a}, limits: {rate_limit: -1}}",
			`t.yaml:3:65: actuators[0].limits.rate_limit: must not be negative`},
		{"{name: fan, kind: pwm, pins: {pin: a}, options: {on_estop: maybe}}",
			`t.yaml:3:64: actuators[0].options.on_estop: want off or hold`},
		{"{name: pan, kind: pca9685_servo, options: {pulse_min: 3ms, pulse_max: 2ms}}",
			`t.yaml:3:59: actuators[0].options.pulse_min: must be positive and below pulse_max`},
		{"{name: pan, kind: servo, pins: {pin: a}, options: {range: 270}}",
			`t.yaml:3:63: actuators[0].options.range: a servo on a pin is driven by gobot's ServoDriver`},
	} {
		c, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nactuators:\n  - "+tc.block+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: actuators.Configs(c.Actuators),
			Log: slog.New(slog.DiscardHandler)})
		var be *board.Error
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.As(err, &be) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.block, err, tc.want)
		}
	}
	// The envelope holds `initial` too, with the kind's defaults.
	for _, tc := range []struct{ block, want string }{
		{"{name: pan, kind: servo, pins: {pin: a}, initial: 200}", "actuators[0]: initial: outside the envelope 0–180°"},
		{"{name: fan, kind: pwm, pins: {pin: a}, limits: {max_duty: 0.5}, initial: \"0.8\"}", "actuators[0]: initial: outside the envelope 0–0.5"},
	} {
		c, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nactuators:\n  - "+tc.block+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: actuators.Configs(c.Actuators),
			Log: slog.New(slog.DiscardHandler)})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.block, err, tc.want)
		}
	}
}

// A kind that another build profile holds is named as such at load time,
// with its position, instead of "not one of".
func TestKindOfAnotherProfile(t *testing.T) {
	registry.UseProfiles("robot", func(what, name string) []string {
		if what == registry.ActuatorKind && name == "stepper" {
			return []string{"full"}
		}
		return nil
	})
	defer registry.UseProfiles("", nil)
	_, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nactuators:\n  - {name: arm, kind: stepper}\n"))
	want := `t.yaml:3:23: actuators[0].kind: not in this binary (build profile robot); build profile full has it`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}
