// Package replay feeds a recording back into an agent: the recorded
// observations, events and tool calls made from outside (MQTT, CLI) go, at
// their recorded times on a virtual clock,
// into a node built from the recorded board (or another), with the sim
// actuators and no sensors, MQTT or store; the LLM answers from the
// recording, live, or not at all. What the agent then decides, calls and
// actuates is compared with what it did when it was recorded.
//
// Detections: by default the recorded detections (motion, wake words) are
// fed. With Options.Detections "detectors" the recorded camera frames and
// microphone audio (record.frames, record: {audio: true}) run through the
// detectors the board configures instead, by the sensors' own code
// (sensors.Redetector), and their detections are fed at the frames' and
// chunks' times; the report then also lists, per sensor, the detections
// that moved, vanished or appeared. A change to the motion detector, a
// threshold or a wake-word model is so checked against real recordings.
// Frames need to be recorded at the camera's rate for the detector to see
// what it saw live (record.frames.interval ≤ the frame period and
// snapshot_interval likewise); audio is recorded around speech only, so
// the wake-word detector hears the speech segments back to back.
//
// Reloads: a config reload accepted while recording is a record in the
// stream (record.ReloadRecord, holding the new board), and the recording goes
// on across it in the same file. The replay applies it at its time as
// `edgeagent run` does: its node stops and one built from the recorded
// board goes on, with the same clock and store (the config.reload call
// itself is an input, not compared). The files the reloaded board names are
// the recording's where they are the files the first board named.
//
// Time: the node's clock (actuator ramps, dead-man timers, rate limits,
// the recorder) is a clock.Fake advanced to each input's time, and
// heartbeats are injected on it. The deadlines of a run (an agent cycle's,
// an LLM call's) are on that clock (clock.WithTimeout), so an LLM call that
// ran out its deadline when recorded fails at the same virtual moment with
// the same error. The agent works in goroutines of its own, so a replay
// settles after each input (it waits until the agent has handled
// everything it was given) instead of only advancing time.
package replay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/record/recording"
)

// Options for Run.
type Options struct {
	// Board replaces the recorded board; Dir is its directory.
	Board *board.Config
	Dir   string
	// Speed paces the inputs at N times their recorded pace; 0 replays as
	// fast as the agent handles them.
	Speed float64
	// LLM is "recorded" (answers from the recording; a different prompt is
	// a divergence), "live" (the board's Ollama) or "off" (fast paths only).
	LLM string
	// Frames feeds recorded camera frames back as snapshots.
	Frames bool
	// Detections is "recorded" (feed the recorded motion and wake-word
	// detections) or "detectors" (run the recorded frames and audio
	// through the board's detectors; see the package doc).
	Detections string
	// Out records the replay into this new MCAP file.
	Out string
	// Progress, when set, gets a line a second while the replay runs.
	Progress io.Writer
	Log      *slog.Logger
}

// Report is what a replay did and how it compares.
type Report struct {
	Start, End  time.Time
	Span        time.Duration // of the recording
	Took        time.Duration // wall time of the replay
	Inputs      int
	Frames      int
	Heartbeats  int
	Reloads     int // board reloads applied
	LLM         string
	LLMServed   int
	LLMRecorded int
	EmbedServed int    // embedding calls answered with recorded vectors
	LLMNote     string // the first prompt that differed, with context
	Damage      string // the recording was cut short
	Recorded    []Action
	Replayed    []Action
	Counts      map[string][2]int // kind -> {recorded, replayed}
	Divergence  *Divergence
	Decision    *Divergence  // the first differing decision, when any differs
	Missed      uint64       // items of the replay's stream overwritten before they were compared
	Detectors   []Detections // with Detections "detectors"
}

// Diverged reports whether the replay did something else, or its
// detectors found something else.
func (r *Report) Diverged() bool {
	for i := range r.Detectors {
		if r.Detectors[i].Differ() {
			return true
		}
	}
	return r.Divergence != nil
}

