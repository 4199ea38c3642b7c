package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/record/replay"
	"github.com/edgeagent/edgeagent/tools"
)

// A board file over the recorder's attach_max_bytes is carried by its
// SHA-256: the replay takes the file where it was recorded while it is the
// same, and refuses to start, naming the board setting (never the file's
// bytes), once it changed or is gone. A file the recording carries
// replays as recorded whatever became of the original.
func TestFilesOverTheLimitReplayByHash(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.md"), filepath.Join(dir, "big.md")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const smallText = "Switch the headlight on when it is dark."
	write(small, smallText)
	write(big, strings.Repeat("A long guide to the pump. ", 20)) // 520 bytes
	n, file, stop := recordBoard(t, dir, `device: {id: files, platform: sim}
data_dir: state
llm: {enabled: false}
record: {attach_max_bytes: 256}
plugins:
  mqtt: {enabled: false}
  llm:
    skills:
      - {name: lights, description: when to switch the lights, file: small.md}
      - {name: pump, description: the pump, file: big.md}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, "files.mcap")
	if _, err := n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}); err != nil {
		t.Fatal(err)
	}
	// The recorder's status names it too, as long as it records.
	rec, ok := node.Find[interface {
		HandOver() *record.Continuation
		Status() any
	}](n)
	if !ok {
		t.Fatal("no recorder")
	}
	waittest.For(t, "the recorder's status naming the file not attached", func() bool {
		b, _ := json.Marshal(rec.Status())
		return strings.Contains(string(b), `"files_not_attached":["plugins.llm.skills[1].file"]`)
	})
	stop()
	run := func() (*replay.Report, string, error) {
		out := filepath.Join(t.TempDir(), "again.mcap")
		rep, err := replay.Run(context.Background(), file, replay.Options{Out: out})
		return rep, out, err
	}

	// Both files where they were: identical.
	if rep, _, err := run(); err != nil || rep.Diverged() || rep.Counts["tool_call"] != [2]int{1, 1} {
		t.Fatalf("in place: %v %+v", err, rep)
	}
	// The attached file changed since: the replay runs the recorded one
	// (its own recording carries what it ran with).
	write(small, "Never switch anything.")
	rep, out, err := run()
	if err != nil || rep.Diverged() {
		t.Fatalf("the attached file changed: %v %+v", err, rep)
	}
	in, err := recording.Read(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(in.Attachments["files/1/small.md"]); got != smallText {
		t.Fatalf("the replay ran with %q, want the recorded %q", got, smallText)
	}
	// The big file changed, then gone: refused, with the setting named.
	write(big, strings.Repeat("Another guide entirely. ", 22))
	for _, why := range []string{"has changed since", "neither where it was recorded from nor under the current folder"} {
		_, _, err := run()
		if err == nil || !strings.Contains(err.Error(), "plugins.llm.skills[1].file (files/2/big.md, 520 bytes)") ||
			!strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "guide") || strings.Contains(err.Error(), big) {
			t.Fatalf("want a refusal naming the setting (%s), got: %v", why, err)
		}
		if err := os.Remove(big); err != nil && !strings.HasPrefix(why, "neither") {
			t.Fatal(err)
		}
	}
	// The same file in another checkout of the tree, replayed from its
	// folder: found by the tail of the recorded path, by its hash.
	checkout := t.TempDir()
	write(filepath.Join(checkout, "big.md"), strings.Repeat("A long guide to the pump. ", 20))
	t.Chdir(checkout)
	if rep, _, err := run(); err != nil || rep.Diverged() {
		t.Fatalf("the file in another checkout: %v %+v", err, rep)
	}
	// The same file back where it was: it replays again.
	write(big, strings.Repeat("A long guide to the pump. ", 20))
	t.Chdir(t.TempDir())
	if rep, _, err := run(); err != nil || rep.Diverged() {
		t.Fatalf("the file restored: %v %+v", err, rep)
	}
}
