package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/store"
)

// newDriver sets up a replay of the recording info describes on the
// virtual clock clk, and what reads the replay node's stream.
func newDriver(o Options, rep *Report, info *recording.Info, clk *firingClock, llmSrv *ollama, dets []*detector, dataDir string) *driver {
	wallStart := clk.Now()
	d := &driver{clk: clk, probe: &probe{wake: make(chan struct{}, 1)}, llm: llmSrv, speed: o.Speed, dets: dets,
		start: wallStart, shift: wallStart.Sub(info.Start), wallStart: wallStart, rep: rep,
		progressTo: o.Progress, lastProgress: wallStart, opts: o, dataDir: dataDir, store: store.NewMemory()}
	d.readEvery, d.small = readEvery(o.Board)
	return d
}

// readEvery is how many observations the replay may feed before it reads
// the node's stream, and the sources whose rings are smaller than that (it
// reads after every one of theirs).
func readEvery(cfg *board.Config) (int, map[string]bool) {
	every, small := 128, map[string]bool{}
	if c := cfg.World.DefaultCapacity; c > 0 {
		every = min(every, c)
	}
	for src, c := range cfg.World.Capacities {
		if c < every {
			small[src] = true
		}
	}
	return every, small
}

// startNode builds the replay node from cfg (a board of the recording,
// dir its folder) and runs it until stopNode. With --out it records into
// that file, or on into the file carry hands over after a reload.
func (d *driver) startNode(ctx context.Context, cfg *board.Config, dir string, carry *record.Continuation) error {
	if err := prepare(cfg, d.dataDir, d.opts.LLM, d.llm); err != nil {
		return err
	}
	n, err := node.New(cfg, node.Options{Log: d.opts.Log, ConfigDir: dir, Store: d.store, NoSensors: true, Clock: d.clk})
	if err != nil {
		return fmt.Errorf("building the replay node: %w", err)
	}
	if err := n.LoadPlugin(ctx, d.probe); err != nil {
		n.Close()
		return err
	}
	// Before the node runs: the recorder reads the stream from its start.
	if err := d.recordTo(n, carry); err != nil {
		n.Close()
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- n.Run(runCtx, time.Now()) }()
	select {
	case <-n.Ready():
	case err := <-runErr:
		stop()
		return fmt.Errorf("the replay node stopped: %w", err)
	}
	if d.llm != nil {
		if err := llmChecked(ctx, n); err != nil {
			stop()
			<-runErr
			return err
		}
	}
	d.n, d.stopRun, d.runErr = n, stop, runErr
	d.cur = n.World.NewCursor(true)
	q := n.Agent.Status().Queue
	d.base = [2]uint64{q.Coalesced, q.Dropped}
	d.raised = d.probe.finished.Load() // cycles that ran before the first input
	d.lastSeq = 0
	return nil
}

// stopNode stops the replay node and waits for it.
func (d *driver) stopNode() {
	if d.n == nil {
		return
	}
	// What the loop does as it stops is read before the recorder and the
	// actuators stop (probe.OnAgentStop), while this goroutine waits.
	collect := d.collect
	d.probe.stopping.Store(&collect)
	d.stopRun()
	err := <-d.runErr
	d.probe.stopping.Store(nil)
	if err != nil && !errors.Is(err, context.Canceled) {
		d.opts.Log.Warn("the replay node did not stop cleanly", "err", err)
	}
	d.rep.Missed += d.cur.Missed()
	d.n = nil
}

// recordTo makes n's recorder record the replay (--out): into a new file,
// or on into the one carry hands over.
func (d *driver) recordTo(n *node.Node, carry *record.Continuation) error {
	out := d.opts.Out
	if out == "" {
		return nil
	}
	rec, ok := node.Find[recorder](n)
	if !ok {
		return errors.New("--out: the recorder plugin is not compiled in")
	}
	d.out = rec
	if carry != nil && rec.TakeOver(carry) {
		return nil
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("--out %s: the file exists", out)
	}
	rec.RecordFile(out)
	return nil
}

// reload applies a recorded reload as `edgeagent run` does (runNodes):
// the node stops and one built from the recorded board goes on, on the
// same clock, with the same store and --out file; a board that cannot be
// built brings the previous one back. The agent first handles what it was
// given before.
func (d *driver) reload(ctx context.Context, r *record.Reloaded, t time.Time) error {
	if err := d.settle(ctx); err != nil {
		return err
	}
	cfg, err := board.Parse(filepath.Join(r.Dir, "(reloaded board).yaml"), []byte(r.Board))
	if err == nil {
		cfg, err = d.files.localize(cfg, r.Dir)
	}
	if err != nil {
		return fmt.Errorf("the board reloaded at +%s no longer loads:\n%w", t.Sub(d.start).Round(time.Millisecond), err)
	}
	var carry *record.Continuation
	if d.out != nil {
		if err := record.NoteReload(d.n.World, cfg, r.Dir); err != nil {
			return err
		}
		carry = d.out.HandOver()
	}
	prev, heartbeat := d.n.Board, cfg.Agent.Heartbeat
	d.stopNode()
	d.rep.Reloads++
	d.probe.reloads.Store(int64(d.rep.Reloads)) // the new node counts its cycles from 1
	if err := d.startNode(ctx, cfg, d.opts.Dir, carry); err != nil {
		d.opts.Log.Warn("the reloaded board could not be built; the previous one goes on", "err", err)
		return d.startNode(ctx, prev, d.opts.Dir, carry)
	}
	d.heartbeat, d.nextBeat = heartbeat, t.Add(heartbeat)
	return nil
}

// report completes the report with what the replay did.
func (d *driver) report() {
	rep := d.rep
	rep.Took = time.Since(d.wallStart)
	rep.Replayed = d.got
	rep.Divergence, rep.Decision, rep.Counts = compare(rep.Recorded, rep.Replayed)
	for _, det := range d.dets {
		compareDetections(det.rep)
		rep.Detectors = append(rep.Detectors, *det.rep)
	}
	if d.llm != nil {
		rep.LLMServed, rep.LLMNote = d.llm.served(), d.llm.mismatch()
		rep.EmbedServed = d.llm.embedded()
	}
}

// llmChecked waits until the node's LLM client has made its start-up
// check of the (replay's) model server, so the first input finds the
// client where the recorded one was: down when the recording's first LLM
// call found the server down, which the replay's /api/version answers.
// Live the check took milliseconds against seconds before the first
// event; a replay fed as fast as possible would otherwise race it and make
// a call that was recorded "unavailable" (seen: 2 in 60 replays).
func llmChecked(ctx context.Context, n *node.Node) error {
	p, ok := node.Find[interface{ LLMChecked() <-chan struct{} }](n)
	if !ok {
		return nil
	}
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	select {
	case <-p.LLMChecked():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-deadline.C:
		return fmt.Errorf("the replay's LLM client did not check the recorded model server within %v", settleLimit)
	}
}
