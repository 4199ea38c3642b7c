package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCheck(t *testing.T, board string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"check", board, "--log-level", "error"})
	defer rootCmd.SetArgs(nil)
	err := rootCmd.Execute()
	return out.String(), err
}

// TestCheckCopiedSimBoard: the sim board's sample speech is named relative
// to its folder. A copy elsewhere fails check (it used to pass, then the
// mic failed in a loop at run time); the same copy beside the files it
// names passes.
func TestCheckCopiedSimBoard(t *testing.T) {
	sim, err := os.ReadFile("../../board-configs/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Its own data dir and ports, so it never meets a running agent's.
	sim = bytes.ReplaceAll(sim, []byte("listen: 127.0.0.1:1883"), []byte("listen: 127.0.0.1:0"))
	lone := filepath.Join(t.TempDir(), "copy.yaml")
	if err := os.WriteFile(lone, sim, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = runCheck(t, lone)
	if err == nil || !strings.Contains(err.Error(), "sim.utterances[0].file: no such file (relative paths are read from the board file's folder, "+filepath.Dir(lone)+")") {
		t.Fatalf("a copy without its files: %v", err)
	}
	if strings.Contains(err.Error(), "enrolled_a.wav") {
		t.Fatalf("the error quotes the path from the file: %v", err)
	}

	root := t.TempDir()
	abs, _ := filepath.Abs("../../sensors")
	if err := os.Symlink(abs, filepath.Join(root, "sensors")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "boards"), 0o755); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(root, "boards", "copy.yaml")
	if err := os.WriteFile(beside, sim, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCheck(t, beside); err != nil || !strings.Contains(out, "ok (sim") {
		t.Fatalf("a copy beside its files: %v\n%s", err, out)
	}
}

// TestCheckFeatureTools: the engine's scoped toolsets and skill guides
// naming tools nobody provides fail check at their keys.
func TestCheckFeatureTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.md"), []byte("# lamp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	board := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(board, []byte(`device: {id: feat, platform: sim}
llm: {enabled: false}
plugins:
  mqtt: {enabled: false}
  llm:
    features:
      - {name: lights, description: the lights, tools: [lamp.*, lmap.*]}
    skills:
      - {name: s, description: d, file: s.md, tools: [lamp.st]}
actuators:
  - {name: lamp, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCheck(t, board)
	want := []string{
		board + `:7:65: plugins.llm.features[0].tools[1]: no loaded tool matches this name or pattern (did you mean "lamp.*"?)`,
		board + `:9:55: plugins.llm.skills[0].tools[0]: no loaded tool matches this name or pattern (did you mean "lamp.set"?)`,
	}
	if err == nil || err.Error() != strings.Join(want, "\n") {
		t.Fatalf("got %v\nwant %s", err, strings.Join(want, "\n"))
	}
}

// TestCheckRefusesEnrolmentKeys: a board written when the wake word could
// be enrolled fails check at each key enrolment had, saying it was removed
// and quoting none of the values.
func TestCheckRefusesEnrolmentKeys(t *testing.T) {
	board := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(board, []byte(`device: {id: enrol, platform: sim}
llm: {enabled: false}
plugins: {mqtt: {enabled: false}}
sensors:
  - name: mic
    kind: mic
    options:
      source: sim
      wakeword:
        model: builtin
        templates: kitchen_takes
        names: [hey_toaster]
        threshold: 0.85
`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runCheck(t, board)
	if err == nil {
		t.Fatal("check passed")
	}
	for _, want := range []string{
		"b.yaml:11:9: sensors[0].options.wakeword.templates: enrolled templates were removed",
		"b.yaml:12:9: sensors[0].options.wakeword.names: enrolled templates were removed",
		"b.yaml:13:9: sensors[0].options.wakeword.threshold: enrolled templates were removed",
		"wakeword.model_threshold",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	for _, v := range []string{"kitchen_takes", "hey_toaster", "0.85"} {
		if strings.Contains(err.Error(), v) {
			t.Errorf("the error quotes %q: %v", v, err)
		}
	}
}
