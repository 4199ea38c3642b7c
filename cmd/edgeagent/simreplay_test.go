//go:build !robot

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record/replay"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// simBoard is the default sim board as a user runs it, on ports of its own
// and with the model server at ollama ("" is none: a closed port).
func simBoard(t *testing.T, ollama string) (*board.Config, string) {
	t.Helper()
	dir, err := filepath.Abs("../../board-configs")
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(filepath.Join(dir, "sim.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	y = bytes.ReplaceAll(y, []byte("listen: 127.0.0.1:1883"), []byte("listen: 127.0.0.1:0"))
	y = bytes.ReplaceAll(y, []byte("listen: 127.0.0.1:8080"), []byte("listen: 127.0.0.1:0"))
	cfg, err := board.Parse(filepath.Join(dir, "sim.yaml"), y)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.LLM.Host, cfg.LLM.EmbedModel = "http://127.0.0.1:1", ""
	if ollama != "" {
		cfg.LLM.Host = ollama
	}
	return cfg, dir
}

// recordSim runs the sim board for d, recording it, with act's inputs in
// the middle, and returns the recording.
func recordSim(t *testing.T, cfg *board.Config, dir string, d time.Duration, act func(n *node.Node)) string {
	t.Helper()
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "run.mcap")
	if err := recordTo(n, file); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, time.Time{}) }()
	<-n.Ready()
	start := time.Now()
	if act != nil {
		// After the sim camera's first motion start and its reflex
		// (about 3 s in): a command whose cycle an event preempts is a race
		// a replay cannot promise to run the same way.
		for !decided(n) {
			if time.Since(start) > d {
				t.Fatal("no decision in the recording's first seconds")
			}
			time.Sleep(50 * time.Millisecond)
		}
		act(n)
	}
	time.Sleep(d - time.Since(start))
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return file
}

// decided: the agent has made a decision.
func decided(n *node.Node) bool {
	for _, e := range n.World.Events(0, worldmodel.Low, 1000) {
		if e.Kind == "decision" {
			return true
		}
	}
	return false
}

func replayed(t *testing.T, file string, o replay.Options) (*replay.Report, string) {
	t.Helper()
	rep, err := replay.Run(context.Background(), file, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Print(&b)
	return rep, b.String()
}

// Recordings of the default sim board, made fresh, replay identically
// (issue 30's done-when, in short): idle with no model server; commands
// from outside (MQTT text and tool calls, a dashboard e-stop and its
// reset); and the model answering (the fake Ollama).
func TestSimBoardRecordingsReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sim board for a few seconds per scenario")
	}
	commands := func(n *node.Node) {
		ctx := context.Background()
		_, _ = n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn on the pump"})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "fan.set", Params: []byte(`{"duty":0.5}`)})
		n.Raise(worldmodel.Event{Kind: "estop", Source: "web", Priority: worldmodel.Critical, Message: "e-stop from the dashboard"})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "web", Grants: []string{"admin"}, Tool: "estop.reset"})
		// The CLI's (its local admin socket): the tool raises the e-stop.
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "estop.trigger", Params: []byte(`{"reason":"test"}`)})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "estop.reset"})
	}
	for _, sc := range []struct {
		name   string
		ollama bool
		act    func(*node.Node)
	}{
		{"idle without a model server", false, nil},
		{"commands and a dashboard e-stop", false, commands},
		{"with the fake Ollama", true, func(n *node.Node) {
			// Not a command the local matcher knows: it goes to the model.
			_, _ = n.Agent.Submit(context.Background(), agent.Command{Caller: "mqtt", Text: "the air feels stale in here, do what helps"})
			commands(n)
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			url := ""
			if sc.ollama {
				srv := ollamatest.Start(t, "qwen2.5:1.5b")
				srv.OnRequest(func(ollamatest.Request) ollamatest.Answer {
					return ollamatest.Answer{Content: `{"scenario":"environment"}`}
				})
				url = srv.URL()
			}
			cfg, dir := simBoard(t, url)
			file := recordSim(t, cfg, dir, 6*time.Second, sc.act)
			rep, out := replayed(t, file, replay.Options{})
			if rep.Diverged() || len(rep.Recorded) == 0 {
				t.Fatalf("want identical:\n%s", out)
			}
			if sc.act != nil && (rep.Counts["estop"] != [2]int{2, 2} || rep.Counts["tool_call"][0] < 5) {
				t.Fatalf("the commands are not all in the recording:\n%s", out)
			}
			if sc.ollama && rep.LLMServed == 0 {
				t.Fatalf("no recorded answer served:\n%s", out)
			}
		})
	}
}

// A one-line change to a reflex of the board makes the replay fail, and
// the report names the first decision that differs.
func TestSimBoardReflexChangeDiverges(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sim board for a few seconds")
	}
	cfg, dir := simBoard(t, "")
	file := recordSim(t, cfg, dir, 5*time.Second, nil)
	changed, _ := simBoard(t, "")
	changed.Reflexes[0].Do.Params = []byte(`{"on":false}`) // headlight.set {on: true} -> {on: false}
	rep, out := replayed(t, file, replay.Options{Board: changed, Dir: dir})
	if d := rep.Decision; d == nil || d.Index != 0 || d.Want == nil || d.Got == nil || rep.Divergence == nil ||
		!strings.Contains(out, "first differing decision, #1") && !strings.Contains(out, "DIVERGED at decisions #1") || !strings.Contains(out, `headlight.set params={"on":true}`) || !strings.Contains(out, `headlight.set params={"on":false}`) {
		t.Fatalf("want the reflex's decision named as the first difference:\n%s", out)
	}
}
