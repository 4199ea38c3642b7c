package board

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// bme280Options is what a sensor kind would declare: defaults set before
// Decode, yaml tags for the keys.
type bme280Options struct {
	Mode     string            `yaml:"mode"`
	Filter   int               `yaml:"filter"`
	Settle   time.Duration     `yaml:"settle"`
	Channels []channelOptions  `yaml:"channels"`
	Labels   map[string]string `yaml:"labels"`
	Offset   *float64          `yaml:"offset"`
	Extra    any               `yaml:"extra"`
}

type channelOptions struct {
	Gain  float64 `yaml:"gain"`
	Scale float64 `yaml:"scale"`
}

func bmeDefaults() bme280Options {
	return bme280Options{Mode: "normal", Filter: 4, Settle: 10 * time.Millisecond}
}

func sensorOptions(t *testing.T, options string) Options {
	t.Helper()
	src := "device: {id: t, platform: sim}\nsensors:\n  - name: env\n    kind: bme280\n" + options
	c, err := Parse("o.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c.Sensors[0].Options
}

func TestOptionsDecode(t *testing.T) {
	o := sensorOptions(t, `    options:
      mode: forced
      settle: 250ms
      channels:
        - {gain: 2, scale: 0.5}
        - gain: 1e-3
      labels: {a: x}
      offset: -1.5
      extra: {any: [thing, 1]}
`)
	if o.IsZero() {
		t.Fatal("IsZero on a full block")
	}
	got := bmeDefaults()
	if err := o.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Mode != "forced" || got.Filter != 4 || got.Settle != 250*time.Millisecond {
		t.Errorf("scalars: %+v", got)
	}
	if len(got.Channels) != 2 || got.Channels[0] != (channelOptions{2, 0.5}) || got.Channels[1].Gain != 1e-3 {
		t.Errorf("channels: %+v", got.Channels)
	}
	if got.Labels["a"] != "x" || got.Offset == nil || *got.Offset != -1.5 {
		t.Errorf("labels/offset: %+v %v", got.Labels, got.Offset)
	}
	if m, ok := got.Extra.(map[string]any); !ok || len(m["any"].([]any)) != 2 {
		t.Errorf("extra: %#v", got.Extra)
	}
}

func TestOptionsEmptyKeepsDefaults(t *testing.T) {
	for name, block := range map[string]string{"absent": "", "empty": "    options: {}\n", "null": "    options:\n"} {
		o := sensorOptions(t, block)
		if !o.IsZero() {
			t.Errorf("%s: not IsZero", name)
		}
		got := bmeDefaults()
		if err := o.Decode(&got); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if got.Mode != "normal" || got.Filter != 4 || got.Settle != 10*time.Millisecond {
			t.Errorf("%s: defaults lost: %+v", name, got)
		}
	}
	var zero Options
	if err := zero.Decode(&struct{}{}); err != nil {
		t.Errorf("zero Options: %v", err)
	}
}

func TestOptionsStrict(t *testing.T) {
	o := sensorOptions(t, `    options:
      mode: forced
      fliter: 2
      settle: 5 s
      channels:
        - {gain: high}
      labels: [a]
`)
	got := bmeDefaults()
	err := o.Decode(&got)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`o.yaml:7:7: sensors[0].options.fliter: unknown key (did you mean "filter"?)`,
		`o.yaml:8:15: sensors[0].options.settle: not a duration`,
		`o.yaml:10:18: sensors[0].options.channels[0].gain: expected a number, got a string`,
		`o.yaml:11:15: sensors[0].options.labels: expected a mapping, got a list`,
	}
	wantErrors(t, err, want)
}

func TestOptionsDecodeNeedsPointer(t *testing.T) {
	o := sensorOptions(t, "    options: {mode: forced}\n")
	if err := o.Decode(bmeDefaults()); err == nil {
		t.Error("decoding into a non-pointer succeeded")
	}
}

