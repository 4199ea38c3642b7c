package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
)

// The files a board names become attachments and the attached board names
// them by paths relative to its own folder, so it loads wherever they are
// unpacked; secrets, words and missing files stay as written.
func TestBoardFilesAttachWhatTheBoardNames(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "speech", "hello.wav"), "RIFF-relative")
	write(filepath.Join(elsewhere, "skill.md"), "absolute")
	write(filepath.Join(dir, "builtin"), "a file named like a word")
	write(filepath.Join(dir, "ca.pem"), "secret")
	boardYAML := `device: {id: bot, platform: sim}
data_dir: state
mqtt: {broker: embedded, tls: {ca: ca.pem}}
sensors:
  - name: mic
    kind: mic
    options:
      source: sim
      sim:
        utterances:
          - {file: speech/hello.wav, at: 1s}
          - {file: ./speech/hello.wav, at: 2s}
          - {file: speech/missing.wav, at: 3s}
      wakeword: {model: builtin}
plugins:
  llm:
    skills: [{name: s, description: d, file: ` + filepath.Join(elsewhere, "skill.md") + `}]
`
	cfg, err := board.Parse(filepath.Join(dir, "board.yaml"), []byte(boardYAML))
	if err != nil {
		t.Fatal(err)
	}
	y, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	out, files, err := BoardFiles(y, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name+"<-"+strings.TrimPrefix(strings.TrimPrefix(f.Path, dir), elsewhere)+"@"+f.Key)
	}
	if got, want := strings.Join(names, " "), "files/1/hello.wav<-/speech/hello.wav@sensors[0].options.sim.utterances[0].file files/2/skill.md<-/skill.md@plugins.llm.skills[0].file"; got != want {
		t.Fatalf("attached %s, want %s", got, want)
	}
	s := string(out)
	for _, want := range []string{"file: files/1/hello.wav", "file: speech/missing.wav", "model: builtin", "file: files/2/skill.md"} {
		if !strings.Contains(s, want) {
			t.Errorf("the attached board lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "files/1/hello.wav") != 2 || !strings.Contains(s, "ca.pem") {
		t.Errorf("one file, two mentions, one attachment; the CA stays as written:\n%s", s)
	}
	// It loads in another folder, with the same settings besides the paths.
	again, err := board.Parse(filepath.Join(t.TempDir(), "board.yaml"), out)
	if err != nil {
		t.Fatalf("the attached board does not load: %v\n%s", err, s)
	}
	if len(again.Sensors) != 1 || again.Sensors[0].Name != "mic" || again.Device.ID != "bot" {
		t.Fatalf("the attached board lost settings:\n%s", s)
	}
	// Without files the board is left byte for byte.
	plain := []byte("device: {id: bot, platform: sim}\n")
	if same, files, err := BoardFiles(plain, dir); err != nil || len(files) != 0 || string(same) != string(plain) {
		t.Fatalf("a board without files changed: %q %v %v", same, files, err)
	}
}
