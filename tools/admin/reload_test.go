package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
)

var quiet = slog.New(slog.DiscardHandler)

// registry holds the admin tools over c, called as the CLI calls them.
func registry(t *testing.T, c Config) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(tools.Options{Grants: map[string][]string{"cli": {"*"}}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range Tools(c) {
		if err := r.Register("node", tool); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// noPlugins: these tests are about the board file.
type noPlugins struct{}

func (noPlugins) PluginStates() []PluginState                  { return nil }
func (noPlugins) LoadRegistered(context.Context, string) error { return nil }
func (noPlugins) UnloadPlugin(context.Context, string) error   { return nil }

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
	reloads := make(chan Reload)
	check := func(cfg *board.Config, _ string) error {
		if cfg.Device.ID == "unbuildable" {
			return errors.New("no such sensor kind")
		}
		return nil
	}
	fromFile := registry(t, Config{Plugins: noPlugins{}, Check: check, Dir: dir, File: file, Reloads: reloads, Log: quiet})
	reload := func(r *tools.Registry, params string) (tools.Result, error) {
		return r.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "config.reload", Params: json.RawMessage(params)})
	}
	accepted := make(chan Reload, 1)
	go func() { accepted <- <-reloads }()

	// Refused: nothing written.
	if _, err := reload(fromFile, `{"yaml":"device: {id: bot, platform: mars}\n","save":true}`); tools.CodeOf(err) != tools.CodeRefused {
		t.Fatalf("a bad config: %v", err)
	}
	// What the board's validation passes, building the agent (Check) may
	// still refuse.
	if _, err := reload(fromFile, `{"yaml":"device: {id: unbuildable, platform: sim}\n","save":true}`); tools.CodeOf(err) != tools.CodeRefused ||
		!strings.Contains(err.Error(), "no such sensor kind") {
		t.Fatalf("a config Check refuses: %v", err)
	}
	if _, err := os.Stat(file + ".bak"); !os.IsNotExist(err) {
		t.Fatal("a refused config was saved")
	}
	if _, err := reload(fromFile, `{"path":"board.yaml","save":true}`); tools.CodeOf(err) != tools.CodeInvalidParams {
		t.Fatalf("save with a path: %v", err)
	}
	// Accepted: written, backed up, handed on with the file.
	const after = "# the lab robot, renamed\ndevice: {id: bot2, platform: sim}\nplugins: {mqtt: {enabled: false}}\n"
	res, err := reload(fromFile, `{"yaml":`+jsonString(after)+`,"save":true}`)
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
	go func() { accepted <- <-reloads }()
	if _, err := reload(fromFile, `{"path":"other.yaml"}`); err != nil {
		t.Fatal(err)
	}
	if r := <-accepted; filepath.Base(r.File) != "other.yaml" {
		t.Fatalf("a reload by path hands on file %q", r.File)
	}

	// A node that did not come from a file has none to save to.
	noFile := registry(t, Config{Plugins: noPlugins{}, Check: check, Dir: dir, Reloads: reloads, Log: quiet})
	if _, err := reload(noFile, `{"yaml":"device: {id: bot, platform: sim}\n","save":true}`); tools.CodeOf(err) != tools.CodeRefused ||
		!strings.Contains(err.Error(), "not started from a board file") {
		t.Fatalf("save without a board file: %v", err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
