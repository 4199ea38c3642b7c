//go:build !robot

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
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

// recordSim runs the sim board for d as `edgeagent run --record` does
// (reloads included), with act's inputs in the middle, and returns the
// recording. act gets the running node, which a reload replaces.
func recordSim(t *testing.T, cfg *board.Config, dir string, d time.Duration, firstDecision bool, act func(current func() *node.Node)) string {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	n, err := node.New(cfg, node.Options{Log: log, ConfigDir: dir, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "run.mcap")
	if err := recordTo(n, file); err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[node.Node]
	current.Store(n)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runNodes(ctx, n, dir, "", &current, log) }()
	<-n.Ready()
	start := time.Now()
	if act != nil {
		// After the sim camera's first motion start and its reflex
		// (about 3 s in): a command whose cycle an event preempts is a race
		// a replay cannot promise to run the same way.
		for firstDecision && !decided(n) {
			if time.Since(start) > d {
				t.Fatal("no decision in the recording's first seconds")
			}
			time.Sleep(50 * time.Millisecond)
		}
		act(current.Load)
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
// reset) before and after a config reload, which the recording goes on
// across; and the model answering (the fake Ollama).
func TestSimBoardRecordingsReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sim board for a few seconds per scenario")
	}
	commands := func(current func() *node.Node) {
		ctx, n := context.Background(), current()
		_, _ = n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn on the pump"})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "fan.set", Params: []byte(`{"duty":0.5}`)})
		n.Raise(worldmodel.Event{Kind: "estop", Source: "web", Priority: worldmodel.Critical, Message: "e-stop from the dashboard"})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "web", Grants: []string{"admin"}, Tool: "estop.reset"})
		// The CLI's (its local admin socket): the tool raises the e-stop.
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "estop.trigger", Params: []byte(`{"reason":"test"}`)})
		_, _ = n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "estop.reset"})
	}
	// withReload: the commands, a config reload that changes a reflex (as
	// an administrator does over MQTT), and the commands again on the
	// node the reload built.
	withReload := func(current func() *node.Node) {
		commands(current)
		n := current()
		if !reloadChangedReflex(t, n) {
			return
		}
		for current() == n {
			time.Sleep(10 * time.Millisecond)
		}
		<-current().Ready()
		commands(current)
	}
	askModel := func(current func() *node.Node) {
		// Not a command the local matcher knows: it goes to the model.
		_, _ = current().Agent.Submit(context.Background(), agent.Command{Caller: "mqtt", Text: "the air feels stale in here, do what helps"})
		commands(current)
	}
	for _, sc := range []struct {
		name            string
		ollama, embed   bool
		estops, reloads int
		act             func(func() *node.Node)
	}{
		{"idle without a model server", false, false, 0, 0, nil},
		{"commands, a dashboard e-stop and a config reload", false, false, 4, 1, withReload},
		{"with the fake Ollama", true, false, 2, 0, askModel},
		// The board's embed_model ranks the tools: the replay answers the
		// embedding calls with the recorded vectors, not lexically.
		{"with the fake Ollama and an embedding model", true, true, 2, 0, askModel},
	} {
		t.Run(sc.name, func(t *testing.T) {
			url := ""
			if sc.ollama {
				srv := ollamatest.Start(t, "qwen2.5:1.5b", "all-minilm")
				srv.OnRequest(func(ollamatest.Request) ollamatest.Answer {
					return ollamatest.Answer{Content: `{"scenario":"environment"}`}
				})
				url = srv.URL()
			}
			cfg, dir := simBoard(t, url)
			if sc.embed {
				cfg.LLM.EmbedModel = "all-minilm"
			}
			file := recordSim(t, cfg, dir, 6*time.Second, true, sc.act)
			rep, out := replayed(t, file, replay.Options{})
			if rep.Diverged() || len(rep.Recorded) == 0 {
				t.Fatalf("want identical:\n%s", out)
			}
			if rep.Counts["estop"] != [2]int{sc.estops, sc.estops} || rep.Reloads != sc.reloads || sc.act != nil && rep.Counts["tool_call"][0] < 5 {
				t.Fatalf("the commands are not all in the recording:\n%s", out)
			}
			if sc.ollama && rep.LLMServed == 0 {
				t.Fatalf("no recorded answer served:\n%s", out)
			}
			if sc.embed && rep.EmbedServed == 0 {
				t.Fatalf("no recorded embedding served:\n%s", out)
			}
			if sc.reloads > 0 {
				// The replay recorded (--out) goes on across the reload
				// too, and replays as the original does.
				again := filepath.Join(t.TempDir(), "again.mcap")
				replayed(t, file, replay.Options{Out: again})
				if rep2, out2 := replayed(t, again, replay.Options{}); rep2.Diverged() || rep2.Reloads != sc.reloads || rep2.Counts["decision"] != rep.Counts["decision"] {
					t.Fatalf("the replay's own recording:\n%s\nthe first replay:\n%s", out2, out)
				}
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
	file := recordSim(t, cfg, dir, 5*time.Second, true, nil)
	changed, _ := simBoard(t, "")
	changed.Reflexes[0].Do.Params = []byte(`{"on":false}`) // headlight.set {on: true} -> {on: false}
	rep, out := replayed(t, file, replay.Options{Board: changed, Dir: dir})
	if d := rep.Decision; d == nil || d.Index != 0 || d.Want == nil || d.Got == nil || rep.Divergence == nil ||
		!strings.Contains(out, "first differing decision, #1") && !strings.Contains(out, "DIVERGED at decisions #1") || !strings.Contains(out, `headlight.set params={"on":true}`) || !strings.Contains(out, `headlight.set params={"on":false}`) {
		t.Fatalf("want the reflex's decision named as the first difference:\n%s", out)
	}
}

// Fleet and group commands arrive over MQTT and are inputs like the
// robot's own: a group's tool call and a fleet's are tool_call records of
// caller mqtt marked with the group or fleet and the topic (a group's text
// command a command record so marked), the fleet's e-stop an estop event
// from mqtt, and a replay makes and raises them again, marks and all
// (issue 30: every input is in the stream, and says where it came from).
func TestFleetCommandsReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a robot against mosquitto")
	}
	b := mosquittotest.Start(t, "set_tcp_nodelay true")
	dir := t.TempDir()
	// No fleet.tools: a group may send a sentence too.
	y := strings.Replace(fleetRobotBoard, ", tools: [agent.status, headlight.*]", "", 1)
	cfg, err := board.Parse(filepath.Join(dir, "board.yaml"), fmt.Appendf(nil, y, "r1", dir, b.URL(), "north"))
	if err != nil {
		t.Fatal(err)
	}
	file := recordSim(t, cfg, dir, 4*time.Second, false, func(current func() *node.Node) {
		waitFleet(t, b.URL(), 1)
		for _, args := range [][]string{
			{"call", "north", "headlight.set", `{"on":true}`},
			{"call", "--fleet", "yard", "-", "headlight.set", `{"on":false}`},
		} {
			if out, err := fleetRun(t, b.URL(), args...); err != nil {
				t.Errorf("fleet %v: %v\n%s", args, err, out)
			}
		}
		publish(t, b.URL(), "edgeagent/group/north/cmd", `{"id":"t1","text":"turn on the headlight"}`)
		waittest.For(t, "the group's sentence in the stream", func() bool { return len(marks(current().World.Records(0, 0), agent.RecordCommand)) == 1 })
		if out, err := fleetRun(t, b.URL(), "estop", "yard"); err != nil {
			t.Errorf("fleet estop: %v\n%s", err, out)
		}
	})
	want := []string{
		`headlight.set mqtt {"kind":"group","name":"north","topic":"edgeagent/group/north/cmd"}`,
		`headlight.set mqtt {"kind":"fleet","name":"yard","topic":"edgeagent/fleet/yard/cmd"}`,
		`command mqtt {"kind":"group","name":"north","topic":"edgeagent/group/north/cmd"}`,
	}
	if got := recordedMarks(t, file); !slices.Equal(got, want) {
		t.Fatalf("the recording's outside commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Where records are listed: `recording info` counts them by origin.
	if info, err := run(t, "recording", "info", file); err != nil || !strings.Contains(info, "commands  mqtt 3 (fleet yard 1, group north 2)\n") {
		t.Errorf("recording info: %v\n%s", err, info)
	}
	again := filepath.Join(t.TempDir(), "again.mcap")
	rep, out := replayed(t, file, replay.Options{Out: again})
	if rep.Diverged() || rep.Counts["tool_call"][0] < 2 || rep.Counts["estop"] != [2]int{1, 1} {
		t.Fatalf("want the group's and the fleet's calls and the fleet's e-stop made again:\n%s", out)
	}
	if got := recordedMarks(t, again); !slices.Equal(got, want) {
		t.Fatalf("the replay's outside commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// recordedMarks are a recording's commands from outside the agent (tool
// calls of no cycle, text commands) as "<tool or command> <caller> <via>".
func recordedMarks(t *testing.T, path string) []string {
	t.Helper()
	var recs []worldmodel.Record
	if _, err := recording.Read(path, func(m recording.Msg) error {
		var r struct {
			Kind   string          `json:"kind"`
			Source string          `json:"source"`
			Data   json.RawMessage `json:"data"`
		}
		if m.Channel.Kind == record.KindRecord && json.Unmarshal(m.Data, &r) == nil {
			recs = append(recs, worldmodel.Record{Kind: r.Kind, Source: r.Source, Data: r.Data})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return marks(recs, "tool_call", agent.RecordCommand)
}

// marks lists the records of these kinds that came from outside.
func marks(recs []worldmodel.Record, kinds ...string) []string {
	var out []string
	for _, r := range recs {
		var d struct {
			Caller string          `json:"caller"`
			Cycle  uint64          `json:"cycle"`
			Via    json.RawMessage `json:"via"`
		}
		if !slices.Contains(kinds, r.Kind) || json.Unmarshal(r.Data, &d) != nil || d.Cycle != 0 || d.Caller != "mqtt" {
			continue
		}
		what := r.Source
		if r.Kind == agent.RecordCommand {
			what = r.Kind
		}
		out = append(out, what+" "+d.Caller+" "+string(d.Via))
	}
	return out
}

// publish sends one MQTT message, as a requester of a group would.
func publish(t *testing.T, broker, topic, payload string) {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(broker).SetClientID("requester").SetConnectTimeout(5 * time.Second))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect %s: %v", broker, tok.Error())
	}
	defer c.Disconnect(50)
	if tok := c.Publish(topic, 1, false, payload); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}

// A cycle that the node's stop for a config reload cut off between its
// plan and its steps replays as recorded ("skipped: context canceled"):
// the replay holds that cycle until its node stops for the reload, where
// it used to run its steps (TestSimBoardRecordingsReplay diverged so once,
// on the motion reflex's headlight.set). No sensors: no event preempts the
// held cycle first.
func TestCycleCutOffByAReloadReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sim board for a few seconds")
	}
	cfg, dir := simBoard(t, "")
	cfg.Sensors = nil
	file := recordSim(t, cfg, dir, 3*time.Second, false, func(current func() *node.Node) {
		ctx, n := context.Background(), current()
		stall := &stallAfterPlan{planned: make(chan struct{})}
		if err := n.LoadPlugin(ctx, stall); err != nil {
			t.Fatal(err)
		}
		go func() { _, _ = n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn on the pump"}) }()
		select {
		case <-stall.planned:
		case <-time.After(10 * time.Second):
			t.Fatal("the command's cycle made no plan")
		}
		if !reloadChangedReflex(t, n) {
			return
		}
		for current() == n {
			time.Sleep(10 * time.Millisecond)
		}
		<-current().Ready()
	})
	rep, out := replayed(t, file, replay.Options{})
	cut := 0
	for _, a := range rep.Recorded {
		if a.Kind == "decision" && strings.Contains(a.What, "pump.set: skipped: context canceled") {
			cut++
		}
	}
	if cut != 1 || rep.Diverged() || rep.Reloads != 1 {
		t.Fatalf("want the command's cycle cut off by the reload, as recorded:\n%s", out)
	}
	// The replay's own recording (--out) has it so too.
	again := filepath.Join(t.TempDir(), "again.mcap")
	replayed(t, file, replay.Options{Out: again})
	if rep2, out2 := replayed(t, again, replay.Options{}); rep2.Diverged() || rep2.Reloads != 1 {
		t.Fatalf("the replay's own recording:\n%s", out2)
	}
}

// stallAfterPlan stands still after the plan of the first cycle with
// steps until the cycle's context ends: the node stopping for a reload
// between a cycle's plan and its steps, on demand.
type stallAfterPlan struct {
	planned chan struct{}
	once    sync.Once
}

func (p *stallAfterPlan) Info() hooks.Info {
	return hooks.Info{Name: "stall_after_plan", Version: "1"}
}

func (p *stallAfterPlan) AfterPlan(ctx context.Context, d hooks.Decision) error {
	stall := false
	if len(d.Steps) > 0 {
		p.once.Do(func() { stall = true })
	}
	if stall {
		close(p.planned)
		<-ctx.Done()
	}
	return nil
}

// reloadChangedReflex reloads n's board with the motion reflex's cooldown
// changed from 5 s to 4 s, as an administrator does over MQTT; false (and
// the test failed) if the reload was refused.
func reloadChangedReflex(t *testing.T, n *node.Node) bool {
	y, err := n.Board.Marshal()
	if err != nil {
		t.Error(err)
		return false
	}
	y = bytes.Replace(y, []byte("cooldown: 5s"), []byte("cooldown: 4s"), 1)
	params, _ := json.Marshal(map[string]any{"yaml": string(y)})
	if _, err := n.Tools.Invoke(context.Background(), tools.Call{Caller: "mqtt", Grants: []string{"admin"}, Tool: "config.reload", Params: params}); err != nil {
		t.Error(err)
		return false
	}
	return true
}
