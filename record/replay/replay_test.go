package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/record/replay"
	"github.com/edgeagent/edgeagent/tools"

	_ "github.com/edgeagent/edgeagent/plugin/actuators" // the plugins a replay node needs, as cmd/edgeagent links them
	_ "github.com/edgeagent/edgeagent/plugin/engine"
	_ "github.com/edgeagent/edgeagent/record"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
	"github.com/edgeagent/edgeagent/worldmodel"
	"github.com/foxglove/mcap/go/mcap"
)

const scenarios = "../../testdata/scenarios"

func scenarioFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(scenarios, "*.mcap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario recordings in %s (scripts/regen-scenarios.sh makes them)", scenarios)
	}
	return files
}

// Every scenario replays with the decisions, tool calls and actuator
// writes it was recorded with, 10 times out of 10.
func TestScenariosReplayIdentically(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".mcap"), func(t *testing.T) {
			for i := range 10 {
				rep, err := replay.Run(context.Background(), f, replay.Options{Frames: true})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Diverged() {
					var b bytes.Buffer
					rep.Print(&b)
					t.Fatalf("run %d of 10 diverged:\n%s", i+1, b.String())
				}
				if rep.Missed > 0 {
					t.Fatalf("run %d: %d items of the replay's stream lost before comparing", i+1, rep.Missed)
				}
				if len(rep.Recorded) == 0 {
					t.Fatal("the scenario recorded nothing to compare")
				}
			}
		})
	}
}