func TestOptionsAnchorsAcrossTheFile(t *testing.T) {
	src := `device: {id: t, platform: sim}
sensors:
  - name: a
    kind: ads1115
    options: &ads {filter: 8, mode: forced}
  - name: b
    kind: ads1115
    options:
      <<: *ads
      mode: sleep
`
	c, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := bmeDefaults()
	if err := c.Sensors[1].Options.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Filter != 8 || got.Mode != "sleep" {
		t.Errorf("merge: %+v", got)
	}
}

func TestPluginOptions(t *testing.T) {
	src := "device: {id: t, platform: sim}\nplugins:\n  notes:\n    dir: /tmp/n\n    bogus: 1\n"
	c, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		Dir string `yaml:"dir"`
	}
	err = c.Plugins["notes"].Decode(&opts)
	if err == nil || !strings.HasPrefix(err.Error(), "p.yaml:5:5: plugins.notes.bogus: unknown key") {
		t.Errorf("got %v", err)
	}
	if opts.Dir != "/tmp/n" {
		t.Errorf("dir = %q", opts.Dir)
	}
}

func TestOptionsDuplicateKeyAtLoad(t *testing.T) {
	// A duplicate key in an options block is a YAML mistake, reported when
	// the board loads, not later when the kind decodes it.
	_, err := Parse("d.yaml", []byte("device: {id: t, platform: sim}\nsensors:\n  - name: a\n    kind: k\n    options:\n      x: 1\n      x: 2\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "d.yaml:7:7: sensors[0].options.x: duplicate key (first at line 6)") {
		t.Errorf("got %v", err)
	}
}

// A kind's own checks after decoding point at the key they are about.
func TestOptionsErrorf(t *testing.T) {
	o := sensorOptions(t, "    options:\n      mode: sleepy\n      channels:\n        - {gain: 1}\n        - {gain: 64}\n")
	for _, tc := range []struct{ key, want string }{
		{"mode", `o.yaml:6:13: sensors[0].options.mode: "sleepy" is not a mode`},
		{"channels[1].gain", `o.yaml:9:18: sensors[0].options.channels[1].gain: "sleepy" is not a mode`},
		{"filter", `o.yaml:6:7: sensors[0].options.filter: "sleepy" is not a mode`}, // not written: the block
	} {
		err := o.Errorf(tc.key, "%q is not a mode", "sleepy")
		var be *Error
		if !errors.As(err, &be) || err.Error() != tc.want {
			t.Errorf("Errorf(%s) = %v, want %s", tc.key, err, tc.want)
		}
	}
	if err := (Options{}).Errorf("mode", "bad"); err == nil || err.Error() != "options.mode: bad" {
		t.Errorf("without a block: %v", err)
	}
}

type withRetired struct {
	Inner innerRetired `yaml:"inner"`
}

func (*withRetired) RetiredKeys() map[string]string {
	return map[string]string{"templates": "removed in release 2; use model"}
}

type innerRetired struct {
	Model string `yaml:"model"`
}

func (innerRetired) RetiredKeys() map[string]string {
	return map[string]string{"names": "removed with templates"}
}

// A retired key fails with its reason at its position, whatever its value
// (null too, and never quoted), at the top of the block and in a nested
// struct; a typo is still an unknown key.
func TestOptionsRetiredKeys(t *testing.T) {
	o := sensorOptions(t, `    options:
      templates:
      inner: {model: x, names: [SECRET]}
      templtes: 1
`)
	var got withRetired
	err := o.Decode(&got)
	wantErrors(t, err, []string{
		`o.yaml:6:7: sensors[0].options.templates: removed in release 2; use model`,
		`o.yaml:7:25: sensors[0].options.inner.names: removed with templates`,
		`o.yaml:8:7: sensors[0].options.templtes: unknown key`,
	})
	if err != nil && strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("the error quotes a value: %v", err)
	}
}
