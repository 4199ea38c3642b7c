package node

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
)

// config.reload {yaml, save} writes an accepted config to the board file
// the node was started from, keeping the old one as .bak; a refused config
// and a node without a board file leave every file as it was.
func TestReloadSaves(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "board.yaml")
	const before = "# the lab robot\ndevice: {id: bot, platform: sim}\nplugins: {mqtt: {enabled: false}}\n"
	if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	n, err := New(cfg, Options{Log: quiet, ConfigDir: dir, ConfigFile: file, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	reload := func(n *Node, params string) (tools.Result, error) {
		return n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "config.reload", Params: json.RawMessage(params)})
	}
	accepted := make(chan Reload, 1)
	go func() { accepted <- <-n.ReloadRequests() }()

	// Refused: nothing written.
	if _, err := reload(n, `{"yaml":"device: {id: bot, platform: mars}\n","save":true}`); tools.CodeOf(err) != tools.CodeRefused {
		t.Fatalf("a bad config: %v", err)
	}
	if _, err := os.Stat(file + ".bak"); !os.IsNotExist(err) {
		t.Fatal("a refused config was saved")
	}
	if _, err := reload(n, `{"path":"board.yaml","save":true}`); tools.CodeOf(err) != tools.CodeInvalidParams {
		t.Fatalf("save with a path: %v", err)
	}
	// Accepted: written, backed up, handed on with the file.
	const after = "# the lab robot, renamed\ndevice: {id: bot2, platform: sim}\nplugins: {mqtt: {enabled: false}}\n"
	res, err := reload(n, `{"yaml":`+jsonString(after)+`,"save":true}`)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Value.(map[string]any); v["saved"] != file {
		t.Fatalf("result %v", v)
	}
	if got, _ := os.ReadFile(file); string(got) != after {
		t.Fatalf("board file %q", got)
	}
	if got, _ := os.ReadFile(file + ".bak"); string(got) != before {
		t.Fatalf("backup %q", got)
	}
	if r := <-accepted; r.Config.Device.ID != "bot2" || r.File != file {
		t.Fatalf("handed on %s with file %q", r.Config.Device.ID, r.File)
	}
	// A reload by path runs that file: it is what later saves write.
	other := filepath.Join(dir, "other.yaml")
	if err := os.WriteFile(other, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() { accepted <- <-n.ReloadRequests() }()
	if _, err := reload(n, `{"path":"other.yaml"}`); err != nil {
		t.Fatal(err)
	}
	if r := <-accepted; filepath.Base(r.File) != "other.yaml" {
		t.Fatalf("a reload by path hands on file %q", r.File)
	}

	// A node that did not come from a file has none to save to.
	m, err := New(cfg, Options{Log: quiet, ConfigDir: dir, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := reload(m, `{"yaml":"device: {id: bot, platform: sim}\n","save":true}`); tools.CodeOf(err) != tools.CodeRefused ||
		!strings.Contains(err.Error(), "not started from a board file") {
		t.Fatalf("save without a board file: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
