package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/worldmodel"
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

// `recording info` lists the board's files: the setting that names each,
// its size, and whether the recording carries it or only its SHA-256.
func TestRecordingInfoListsBoardFiles(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "labels.txt"), filepath.Join(dir, "model.onnx")
	if err := os.WriteFile(small, []byte("cat\ndog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, bytes.Repeat([]byte{7}, 3000), 0o644); err != nil {
		t.Fatal(err)
	}
	y, files, err := record.BoardFiles([]byte("sensors:\n  - {name: cam, options: {labels: labels.txt, model: model.onnx}}\n"), dir)
	if err != nil || len(files) != 2 {
		t.Fatalf("%v %v", files, err)
	}
	path := recordItems(t, record.Header{Meta: map[string]string{}, Board: y, Files: files, AttachMax: 1024}, func(*worldmodel.Model) {})
	out, err := run(t, "recording", "info", path)
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"attached board.yaml board files:",
		"files/1/labels.txt sensors[0].options.labels 8 B attached from " + small,
		"files/2/model.onnx sensors[0].options.model 2.9 KiB sha256 only (48c187767ddd) from " + big + " (over the 1.0 KiB of files a recording carries)"} {
		if !strings.Contains(words, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
}
