package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

const scenarioDir = "../../testdata/scenarios"

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs(args)
	defer rootCmd.SetArgs(nil)
	defer rootCmd.SetOut(nil)
	err := rootCmd.Execute()
	return out.String(), err
}

func TestRecordingInfoAndExport(t *testing.T) {
	f := filepath.Join(scenarioDir, "estop.mcap")
	out, err := run(t, "recording", "info", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"complete", "scenario-estop (sim)", "dropped 0", "/events/estop", "edgeagent.Event", "attached  board.yaml"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "recording", "export", f, "--channel", "/obs/pir.motion", "--format", "csv", "--out", "")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || lines[0] != "time,seq,source,value" || !strings.Contains(lines[1], ",pir.motion,") {
		t.Errorf("csv:\n%s", out)
	}
	out, err = run(t, "recording", "export", f, "--channel", "/decisions", "--format", "jsonl")
	if err != nil || !strings.HasPrefix(out, `{"time":"`) || !strings.Contains(out, `"topic":"/decisions"`) {
		t.Errorf("jsonl: %v\n%s", err, out)
	}
	if _, err := run(t, "recording", "export", f, "--channel", "/nope", "--format", "csv"); err == nil || !strings.Contains(err.Error(), `no channel "/nope"`) {
		t.Errorf("unknown channel: %v", err)
	}
	if _, err := run(t, "recording", "export", f, "--channel", "/decisions", "--format", "xml"); err == nil {
		t.Error("--format xml accepted")
	}
}
