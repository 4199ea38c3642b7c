package layout

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/edgeagent/edgeagent/"

// rules: for each package pattern, the project packages it may import.
// A pattern ending in "/..." matches the package and everything below it.
// Keep in step with the table in docs/architecture.md. Every package of the
// module must match a pattern, so a new package forces a decision here.
var rules = []struct {
	pkg   string
	allow []string
	// tests: what the package's tests may import besides allow, the
	// fakes of what allow names and the package's own subpackages.
	tests []string
}{
	{"cmd/...", []string{"*"}, nil}, // wiring only
	// Programs the scripts run: a fake Wyoming STT server for recording
	// scenarios stands in for Whisper.
	{"scripts/fakestt", []string{"sensors/mic/wyoming/wyomingtest"}, nil},
	{"scripts/fakeollama", []string{"llm/local/ollamatest"}, nil},
	// The speech frontend's tools: what it adds to a binary and a process,
	// embeddings of WAV files for the check against a pretrained head.
	{"scripts/speechembed/...", []string{"sensors/mic/speechembed", "sensors/mic/audio"}, nil},
	// Mutants of a board file for the tests that hold its errors to
	// quoting no value: board's, and cmd/edgeagent's of check and reload.
	{"board/boardtest", nil, nil},
	{"board", nil, nil},
	{"clock", nil, nil},
	{"worldmodel", nil, nil},
	{"hooks", nil, nil},
	{"store", nil, nil},
	{"sdnotify", nil, nil},
	{"internal/...", nil, nil},
	{"llm", nil, nil},
	{"llm/llmtest", []string{"llm"}, nil},
	{"llm/local/...", []string{"llm", "clock"}, nil},
	{"tools", []string{"hooks", "worldmodel"}, []string{"store"}},
	{"tools/toolstest", []string{"tools"}, nil},
	// The admin tools change the node through the narrow Config it gives
	// them (its plugins, board file, reload hand-off), never the node.
	{"tools/admin", []string{"tools", "board", "hooks"}, nil},
	{"tools/actuator/...", []string{"tools", "worldmodel", "clock", "hooks", "tools/actuator/..."}, []string{"store"}},
	{"sensors", []string{"worldmodel"}, nil},
	{"sensors/simcurve", nil, nil},
	{"sensors/periphhost", nil, nil},
	// Its tests subscribe on the embedded broker and on mosquitto.
	{"sensors/mqttsub", []string{"sensors", "worldmodel"}, []string{"mqtt/broker", "mqtt/mosquittotest"}},
	// The node's sensor supervisor: it runs sensors, restarts them on a
	// clock and keeps their health in the world model.
	{"sensors/supervise", []string{"sensors", "worldmodel", "clock"}, nil},
	// A board's sensor block as a kind gets it: the node, the replay's
	// detectors and the kinds' tests convert through it.
	{"sensors/sensorconf", []string{"board", "sensors", "worldmodel"}, nil},
	// What the tests of every sensor kind share: a block parsed by the
	// real board loader, built through the registry, run and recorded.
	{"sensors/sensortest", []string{"sensors", "worldmodel", "board", "sensors/sensorconf"}, nil},
	{"sensors/camera/...", []string{"sensors", "worldmodel", "sensors/camera/..."}, preempts},
	// The speech frontend (openWakeWord's mel features and embedding
	// network) is a leaf: the wake-word code builds on it, not it on them.
	// (Its tests read their WAV clips through the mic's audio package.)
	{"sensors/mic/speechembed/...", []string{"sensors/mic/speechembed/..."}, []string{"sensors/mic/audio"}},
	{"sensors/mic/...", []string{"sensors", "worldmodel", "sensors/mic/..."}, preempts},
	// The training room: workstation tools that make what the runtime
	// loads (the wake-word trainer makes the mic's heads). Only the CLI
	// imports it (no rule lists it), so a robot build leaves it out.
	{"train/...", []string{"sensors/mic/..."}, nil},
	// i2ckit's tests build the board files' every sensor, the GPIO kinds too.
	{"sensors/i2c/i2ckit", []string{"sensors", "worldmodel", "sensors/simcurve", "sensors/periphhost", "sensors/i2c/..."}, []string{"board", "sensors/gpio/..."}},
	{"sensors/i2c/...", []string{"sensors", "worldmodel", "sensors/simcurve", "sensors/periphhost", "sensors/i2c/..."}, []string{"board"}},
	{"sensors/gpio/...", []string{"sensors", "worldmodel", "sensors/simcurve", "sensors/periphhost", "sensors/gpio/..."}, preempts},
	{"agent", []string{"hooks", "tools", "worldmodel", "llm"}, nil},
	{"agent/agenttest", []string{"agent", "hooks", "tools", "worldmodel", "llm"}, nil},
	{"mqtt", []string{"agent", "clock", "tools", "worldmodel", "hooks", "mqtt/broker", "mqtt/fleetproto", "mqtt/hass", "mqtt/pump"}, []string{"board", "store"}},
	// What robots and their requesters agree on: fleet topics, the info
	// and resync payloads, the Resender. Both sides import it.
	{"mqtt/fleetproto", nil, nil},
	// `edgeagent doctor --broker`: a check of any broker, against mosquitto in its tests.
	{"mqtt/brokercheck", []string{"clock"}, []string{"mqtt/mosquittotest"}},
	// The stream's MQTT consumer: a cursor in, publications out.
	{"mqtt/pump", []string{"worldmodel", "clock"}, nil},
	// The embedded broker (mochi) and its door, inbox and ACL; it knows
	// nothing of the plane but the ACL and command topics it is given.
	{"mqtt/broker", []string{"clock"}, nil},
	// Home Assistant's discovery payload: words the skills' entity hints.
	{"mqtt/hass", []string{"tools"}, nil},
	{"mqtt/mosquittotest", nil, nil},
	// The decision benchmark builds a sim node per case, as the CLI does.
	{"eval", []string{"agent", "board", "llm", "llm/local", "node", "worldmodel"}, assembly},
	// The operator's side of a fleet: MQTT only, no runtime.
	{"fleet", []string{"mqtt", "mqtt/fleetproto", "board"}, append([]string{"tools"}, assembly...)},
	// The plugin host sees the runtime's parts; adapters see the host and
	// the one part they adapt.
	{"plugin", []string{"agent", "board", "clock", "hooks", "sensors", "store", "tools", "worldmodel"}, nil},
	// The actuators adapter also translates the board's actuator blocks
	// into the actuator package's Config and shows the board the kinds.
	{"plugin/actuators", []string{"plugin", "hooks", "tools", "tools/actuator/...", "worldmodel", "board"}, []string{"store"}},
	{"plugin/engine", []string{"plugin", "hooks", "agent", "llm", "llm/local", "tools", "worldmodel"}, nil},
	{"plugin/mqttplane", []string{"plugin", "hooks", "mqtt", "mqtt/broker", "mqtt/hass", "board"}, nil},
	{"plugin/adminsock", []string{"plugin", "hooks", "localadmin"}, nil},
	// The local admin socket calls tools; it knows nothing else of the runtime.
	{"localadmin", []string{"tools"}, nil},
	// The plugins that are skills: camera.snapshot, speaker.say,
	// camera.describe, and what the camera ones share.
	{"plugin/snapshot", []string{"plugin", "tools", "plugin/cameras", "worldmodel", "hooks"}, assembly},
	// say speaks through the microphone's audio format, half-duplex gate and
	// Wyoming client (protocols, not drivers) so the wake word hears it
	// muted; it reads its plugin options from the board.
	{"plugin/say", []string{"plugin", "tools", "worldmodel", "hooks", "board", "sensors",
		"sensors/mic/audio", "sensors/mic/duplex", "sensors/mic/wyoming"}, assembly},
	{"plugin/vision", []string{"plugin", "tools", "plugin/cameras", "worldmodel", "hooks", "llm", "llm/local"}, assembly},
	{"plugin/cameras", []string{"plugin", "tools"}, []string{"board"}},
	// node assembles: it knows the host and the runtime, never a plugin.
	// Its tests run the compiled-in plugins, as cmd/edgeagent links them.
	{"node", []string{"agent", "board", "clock", "hooks", "plugin", "sensors", "sensors/sensorconf", "sensors/supervise", "store", "tools", "tools/admin", "worldmodel"},
		append([]string{"llm/...", "mqtt/..."}, assembly...)},
	{"node/nodetest", []string{"board", "node"}, nil},
	// What `check` asks of a built node: the tools its board names.
	{"node/toolcheck", []string{"board", "node", "plugin"}, []string{"hooks", "tools"}},
	{"record", []string{"plugin", "hooks", "tools", "worldmodel", "board", "clock"}, assembly},
	// The dashboard is a plugin: it sees the host, reads the stream and
	// calls tools as "web"; it never imports a sensor driver or the node.
	{"dashboard", []string{"plugin", "agent", "hooks", "tools", "worldmodel", "board", "clock", "store"}, assembly},
	{"record/recording", nil, nil},
	// A replay with --detections detectors builds the board's sensors (as
	// the node does, through sensorconf and the kinds' registry) to run
	// their detectors; it never imports a sensor kind. A reload rebuilds
	// its node with the same store.
	// Its tests also write a wake-word head that never fires, to miss a
	// recorded wake word, and record a model too slow for the cycle's
	// deadline (the fake Ollama).
	{"record/replay", []string{"agent", "board", "clock", "hooks", "node", "sensors/sensorconf", "record", "record/recording", "sensors", "store", "tools", "worldmodel"},
		append(assembly[:len(assembly):len(assembly)], "sensors/mic/wakeword", "llm/local/ollamatest")},
}

