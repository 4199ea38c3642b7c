package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

const localAdminBoard = `device: {id: local-bot, platform: sim}
data_dir: %DIR%
agent: {heartbeat: 1h}
llm: {enabled: false}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: lamp, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`

// cli runs one edgeagent command and returns its stdout.
func cli(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	rootCmd.SetArgs(args)
	defer func() { rootCmd.SetArgs(nil); rootCmd.SetOut(nil); rootCmd.SetErr(nil) }()
	err := rootCmd.Execute()
	return out.String(), err
}

// TestLocalAdminWhileRunning: with the agent running (it holds the store),
// `invoke estop.reset`, `audit` and `invoke config.reload` on the same
// machine reach it through its admin socket, as the cli caller.
func TestLocalAdminWhileRunning(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "board.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(localAdminBoard, "%DIR%", dir)), 0o600); err != nil {
		t.Fatal(err)
	}
	n, _, err := loadNode(path, false)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	var current atomic.Pointer[node.Node]
	current.Store(n)
	done := make(chan error, 1)
	go func() { done <- runNodes(ctx, n, dir, path, &current, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	<-n.Ready()

	if _, err := cli(t, "invoke", "--board", path, "estop.trigger", `{"reason":"test"}`); err != nil {
		t.Fatalf("estop.trigger: %v", err)
	}
	out, err := cli(t, "invoke", "--board", path, "estop.reset")
	if err != nil {
		t.Fatalf("estop.reset while the agent runs: %v", err)
	}
	if h := n.World.Health()["estop"]; h == "latched" {
		t.Fatalf("still latched after %s", out)
	}
	// The audit log is written behind the calls (audit.query waits for it
	// up to 2 s, best effort): on a loaded machine ask again.
	var got string
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(got, "cli estop.reset"); {
		if time.Now().After(deadline) {
			t.Fatalf("audit entries %s", got)
		}
		// Every flag given: rootCmd keeps the values other tests set.
		out, err = cli(t, "audit", "--board", path, "--json", "--safety", "--since=", "--until=", "--tool=", "--limit=50")
		if err != nil {
			t.Fatalf("audit while the agent runs: %v", err)
		}
		var entries []actuator.Entry
		if err := json.Unmarshal([]byte(out), &entries); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var tools []string
		for _, e := range entries {
			tools = append(tools, e.Caller+" "+e.Tool)
		}
		got = strings.Join(tools, ",")
	}

	// A reload through the socket: the node is rebuilt from the new board.
	newBoard, _ := json.Marshal(map[string]any{"yaml": strings.ReplaceAll(localAdminBoard, "%DIR%", dir) +
		"  - {name: horn, kind: buzzer, pins: {pin: \"sim:24\"}, initial: \"off\"}\n"})
	if _, err := cli(t, "invoke", "--board", path, "config.reload", string(newBoard)); err != nil {
		t.Fatalf("config.reload while the agent runs: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		next := current.Load()
		if next != n {
			<-next.Ready()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the node was not rebuilt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := cli(t, "invoke", "--board", path, "horn.set", `{"on":false}`); err != nil {
		t.Fatalf("the reloaded board's new actuator: %v", err)
	}
}
