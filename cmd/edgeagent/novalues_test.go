package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/board/boardtest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/toolcheck"
	"github.com/edgeagent/edgeagent/tools"
)

// Errors about a board name keys and positions, never a value from it (a
// device path, a secret): a refusal of config.reload travels to whoever
// sent it. board's own test holds the loader to it; these hold what
// `check` and config.reload do beyond the loader: build every sensor and
// plugin, whose kinds check their options.

// checkDoc is `edgeagent check` on a board's text: load, build, and the
// tools it names.
func checkDoc(file string, doc []byte) error {
	cfg, err := board.Parse(file, doc)
	if err != nil {
		return err
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: filepath.Dir(file), ConfigFile: file, NoStore: true})
	if err != nil {
		return err
	}
	defer n.Close()
	return toolcheck.Check(n)
}

// TestCheckNeverQuotesValues: the sim board's and a Pi's every value
// replaced in turn by a marker; no error of `check` repeats it.
func TestCheckNeverQuotesValues(t *testing.T) {
	// A string and an integer (which a float field takes too): the
	// loader's own test tries the other markers' forms. Each board builds
	// a node per mutant (~0.1 s under -race): the two run side by side.
	for _, f := range []string{"../../board-configs/sim.yaml", "../../board-configs/rpi5.yaml"} {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			boardtest.Walk(t, []string{f}, boardtest.Markers[:2], checkDoc)
		})
	}
}

// sentinel is written in the value of each field below.
const sentinel = "SENTINEL-7f3a"