// assembly: the tests of a plugin, or of a room that runs a node, build a
// whole sim node as cmd/edgeagent links it: the node, the plugins and the
// kinds (the sensor_*, actuator_* and plugin_* files' imports) with the
// actuators' sim adaptor.
var assembly = []string{"agent", "node", "node/nodetest", "plugin/...", "dashboard", "record",
	"sensors/camera", "sensors/mic", "tools/actuator/..."}

// preempts: a sensor kind's preemption test runs it against a real agent
// loop (agent/agenttest's busy agent), the one test in which a sensor and
// the agent meet outside the node. Listed so that nothing else does.
var preempts = []string{"agent", "agent/agenttest"}

func match(pattern, pkg string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pattern == pkg
}

func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: cannot list packages")
	}
	touchSources(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} | {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		seen++
		var allow, tests []string
		found := false
		for _, r := range rules {
			if match(r.pkg, pkg) {
				allow, tests, found = r.allow, r.tests, true
				break
			}
		}
		if !found {
			t.Errorf("%s: not in the import rules: add it to rules here and to docs/architecture.md", pkg)
			continue
		}
		test := false
		for _, imp := range fields[1:] {
			if imp == "|" { // the test files' imports follow
				test = true
				continue
			}
			own, ok := strings.CutPrefix(imp, module)
			if !ok || own == pkg {
				continue
			}
			switch {
			case !test && !allowed(allow, own):
				t.Errorf("%s imports %s: not allowed (allowed: %v)", pkg, own, allow)
			case test && !allowed(allow, own) && !allowed(tests, own) && !fakeOf(allow, own) && !match(pkg+"/...", own):
				t.Errorf("%s's tests import %s: not allowed (allowed: %v, their fakes, and for tests %v)", pkg, own, allow, tests)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("go list returned only %d packages", seen)
	}
}

// touchSources opens every Go file of the module. go test caches a result
// by the files a test opened, not by what a subprocess (go list) read, so
// without this an import added anywhere would meet a stale "ok".
func touchSources(t *testing.T) {
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// eachSource calls fn with each non-test Go file of the module (below
// ../.., past .git, testdata and node_modules) and its package's path in
// the module.
func eachSource(t *testing.T, fn func(file, pkg string)) {
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel("../..", filepath.Dir(p))
		fn(p, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// allowed: internal/... packages and clock are leaf utilities (they import
// nothing of ours), so every package may use them: code that needs the time
// takes a clock (DESIGN §9a, TestClockRule).
func allowed(allow []string, imp string) bool {
	if match("internal/...", imp) || imp == "clock" {
		return true
	}
	for _, a := range allow {
		if a == "*" || match(a, imp) {
			return true
		}
	}
	return false
}

// fakeOf: imp is the fake of an allowed room (llm/llmtest for llm,
// sensors/i2c/i2csim for sensors/i2c/..., the sim adaptor of
// tools/actuator): a test may use what stands in for hardware or a peer
// beside the interface it already may import.
func fakeOf(allow []string, imp string) bool {
	dir, name := path.Split(imp)
	if !strings.HasSuffix(name, "test") && !strings.HasSuffix(name, "sim") && name != "simadaptor" {
		return false
	}
	return allowed(allow, strings.TrimSuffix(dir, "/"))
}

// The rules themselves must not shadow each other: a broad pattern listed
// before a narrow one would make the narrow one dead.
func TestRulesOrderNarrowFirst(t *testing.T) {
	for i, a := range rules {
		for _, b := range rules[i+1:] {
			if strings.HasSuffix(a.pkg, "/...") && match(a.pkg, strings.TrimSuffix(b.pkg, "/...")) && path.Clean(a.pkg) != path.Clean(b.pkg) {
				t.Errorf("rule %q comes before the narrower %q and hides it", a.pkg, b.pkg)
			}
		}
	}
}
