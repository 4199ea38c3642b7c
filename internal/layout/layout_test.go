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
}{
	{"cmd/...", []string{"*"}}, // wiring only
	// Programs the scripts run: a fake Wyoming STT server for recording
	// scenarios stands in for Whisper.
	{"scripts/fakestt", []string{"sensors/mic/wyoming/wyomingtest"}},
	// The speech frontend's tools: what it adds to a binary and a process,
	// embeddings of WAV files for the check against a pretrained head.
	{"scripts/speechembed/...", []string{"sensors/mic/speechembed", "sensors/mic/audio"}},
	{"board", nil},
	{"clock", nil},
	{"worldmodel", nil},
	{"hooks", nil},
	{"store", nil},
	{"sdnotify", nil},
	{"internal/...", nil},
	{"llm", nil},
	{"llm/llmtest", []string{"llm"}},
	{"llm/local/...", []string{"llm", "clock"}},
	{"tools", []string{"hooks", "worldmodel"}},
	{"tools/toolstest", []string{"tools"}},
	// The admin tools change the node through the narrow Config it gives
	// them (its plugins, board file, reload hand-off), never the node.
	{"tools/admin", []string{"tools", "board", "hooks"}},
	{"tools/actuator/...", []string{"tools", "worldmodel", "clock", "hooks", "tools/actuator/..."}},
	{"tools/snapshot", []string{"plugin", "tools", "tools/cameras", "worldmodel", "hooks"}},
	// say speaks through the microphone's audio format, half-duplex gate and
	// Wyoming client (protocols, not drivers) so the wake word hears it
	// muted; it reads its plugin options from the board.
	{"tools/say", []string{"plugin", "tools", "worldmodel", "hooks", "clock", "board", "sensors",
		"sensors/mic/audio", "sensors/mic/duplex", "sensors/mic/wyoming"}},
	{"tools/vision", []string{"plugin", "tools", "tools/cameras", "worldmodel", "hooks", "clock", "llm", "llm/local"}},
	// The camera tools' shared "camera" argument.
	{"tools/cameras", []string{"plugin", "tools"}},
	{"sensors", []string{"worldmodel"}},
	{"sensors/simcurve", nil},
	{"sensors/periphhost", nil},
	{"sensors/mqttsub", []string{"sensors", "worldmodel"}},
	// The node's sensor supervisor: it runs sensors, restarts them on a
	// clock and keeps their health in the world model.
	{"sensors/supervise", []string{"sensors", "worldmodel", "clock"}},
	{"sensors/camera/...", []string{"sensors", "worldmodel", "sensors/camera/..."}},
	// The speech frontend (openWakeWord's mel features and embedding
	// network) is a leaf: the wake-word code builds on it, not it on them.
	{"sensors/mic/speechembed/...", []string{"sensors/mic/speechembed/..."}},
	{"sensors/mic/...", []string{"sensors", "worldmodel", "sensors/mic/..."}},
	{"sensors/i2c/i2ckit/kittest", []string{"sensors", "worldmodel", "board", "node/sensorconf", "sensors/i2c/..."}},
	{"sensors/i2c/...", []string{"sensors", "worldmodel", "sensors/simcurve", "sensors/periphhost", "sensors/i2c/..."}},
	{"sensors/gpio/...", []string{"sensors", "worldmodel", "sensors/simcurve", "sensors/periphhost", "sensors/gpio/..."}},
	{"agent", []string{"hooks", "tools", "worldmodel", "llm"}},
	{"agent/agenttest", []string{"agent", "hooks", "tools", "worldmodel", "llm"}},
	{"mqtt", []string{"agent", "clock", "tools", "worldmodel", "hooks"}},
	{"mqtt/mosquittotest", nil},
	// The decision benchmark builds a sim node per case, as the CLI does.
	{"eval", []string{"agent", "board", "llm", "llm/local", "node", "worldmodel"}},
	// The operator's side of a fleet: MQTT only, no runtime.
	{"fleet", []string{"mqtt", "board"}},
	// The plugin host sees the runtime's parts; adapters see the host and
	// the one part they adapt.
	{"plugin", []string{"agent", "board", "clock", "hooks", "sensors", "store", "tools", "worldmodel"}},
	// The actuators adapter also translates the board's actuator blocks
	// into the actuator package's Config and shows the board the kinds.
	{"plugin/actuators", []string{"plugin", "hooks", "tools", "tools/actuator/...", "worldmodel", "board"}},
	{"plugin/engine", []string{"plugin", "hooks", "agent", "llm", "llm/local", "tools", "worldmodel"}},
	{"plugin/mqttplane", []string{"plugin", "hooks", "mqtt", "board"}},
	// node assembles: it knows the host and the runtime, never a plugin.
	{"node", []string{"agent", "board", "clock", "hooks", "node/sensorconf", "plugin", "sensors", "sensors/supervise", "store", "tools", "tools/admin", "worldmodel"}},
	{"node/sensorconf", []string{"board", "sensors", "worldmodel"}},
	{"node/nodetest", []string{"board", "node"}},
	{"record", []string{"plugin", "hooks", "tools", "worldmodel", "board", "clock"}},
	// The dashboard is a plugin: it sees the host, reads the stream and
	// calls tools as "web"; it never imports a sensor driver or the node.
	{"dashboard", []string{"plugin", "agent", "hooks", "tools", "worldmodel", "board", "clock", "store"}},
	{"record/recording", nil},
	// A replay with --detections detectors builds the board's sensors (as
	// the node does, through sensorconf and the kinds' registry) to run
	// their detectors; it never imports a sensor kind.
	{"record/replay", []string{"board", "clock", "hooks", "node", "node/sensorconf", "record", "record/recording", "sensors", "tools", "worldmodel"}},
}

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
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
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
		var allow []string
		found := false
		for _, r := range rules {
			if match(r.pkg, pkg) {
				allow, found = r.allow, true
				break
			}
		}
		if !found {
			t.Errorf("%s: not in the import rules: add it to rules here and to docs/architecture.md", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			own, ok := strings.CutPrefix(imp, module)
			if !ok || own == pkg {
				continue
			}
			if !allowed(allow, own) {
				t.Errorf("%s imports %s: not allowed (allowed: %v)", pkg, own, allow)
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