// sentinelBoards put the sentinel in fields the shipped boards leave out
// or that only a kind checks: each must be refused, naming the key.
var sentinelBoards = []struct{ block, key string }{
	{"sensors: [{name: s, kind: S}]", "sensors[0].kind"},
	{"sensors: [{name: s, kind: pir, pins: {signal: \"sim:1\"}, priority: S}]", "sensors[0].priority"},
	{"sensors: [{name: s, kind: pir, pins: {signal: \"sim:1\"}, thresholds: [{quantity: motion, above: 1, priority: S}]}]", "sensors[0].thresholds[0].priority"},
	{"sensors: [{name: s, kind: pir, pins: {signal: \"sim:1\"}, options: {pull: S}}]", "sensors[0].options.pull"},
	{"sensors: [{name: s, kind: button, pins: {signal: \"sim:1\"}, options: {event: S}}]", "sensors[0].options.event"},
	{"sensors: [{name: s, kind: camera, options: {source: S}}]", "sensors[0].options.source"},
	{"sensors: [{name: s, kind: camera, options: {format: S}}]", "sensors[0].options.format"},
	{"sensors: [{name: s, kind: camera, options: {source: gocv, device: S}}]", "sensors[0].options"},
	{"sensors: [{name: s, kind: camera, options: {motion: {masks: [S]}}}]", "sensors[0].options.motion.masks[0]"},
	{"sensors: [{name: s, kind: mic, options: {source: S}}]", "sensors[0].options.source"},
	{"sensors: [{name: s, kind: mic, options: {source: sim, sim: {noise: S}}}]", "sensors[0].options.sim.noise"},
	{"sensors: [{name: s, kind: mic, options: {source: exec, command: [x], format: {encoding: S}}}]", "sensors[0].options.format.encoding"},
	{"sensors: [{name: s, kind: mic, options: {source: sim, loud_priority: S}}]", "sensors[0].options.loud_priority"},
	{"sensors: [{name: s, kind: mic, options: {source: sim, wakeword: {detector: S}}}]", "sensors[0].options.wakeword.detector"},
	{"sensors: [{name: s, kind: mic, options: {source: sim, half_duplex: {mode: S}}}]", "sensors[0].options.half_duplex.mode"},
	{"sensors: [{name: s, kind: ads1115, options: {channels: [{name: a, input: S, range: 4.096}]}}]", "sensors[0].options.channels[0].input"},
	{"sensors: [{name: s, kind: ads1115, options: {channels: [{name: S, input: \"0\", range: 4.096}]}}]", "sensors[0].options.channels[0].name"},
	{"sensors: [{name: s, kind: ads1115, options: {sim: {inputs: {S: {base: 1}}}}}]", "sensors[0].options.sim.inputs"},
	{"sensors: [{name: s, kind: bh1750, options: {resolution: S}}]", "sensors[0].options.resolution"},
	{"sensors: [{name: s, kind: bh1750, options: {sim: {faults: [{mode: S, for: 1s}]}}}]", "sensors[0].options.sim.faults[0].mode"},
	{"sensors: [{name: s, kind: generic, address: 0x48, options: {readings: [{name: t, length: 2, order: S}]}}]", "sensors[0].options.readings[0].order"},
	{"sensors: [{name: s, kind: generic, address: 0x48, options: {readings: [{name: t, length: 1}], sim: {readings: {S: {base: 1}}}}}]", "sensors[0].options.sim.readings"},
	{"sensors: [{name: s, kind: mqtt, options: {broker: \"S://h:1\", topics: [{topic: a, readings: [{name: v, json: v}]}]}}]", "sensors[0].options.broker"},
	{"sensors: [{name: s, kind: mqtt, options: {topics: [{topic: \"a/S#\", readings: [{name: v, json: v}]}]}}]", "sensors[0].options.topics[0]"},
	{"sensors: [{name: s, kind: mqtt, options: {topics: [{topic: a, readings: [{name: v, json: \"S[x\"}]}]}}]", "sensors[0].options.topics[0]"},
	{"sensors: [{name: s, kind: mqtt, options: {topics: [{topic: a, readings: [{name: v, regexp: \"(S\"}]}]}}]", "sensors[0].options.topics[0]"},
	{"sensors: [{name: s, kind: mqtt, options: {topics: [{topic: a, events: [{event: S}]}]}}]", "sensors[0].options.topics[0]"},
	{"actuators: [{name: a, kind: S, pins: {pin: \"sim:1\"}}]", "actuators[0].kind"},
	{"actuators: [{name: a, kind: led, pins: {pin: \"sim:1\"}, initial: S}]", "actuators[0].initial"},
	{"actuators: [{name: a, kind: servo, pins: {pin: \"sim:1\"}, limits: {on_violation: S}}]", "actuators[0].limits.on_violation"},
	{"plugins: {S: {}}", "plugins"},
	{"plugins: {say: {sink: S}}", "plugins.say.sink"},
	{"plugins: {say: {engine: S}}", "plugins.say.engine"},
	{"dashboard: {users: [{name: a, password_bcrypt: x, role: S}]}", "dashboard.users[0].role"},
	{"agent: {goals: [{name: S, source: a.b}]}", "agent.goals[0]"},
}

// TestSentinelValuesNeverQuoted: each sentinel board is refused by
// `check` and by config.reload, naming the key, never the sentinel.
func TestSentinelValuesNeverQuoted(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.yaml")
	base := "device: {id: t, platform: sim}\nmqtt: {listen: 127.0.0.1:0}\nllm: {enabled: false}\n"
	if err := os.WriteFile(sim, []byte(base), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(sim)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, ConfigFile: sim, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, c := range sentinelBoards {
		doc := base + strings.ReplaceAll(c.block, "S", sentinel) + "\n"
		file := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		_, checkErr := runCheck(t, file)
		params, _ := json.Marshal(map[string]string{"yaml": doc})
		_, reloadErr := n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "config.reload", Params: params})
		for what, err := range map[string]error{"check": checkErr, "config.reload": reloadErr} {
			switch {
			case err == nil:
				t.Errorf("%s accepted %s", what, c.block)
			case strings.Contains(err.Error(), sentinel) || strings.Contains(err.Error(), "7f3a"):
				t.Errorf("%s quotes the value of %s: %v", what, c.key, err)
			case !strings.Contains(err.Error(), c.key):
				t.Errorf("%s does not name %s: %v", what, c.key, err)
			}
		}
	}
}
