package actuators_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/store"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/plugin/actuators"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	_ "github.com/edgeagent/edgeagent/tools/actuator/example/dimmer" // the one import line of a new kind
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// TestExampleKind proves docs/add-an-actuator.md: the dimmer kind is one
// folder and the import line above, and with nothing else the board checks
// its blocks (pins, limits, options, initial — with positions), fills its
// defaults, and the actuator set builds it with its skill and its Home
// Assistant hint.
func TestExampleKind(t *testing.T) {
	for _, tc := range []struct{ block, want string }{
		{"{name: desk, kind: dimmer}", "t.yaml:3:5: actuators[0].pins.pin: required for kind dimmer"},
		{"{name: desk, kind: dimmer, pins: {pin: a}, initial: full}", `t.yaml:3:57: actuators[0].initial: "full": expected a brightness from 0 to 1`},
	} {
		_, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nactuators:\n  - "+tc.block+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.block, err, tc.want)
		}
	}

	// Its options and its own limit key are decoded by the kind, strictly,
	// with positions; a limit key of another kind is unknown.
	quiet := slog.New(slog.DiscardHandler)
	for _, tc := range []struct{ block, want string }{
		{"{name: desk, kind: dimmer, pins: {pin: \"sim:12\"}, options: {gama: 2}}", `t.yaml:3:65: actuators[0].options.gama: unknown key (did you mean "gamma"?)`},
		{"{name: desk, kind: dimmer, pins: {pin: \"sim:12\"}, limits: {max_angle: 90}}", `t.yaml:3:64: actuators[0].limits.max_angle: unknown key (known keys: rate_limit, on_violation, max_duty)`},
		{"{name: desk, kind: dimmer, pins: {pin: \"sim:12\"}, limits: {max_duty: 2}}", `t.yaml:3:74: actuators[0].limits.max_duty: outside (0, 1]`},
	} {
		c, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\nactuators:\n  - "+tc.block+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: actuators.Configs(c.Actuators), Log: quiet})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s…", tc.block, err, tc.want)
		}
	}

	src := "device: {id: t, platform: sim}\nactuators:\n  - {name: desk, kind: dimmer, pins: {pin: \"sim:12\"}, limits: {max_duty: 0.5}, options: {gamma: 2}, initial: \"0.5\"}\n"
	c, err := board.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	set, err := actuator.New(actuator.Options{Store: store.NewMemory(), Platform: "sim", Actuators: actuators.Configs(c.Actuators), Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = set.Stop(ctx) }()
	sim := set.Adaptor().(*simadaptor.Adaptor)
	if v, _ := sim.PWM("sim:12"); v != 64 { // 0.5² = 0.25 of 255
		t.Errorf("initial duty %d, want 64", v)
	}
	reg, err := tools.NewRegistry(tools.Options{Log: quiet, Grants: map[string][]string{"mqtt": {"actuate"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, tl := range set.Tools() {
		if err := reg.Register("actuators", tl); err != nil {
			t.Fatal(err)
		}
	}
	spec, err := reg.Resolve("desk.set")
	if err != nil {
		t.Fatal(err)
	}
	if e := spec.Entity; e == nil || e.Platform != "number" || e.Name != "desk" || e.Param != "level" || e.Max != 1 {
		t.Errorf("entity hint %+v", spec.Entity)
	}
	res, err := reg.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "desk.set", Params: json.RawMessage(`{"level":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Full brightness, capped by the envelope: max_duty 0.5.
	if v, _ := sim.PWM("sim:12"); v != 128 {
		t.Errorf("duty %d after level 1, want 128 (max_duty 0.5); result %+v", v, res)
	}
	if _, err := reg.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "desk.set", Params: json.RawMessage(`{"level":2}`)}); err == nil {
		t.Error("level 2 passed the schema")
	}
}