// Run replays the recording at path.
func Run(ctx context.Context, path string, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "edgeagent-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	info, files, err := readBoard(path, &o, filepath.Join(tmp, "board"))
	if err != nil {
		return nil, err
	}
	tp, dets, err := readTape(path, info, o)
	if err != nil {
		return nil, err
	}
	rep := &Report{LLM: o.LLM, Recorded: tp.actions, Damage: info.Damage,
		Inputs: len(tp.inputs), Frames: tp.frames, LLMRecorded: len(tp.exchange),
		Start: info.Start, End: info.End, Span: info.End.Sub(info.Start)}
	heartbeat := o.Board.Agent.Heartbeat
	// The virtual clock starts at the wall clock's now and the recording is
	// shifted to it: what still reads the wall clock (the process, the
	// MQTT broker's sockets) then sees the same times as the virtual clock
	// at --speed 1.
	clk := &firingClock{Fake: clock.NewFake(time.Now())}
	var llmSrv *ollama
	if o.LLM == "recorded" {
		if llmSrv, err = startOllama(clk, tp.exchange, tp.embeds, o.Board.LLM.Model, o.Board.LLM.EmbedModel); err != nil {
			return nil, err
		}
		defer llmSrv.close()
	}
	d := newDriver(o, rep, info, clk, llmSrv, dets, tmp)
	d.files, d.heartbeat, d.nextBeat = files, heartbeat, d.start.Add(heartbeat)
	d.probe.holds = tp.holds
	if err := d.startNode(ctx, o.Board, o.Dir, nil); err != nil {
		return nil, err
	}
	err = d.run(ctx, tp.inputs)
	d.stopNode()
	if err != nil {
		return nil, err
	}
	d.report()
	return rep, nil
}

// defaults checks the options and fills in the defaults.
func (o *Options) defaults() error {
	if o.LLM == "" {
		o.LLM = "recorded"
	}
	if o.LLM != "recorded" && o.LLM != "live" && o.LLM != "off" {
		return fmt.Errorf("--llm %q: want recorded, live or off", o.LLM)
	}
	if o.Detections == "" {
		o.Detections = "recorded"
	}
	if o.Detections != "recorded" && o.Detections != "detectors" {
		return fmt.Errorf("--detections %q: want recorded or detectors", o.Detections)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return nil
}

// readTape reads what the replay feeds and compares, and builds the
// detectors that take the recorded frames and audio.
func readTape(path string, info *recording.Info, o Options) (*tape, []*detector, error) {
	actuators := map[string]bool{}
	for _, a := range o.Board.Actuators {
		actuators[a.Name] = true
	}
	var dets []*detector
	if o.Detections == "detectors" {
		var err error
		if dets, err = newDetectors(o.Board, o.Dir); err != nil {
			return nil, nil, err
		}
	}
	tp, err := load(path, actuators, o.Frames, dets)
	if err != nil {
		return nil, nil, err
	}
	if err := missingInputs(dets); err != nil {
		return nil, nil, err
	}
	if len(tp.inputs) == 0 && len(tp.actions) == 0 && len(tp.exchange) == 0 {
		return nil, nil, fmt.Errorf("%s: no observations, events or records of an edgeagent recording in it: nothing to replay", path)
	}
	tp.info = info
	return tp, dets, nil
}

// prepare turns the board into a replay board: the sensors stay on the
// board, so the tools and the prompts' catalogue are the recorded ones, but
// the node does not run them (node.Options.NoSensors: their recordings are
// fed instead); MQTT on a broker of its own that nobody else reaches; no
// recorder of its own, a data directory of its own, heartbeats injected on
// the virtual clock, and the LLM as asked.
func prepare(cfg *board.Config, dir, llmMode string, srv *ollama) error {
	cfg.DataDir = dir
	cfg.Record = board.Options{}
	cfg.Dashboard = board.Options{}        // a replay serves no web page on the robot's port
	cfg.Agent.Heartbeat = 1000 * time.Hour // the loop's own ticker runs on the wall clock
	m := &cfg.MQTT
	m.Broker, m.Listen, m.Users, m.LocalAdmin = "embedded", "127.0.0.1:0", nil, false
	m.Username, m.Password, m.PasswordFile, m.TLS = "", "", "", board.TLS{}
	m.Discovery.Enabled = false
	switch llmMode {
	case "off":
		cfg.LLM.Enabled = false
	case "recorded":
		cfg.LLM.KeepAlive = 0
		cfg.LLM.Host = srv.url()
	}
	return nil
}