// replayChanged replays a scenario on the board it was recorded with,
// changed by change.
func replayChanged(t *testing.T, scenario string, change func(*board.Config)) *replay.Report {
	t.Helper()
	f := filepath.Join(scenarios, scenario)
	in, err := recording.Read(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Parse(filepath.Join(t.TempDir(), "b.yaml"), in.Attachments["board.yaml"])
	if err != nil {
		t.Fatal(err)
	}
	change(cfg)
	rep, err := replay.Run(context.Background(), f, replay.Options{Board: cfg, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A board without the reflex does not do what was recorded: the replay
// says where it first differs.
func TestChangedBoardDiverges(t *testing.T) {
	rep := replayChanged(t, "estop.mcap", func(cfg *board.Config) { cfg.Reflexes = nil })
	// The first thing the reflex did was switch the horn on.
	d := rep.Divergence
	if d == nil || d.Want == nil || d.Want.String() != "actuator horn: state=on" {
		t.Fatalf("divergence %+v, want the horn switched on by the reflex missing", d)
	}
	var b bytes.Buffer
	rep.Print(&b)
	if !strings.Contains(b.String(), "DIVERGED at actuator writes #3") || !strings.Contains(b.String(), "- recorded  actuator horn: state=on") {
		t.Errorf("report:\n%s", b.String())
	}
}

// A recording cut short (a power cut) replays up to its last complete
// chunk and says so.
func TestTruncatedRecordingReplays(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(scenarios, "motion-reflex.mcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.mcap")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(context.Background(), cut, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Damage == "" || rep.Inputs == 0 {
		t.Fatalf("damage %q, %d inputs", rep.Damage, rep.Inputs)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	notMCAP := filepath.Join(dir, "x.mcap")
	os.WriteFile(notMCAP, []byte("password: hunter2"), 0o644)
	for name, c := range map[string]struct {
		path string
		o    replay.Options
		want string
	}{
		"missing":  {filepath.Join(dir, "none.mcap"), replay.Options{}, "no such file"},
		"not mcap": {notMCAP, replay.Options{}, "not an MCAP file"},
		"llm mode": {filepath.Join(scenarios, "estop.mcap"), replay.Options{LLM: "maybe"}, "want recorded, live or off"},
	} {
		_, err := replay.Run(context.Background(), c.path, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
}

// A prompt other than the recorded one is a divergence, with the place it
// differs: here the board's scenario list, which the system prompt names.
func TestChangedPromptDiverges(t *testing.T) {
	rep := replayChanged(t, "llm-estop.mcap", func(cfg *board.Config) {
		cfg.LLM.Scenarios = []string{"environment", "maintenance", "security", "idle"}
	})
	if d := rep.Divergence; d == nil || d.Kind != "llm" || !strings.Contains(rep.LLMNote, "the prompt differs from the recorded one") {
		var b bytes.Buffer
		rep.Print(&b)
		t.Fatalf("want an LLM divergence with the prompt's difference:\n%s", b.String())
	}
}

// Tools called from outside (the CLI, MQTT) are made again at their time;
// a servo that ramps on the node's clock ends as the replay moves it, and
// a call that waits for the ramp returns then, before the call after it.
func TestCommandsFromOutsideReplay(t *testing.T) {
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: cmd, platform: sim}
data_dir: state
llm: {enabled: false}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
  - {name: pan, kind: servo, pins: {pin: "sim:13"}, initial: "90", limits: {min_angle: 0, max_angle: 180, max_rate: 180, on_violation: clamp}}
`, "cmd.mcap")
	ctx := context.Background()
	for _, c := range []tools.Call{
		{Caller: "cli", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)},
		{Caller: "cli", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":135}`)}, // a 0.25 s ramp
		{Caller: "mqtt", Tool: "headlight.set", Params: json.RawMessage(`{"on":false}`)},
		// Returns when the ramp arrives: it waits on the replay's clock.
		{Caller: "cli", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":90,"wait":true}`)},
		{Caller: "cli", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)},
	} {
		if _, err := n.Tools.Invoke(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	rep, out := replayed(t, file)
	if rep.Diverged() || rep.Counts["tool_call"] != [2]int{5, 5} {
		t.Fatalf("want the 5 calls made again:\n%s", out)
	}
}

// replayed replays file as recorded and returns the report and its text.
func replayed(t *testing.T, file string) (*replay.Report, string) {
	t.Helper()
	rep, err := replay.Run(context.Background(), file, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Print(&b)
	return rep, b.String()
}

// recordBoard writes the board src as dir/b.yaml, builds its node, records
// it into dir/name and runs it until ready; stop ends the run, which closes
// the recording.
func recordBoard(t *testing.T, dir, src, name string) (n *node.Node, file string, stop func()) {
	t.Helper()
	path := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err = node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := node.Find[interface{ RecordFile(string) }](n)
	if !ok {
		t.Fatal("no recorder")
	}
	file = filepath.Join(dir, name)
	rec.RecordFile(file)
	return n, file, nodetest.Run(t, n)
}

// pumpBoard is a sim board with a headlight and a pump that the local
// matcher switches, no LLM and no MQTT, and more (reflexes …) after it.
func pumpBoard(id, more string) string {
	return `device: {id: ` + id + `, platform: sim}
data_dir: state
llm: {enabled: false}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
  - {name: pump, kind: relay, pins: {pin: "sim:23"}, initial: "off"}
` + more
}

// Every input from outside is in the stream, so it replays: a text command
// submitted to the agent (MQTT, the CLI's forwarded decide, the dashboard),
// a dashboard e-stop and its reset, as the dashboard makes them.
func TestTextCommandsAndEStopsReplay(t *testing.T) {
	n, file, stop := recordBoard(t, t.TempDir(), pumpBoard("text", ""), "text.mcap")
	ctx := context.Background()
	for _, text := range []string{"turn on the pump", "switch the headlight on"} {
		out, err := n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: text})
		if err != nil || out.Decision == nil {
			t.Fatalf("%q: %+v %v", text, out, err)
		}
	}
	n.Raise(worldmodel.Event{Kind: "estop", Source: "web", Priority: worldmodel.Critical, Message: "e-stop from the dashboard"})
	if _, err := n.Tools.Invoke(ctx, tools.Call{Caller: "web", Grants: []string{"admin"}, Tool: "estop.reset"}); err != nil {
		t.Fatal(err)
	}
	stop()
	rep, out := replayed(t, file)
	if rep.Diverged() || rep.Counts["decision"][1] < 2 || rep.Counts["estop"] != [2]int{1, 1} || rep.Counts["tool_call"][0] != rep.Counts["tool_call"][1] {
		t.Fatalf("want the commands, the e-stop and the reset made again:\n%s", out)
	}
}

// A recording with no messages (a foreign MCAP, or one closed at once) is
// an error that says so, not an empty "identical".
func TestEmptyRecordingRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.mcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := mcap.NewWriter(f, &mcap.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteHeader(&mcap.Header{Profile: "foreign"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg, err := board.Parse(filepath.Join(dir, "b.yaml"), []byte("device: {id: e, platform: sim}\nllm: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = replay.Run(context.Background(), path, replay.Options{Board: cfg, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "nothing to replay") {
		t.Fatalf("err = %v, want nothing to replay", err)
	}
}

// A recording carries the files its board names (here a skill text the
// engine reads when it is built): it replays once the board's folder is
// gone, as on another machine or in another checkout.
func TestRecordingReplaysWithoutTheBoardsFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "lights.md"), []byte("Switch the headlight on when it is dark."), 0o644); err != nil {
		t.Fatal(err)
	}
	n, file, stop := recordBoard(t, dir, `device: {id: moved, platform: sim}
data_dir: state
llm: {enabled: false}
plugins:
  mqtt: {enabled: false}
  llm: {skills: [{name: lights, description: when to switch the lights, file: skills/lights.md}]}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, "moved.mcap")
	if _, err := n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}); err != nil {
		t.Fatal(err)
	}
	stop()
	moved := filepath.Join(t.TempDir(), "moved.mcap")
	if err := os.Rename(file, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	rep, out := replayed(t, moved)
	if rep.Diverged() || rep.Counts["tool_call"] != [2]int{1, 1} {
		t.Fatalf("want the call made again:\n%s", out)
	}
}

// preemptAfterPlan is a plugin that stands still after the plan of a
// cycle with steps, when armed, until the cycle is preempted: it makes the
// race "a sensor event arrives while a command's cycle runs, before its
// steps" happen on demand.
type preemptAfterPlan struct {
	armed   atomic.Bool
	planned chan struct{}
}

func (p *preemptAfterPlan) Info() hooks.Info {
	return hooks.Info{Name: "preempt_after_plan", Version: "1"}
}

func (p *preemptAfterPlan) AfterPlan(ctx context.Context, d hooks.Decision) error {
	if len(d.Steps) > 0 && p.armed.CompareAndSwap(true, false) {
		p.planned <- struct{}{}
		<-ctx.Done()
	}
	return nil
}

// A command whose cycle a sensor event preempted before its steps ran
// replays as recorded: the replay keeps that cycle after its plan until the
// recorded event preempts it again, so its steps are skipped again, and
// the event's own cycle follows.
func TestPreemptedCommandReplays(t *testing.T) {
	n, file, stop := recordBoard(t, t.TempDir(), pumpBoard("preempt", `reflexes:
  - {on: overheat, do: {tool: headlight.set, params: {on: true}}}
`), "preempt.mcap")
	ctx := context.Background()
	race := &preemptAfterPlan{planned: make(chan struct{})}
	if err := n.LoadPlugin(ctx, race); err != nil {
		t.Fatal(err)
	}
	if out, err := n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn on the pump"}); err != nil || out.Decision == nil {
		t.Fatalf("%+v %v", out, err)
	}
	race.armed.Store(true)
	outcome := make(chan agent.Outcome, 1)
	go func() {
		out, _ := n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn off the pump"})
		outcome <- out
	}()
	<-race.planned
	n.Raise(worldmodel.Event{Kind: "overheat", Source: "env", Priority: worldmodel.High, Message: "temperature above 30"})
	if out := <-outcome; out.Preempted == "" {
		t.Fatalf("the command was not preempted: %+v", out)
	}
	if out, err := n.Agent.Submit(ctx, agent.Command{Caller: "mqtt", Text: "turn off the pump"}); err != nil || out.Decision == nil {
		t.Fatalf("%+v %v", out, err)
	}
	stop()
	rep, out := replayed(t, file)
	if rep.Diverged() || rep.Counts["decision"] != [2]int{4, 4} {
		t.Fatalf("want the preempted command, the reflex and the commands as recorded:\n%s", out)
	}
	skipped := 0
	for _, a := range rep.Replayed {
		if a.Kind == "decision" && strings.Contains(a.What, "skipped: preempted by high env/overheat") {
			skipped++
		}
	}
	if skipped != 1 {
		t.Fatalf("want 1 decision with its steps skipped by the preemption, got %d:\n%s", skipped, out)
	}
}

// With the model server down when recorded, a replay's client is down
// before the first input too: an LLM call recorded "unavailable" replays
// "unavailable", not as a call made and failed, however fast the replay
// feeds the input after the node starts.
func TestUnavailableModelServerReplays(t *testing.T) {
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: down, platform: sim}
data_dir: state
llm: {enabled: true, host: "http://127.0.0.1:1", embed_model: ""}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, "down.mcap")
	waitChecked(t, n)
	// Refused: the LLM is unavailable and the matcher does not understand.
	askStale(n, 1)
	stop()
	for range 5 {
		rep, out := replayed(t, file)
		if rep.Diverged() || !hasUnavailable(rep.Recorded) {
			t.Fatalf("want the unavailable LLM call as recorded:\n%s", out)
		}
	}
}

func hasUnavailable(as []replay.Action) bool {
	for _, a := range as {
		if a.Kind == "llm" && strings.Contains(a.What, " unavailable ") {
			return true
		}
	}
	return false
}

// waitChecked waits, as a replay does, for n's LLM client to have made
// its start-up check, so the test's first command finds it up or down.
// submitAsked submits a text command over MQTT and returns once its
// cycle has asked the model (a chat request reached srv); the command's
// outcome arrives on the channel.
func submitAsked(t *testing.T, n *node.Node, srv *ollamatest.Server, text string) <-chan agent.Outcome {
	t.Helper()
	done := make(chan agent.Outcome, 1)
	go func() {
		out, _ := n.Agent.Submit(context.Background(), agent.Command{Caller: "mqtt", Text: text})
		done <- out
	}()
	waittest.For(t, "the command's cycle to ask the model", func() bool {
		return slices.ContainsFunc(srv.Requests(), func(r ollamatest.Request) bool { return r.Chat != nil })
	})
	return done
}

func waitChecked(t *testing.T, n *node.Node) {
	t.Helper()
	p, ok := node.Find[interface{ LLMChecked() <-chan struct{} }](n)
	if !ok {
		t.Fatal("no llm plugin")
	}
	select {
	case <-p.LLMChecked():
	case <-time.After(10 * time.Second):
		t.Fatal("the LLM client made no start-up check in 10 s")
	}
}

// askStale submits the same text command k times from MQTT, one after
// the other: each one a cycle that asks the model.
func askStale(n *node.Node, k int) {
	for range k {
		_, _ = n.Agent.Submit(context.Background(), agent.Command{Caller: "mqtt", Text: "the air feels stale in here, do what helps"})
	}
}

// An LLM call that ran out the cycle's deadline when recorded (a model too
// slow for it) replays as recorded: the replay's server holds the call
// until the replayed cycle's deadline, on the virtual clock, ends it, so
// the client fails with the recorded error (not a server error, which
// would also take the client out of use), and the command after it is
// answered as it was (or, on a loaded machine, times out too: then that
// replays likewise).
func TestTimedOutLLMCallReplays(t *testing.T) {
	srv := ollamatest.Start(t)
	var chats atomic.Int32
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil {
			return ollamatest.Answer{} // the preload
		}
		if chats.Add(1) == 1 {
			return ollamatest.Answer{Hang: true} // past the cycle's deadline
		}
		return ollamatest.Answer{Content: `{"scenario":"environment"}`}
	})
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: late, platform: sim}
data_dir: state
llm: {enabled: true, host: "`+srv.URL()+`", model: tiny, embed_model: "", timeout: 20s}
agent: {cycle_timeout: 1s}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, "late.mcap")
	waitChecked(t, n)
	askStale(n, 2)
	stop()
	for range 3 {
		rep, out := replayed(t, file)
		timedOut, calls := 0, ""
		for _, a := range rep.Recorded {
			if a.Kind == "llm" {
				calls += "\n  " + a.What
				if strings.Contains(a.What, " timed out ") {
					timedOut++
				}
			}
		}
		if rep.Diverged() || timedOut == 0 || rep.Counts["llm"][0] < 2 {
			t.Fatalf("want the timed-out LLM call and the calls after it as recorded:\n%s\nrecorded LLM calls:%s", out, calls)
		}
	}
}

// Interrupts that do not preempt a cycle whose LLM call is in flight
// (heartbeats, queued behind it) come while the replay holds that call for
// the event that cut it off when recorded: the replay feeds them on and
// then the event, and the call is cut off as recorded.
func TestHeldLLMCallWithInputsBehindIt(t *testing.T) {
	srv := ollamatest.Start(t)
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil {
			return ollamatest.Answer{} // the preload
		}
		return ollamatest.Answer{Hang: true}
	})
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: behind, platform: sim}
data_dir: state
llm: {enabled: true, host: "`+srv.URL()+`", model: tiny, embed_model: ""}
agent: {heartbeat: 100ms, cycle_timeout: 1m}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
reflexes:
  - {on: overheat, do: {tool: headlight.set, params: {on: true}}}
`, "behind.mcap")
	waitChecked(t, n)
	done := submitAsked(t, n, srv, "the air feels stale in here, do what helps")
	time.Sleep(500 * time.Millisecond) // heartbeats queue behind the command's cycle
	n.Raise(worldmodel.Event{Kind: "overheat", Source: "env", Priority: worldmodel.High, Message: "temperature above 30"})
	if out := <-done; out.Preempted == "" {
		t.Fatalf("the command was not preempted: %+v", out)
	}
	// The event's reflex runs before the recording ends.
	for !slices.ContainsFunc(n.World.Events(0, worldmodel.Low, 1000), func(e worldmodel.Event) bool {
		return e.Kind == "decision" && strings.Contains(e.Message, "env/overheat via reflex")
	}) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	for range 3 {
		rep, out := replayed(t, file)
		cut := 0
		for _, a := range rep.Recorded {
			if a.Kind == "llm" && strings.Contains(a.What, " cut off ") {
				cut++
			}
		}
		if rep.Diverged() || cut != 1 || rep.Heartbeats < 3 {
			t.Fatalf("want the call cut off by the event after the heartbeats, as recorded:\n%s", out)
		}
	}
}

// Answers the client found wanting when recorded (cut off at the token
// limit, a key twice) are given again as the model gave them, so the
// client finds the same fault and the decision is refused as it was; served
// as a server error, they would take the client out of use.
func TestAnswersTheClientRefusedReplay(t *testing.T) {
	srv := ollamatest.Start(t)
	var chats atomic.Int32
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil {
			return ollamatest.Answer{} // the preload
		}
		switch chats.Add(1) {
		case 1:
			return ollamatest.Answer{Content: `{"scenario":"environ`, DoneReason: "length"}
		case 2:
			return ollamatest.Answer{Content: `{"scenario":"environment","scenario":"idle"}`}
		}
		return ollamatest.Answer{Content: `{"scenario":"environment"}`}
	})
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: wanting, platform: sim}
data_dir: state
llm: {enabled: true, host: "`+srv.URL()+`", model: tiny, embed_model: ""}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, "wanting.mcap")
	waitChecked(t, n)
	askStale(n, 2)
	stop()
	rep, out := replayed(t, file)
	if rep.Diverged() || rep.Counts["llm"][0] < 2 {
		t.Fatalf("want the cut-off and the refused answers asked again as recorded:\n%s", out)
	}
}

// An answered call takes the time it took when recorded, on the virtual
// clock: a tool called from outside while the model was answering runs
// before the step the answer chose, as recorded.
func TestAnswerTakesItsRecordedTime(t *testing.T) {
	srv := ollamatest.Start(t)
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		switch {
		case r.Chat == nil:
			return ollamatest.Answer{} // the preload
		case strings.Contains(string(r.Chat.Format), `"scenario"`):
			return ollamatest.Answer{Delay: 400 * time.Millisecond,
				Content: `{"scenario":"environment","intents":[{"action":"switch on","object":"headlight","constraints":[]}]}`}
		case strings.Contains(string(r.Chat.Format), `"steps"`):
			return ollamatest.Answer{Content: `{"steps":[{"id":"1","tool":"headlight.set","params":{"on":true},"depends_on":[]}]}`}
		}
		return ollamatest.Answer{Content: `{"on":true}`}
	})
	n, file, stop := recordBoard(t, t.TempDir(), `device: {id: slow, platform: sim}
data_dir: state
llm: {enabled: true, host: "`+srv.URL()+`", model: tiny, embed_model: ""}
plugins: {mqtt: {enabled: false}}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
  - {name: pump, kind: relay, pins: {pin: "sim:23"}, initial: "off"}
`, "slow.mcap")
	waitChecked(t, n)
	done := submitAsked(t, n, srv, "it is getting dark, light the way")
	if _, err := n.Tools.Invoke(context.Background(), tools.Call{Caller: "mqtt", Tool: "pump.set", Params: []byte(`{"on":true}`)}); err != nil {
		t.Fatal(err)
	}
	if out := <-done; len(out.Steps) != 1 || out.Steps[0].Tool != "headlight.set" {
		t.Fatalf("the model's step did not run: %+v", out)
	}
	stop()
	for range 3 {
		rep, out := replayed(t, file)
		if rep.Diverged() || rep.Counts["tool_call"][0] != 2 {
			t.Fatalf("want the outside call before the answer's step, as recorded:\n%s", out)
		}
	}
}
