package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/store"
)

// newDriver sets up a replay of the recording info describes: its virtual
// clock, and what reads the replay node's stream.
func newDriver(o Options, rep *Report, info *recording.Info, llmSrv *ollama, dets []*detector, dataDir string) *driver {
	// The virtual clock starts at the wall clock's now and the recording is
	// shifted to it: what still reads the wall clock (see WallClock) then
	// sees the same times as the virtual clock at --speed 1.
	wallStart := time.Now()
	d := &driver{clk: clock.NewFake(wallStart), probe: &probe{wake: make(chan struct{}, 1)}, llm: llmSrv, speed: o.Speed, dets: dets,
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
// dir its folder) and runs it until stopNode.
func (d *driver) startNode(ctx context.Context, cfg *board.Config, dir string) error {
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
	runCtx, stop := context.WithCancel(ctx)
	runErr := make(chan error, 1)
	go func() { runErr <- n.Run(runCtx, time.Now()) }()
	select {
	case <-n.Ready():
	case err := <-runErr:
		stop()
		return fmt.Errorf("the replay node stopped: %w", err)
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
	d.stopRun()
	if err := <-d.runErr; err != nil && !errors.Is(err, context.Canceled) {
		d.opts.Log.Warn("the replay node did not stop cleanly", "err", err)
	}
	d.rep.Missed += d.cur.Missed()
	d.n = nil
}

// recordTo records the replay into out (--out), a new file.
func (d *driver) recordTo(out string) error {
	if out == "" {
		return nil
	}
	rec, ok := node.Find[recorder](d.n)
	if !ok {
		return errors.New("--out: the recorder plugin is not compiled in")
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("--out %s: the file exists", out)
	}
	rec.RecordFile(out)
	d.out = rec
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
	}
}
