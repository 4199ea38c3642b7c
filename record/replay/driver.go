package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// recorder is the recorder plugin as --out uses it.
type recorder interface {
	RecordFile(path string)
	Through() uint64
	HandOver() *record.Continuation
	TakeOver(*record.Continuation) bool
}

// driver feeds the inputs and collects what the agent does.
type driver struct {
	n         *node.Node
	clk       *firingClock
	probe     *probe
	llm       *ollama
	out       recorder // nil without --out
	cur       *worldmodel.Cursor
	speed     float64
	start     time.Time     // of the replay, on the virtual clock
	heartbeat time.Duration // the board's; the replay gives the agent its heartbeats
	nextBeat  time.Time
	shift     time.Duration // recorded time + shift = replay time
	wallStart time.Time
	rep       *Report
	dets      []*detector

	calls   sync.WaitGroup // tools called from outside, still running
	raised  uint64         // interrupts given to the agent
	lastSeq uint64         // the newest item collect has seen
	// hold is the LLM hold the replay goes on past (see settle), and
	// holdCycle the cycle that waits on it.
	hold      int
	holdCycle uint64
	// ackedCycles: the cycles held for their preemption the replay has
	// fed past.
	ackedCycles uint64
	// readEvery and small: see run.
	readEvery int
	small     map[string]bool
	fed       int
	base      [2]uint64
	items     []worldmodel.Item
	got       []Action

	progressTo   io.Writer // nil: quiet
	lastProgress time.Time // on the wall clock

	// The replay node's life (see startNode): what it is built with, and
	// how it is stopped.
	opts    Options
	files   *boardFiles
	dataDir string
	store   store.Store // one for the replay: a reload keeps it, as it keeps the robot's
	stopRun context.CancelFunc
	runErr  chan error
}

func (d *driver) run(ctx context.Context, inputs []input) error {
	// What the detectors reported when they were built (a camera's motion
	// off) goes first.
	for _, det := range d.dets {
		if err := d.handOver(ctx, det, d.start); err != nil {
			return err
		}
	}
	for i, in := range inputs {
		t := in.t.Add(d.shift)
		d.progress(t, i, len(inputs))
		if err := d.beatsUntil(ctx, t); err != nil {
			return err
		}
		if err := d.at(ctx, t); err != nil {
			return err
		}
		if err := d.feed(ctx, in, t); err != nil {
			return err
		}
	}
	// A call still waiting for its recorded deadline ends before the end.
	if err := d.throughDeadlines(ctx, time.Time{}); err != nil {
		return err
	}
	if err := d.settle(ctx); err != nil {
		return err
	}
	return d.finishCalls(ctx)
}

// firingClock is the replay's virtual clock as the node sees it. It counts
// the AfterFunc calls that ran: in a run those are deadlines
// (clock.WithTimeout), and when one has run the driver waits for what it
// ends before it feeds anything later.
type firingClock struct {
	*clock.Fake
	fired atomic.Uint64
}

func (c *firingClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return c.Fake.AfterFunc(d, func() {
		c.fired.Add(1)
		f()
	})
}

// beatsUntil gives the agent the heartbeats due up to t, on the virtual
// clock, each handled before the next.
func (d *driver) beatsUntil(ctx context.Context, t time.Time) error {
	for d.heartbeat > 0 && !d.nextBeat.After(t) {
		if err := d.at(ctx, d.nextBeat); err != nil {
			return err
		}
		d.n.Agent.Interrupt(worldmodel.Event{Time: d.nextBeat, Kind: "heartbeat", Source: "agent", Priority: worldmodel.Low})
		d.raised++
		d.rep.Heartbeats++
		if err := d.settle(ctx); err != nil {
			return err
		}
		d.nextBeat = d.nextBeat.Add(d.heartbeat)
	}
	return nil
}

// feed gives the node one recorded input at replay time t.
func (d *driver) feed(ctx context.Context, in input, t time.Time) error {
	switch {
	case in.call != nil:
		return d.invoke(ctx, *in.call)
	case in.cmd != nil:
		return d.submit(ctx, *in.cmd)
	case in.reload != nil:
		return d.reload(ctx, in.reload, t)
	case in.det != nil:
		return d.detect(ctx, in.det, *in.obs, t)
	case in.obs != nil:
		o := *in.obs
		o.Time = t
		if o.Event != nil {
			ev := *o.Event
			ev.Time = t
			o.Event = &ev
		}
		return d.observe(ctx, o)
	}
	ev := *in.event
	ev.Time = t
	return d.raise(ctx, ev)
}

// progress says where the replay is, at most once a second of wall time.
func (d *driver) progress(t time.Time, i, n int) {
	now := time.Now()
	if d.progressTo == nil || now.Sub(d.lastProgress) < time.Second {
		return
	}
	d.lastProgress = now
	fmt.Fprintf(d.progressTo, "replay: +%s of %s (%d of %d inputs fed, %d actions compared so far)\n",
		t.Sub(d.start).Round(100*time.Millisecond), d.rep.Span.Round(100*time.Millisecond), i, n, len(d.got))
}

// observe appends an observation to the node's world model.
func (d *driver) observe(ctx context.Context, o worldmodel.Observation) error {
	d.n.World.Append(o)
	// Read the node's stream before a bounded ring can overwrite what was
	// not read: after every input to a small ring, every readEvery inputs
	// otherwise.
	if d.fed++; d.fed%d.readEvery == 0 || d.small[o.Source] {
		return d.keepUp(ctx)
	}
	return nil
}

// raise gives the agent an event and waits until it has handled it.
func (d *driver) raise(ctx context.Context, ev worldmodel.Event) error {
	d.n.Raise(ev)
	d.raised++
	return d.settle(ctx)
}

// detect runs a sensor's detectors over one recorded frame or audio chunk
// at replay time t and hands what they report to the node.
func (d *driver) detect(ctx context.Context, det *detector, in worldmodel.Observation, t time.Time) error {
	in.Time = t
	det.rep.Fed++
	if err := det.red.Feed(in); err != nil {
		if det.rep.Bad++; det.rep.Bad == 1 {
			det.rep.BadNote = fmt.Sprintf("at +%s (%s): %v", t.Sub(d.start).Round(time.Millisecond), in.Source, err)
		}
	}
	return d.handOver(ctx, det, t)
}

// handOver gives the node what a sensor's detectors reported, in order, as
// the sensor's sink would: a report without a time gets t.
func (d *driver) handOver(ctx context.Context, det *detector, t time.Time) error {
	for i := range det.out {
		it := &det.out[i]
		if it.Kind == worldmodel.ItemObservation {
			if it.Obs.Time.IsZero() {
				it.Obs.Time = t
			}
			if err := d.observe(ctx, it.Obs); err != nil {
				return err
			}
			continue
		}
		ev := it.Event
		if ev.Time.IsZero() {
			ev.Time = t
		}
		det.rep.Replayed = append(det.rep.Replayed, Detection{Kind: ev.Kind, Time: ev.Time.Add(-d.shift), Message: ev.Message})
		if err := d.raise(ctx, ev); err != nil {
			return err
		}
	}
	clear(det.out)
	det.out = det.out[:0]
	return nil
}

// invoke makes a call that came from outside, as it was made, and waits
// for it to return, unless it waits for virtual time (a servo move with
// wait: true, whose ramp steps on the clock): it says so (clock.Waiting),
// and then the replay goes on feeding, which is what moves that time, and
// the call ends on its own. That is a barrier, not a guess: whatever the
// call did before it waits has happened when the replay goes on.
func (d *driver) invoke(ctx context.Context, c tools.Call) error {
	waits := make(chan struct{}, 1)
	callCtx := clock.WithWaitNotice(ctx, func() {
		select {
		case waits <- struct{}{}:
		default:
		}
	})
	done := make(chan struct{})
	d.calls.Add(1)
	go func() {
		defer d.calls.Done()
		defer close(done)
		_, _ = d.n.Tools.Invoke(callCtx, c) // its tool_call record is what is compared
	}()
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	select {
	case <-done:
		return d.keepUp(ctx)
	case <-waits:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-deadline.C:
		return fmt.Errorf("the tool %s did not return within %v", c.Tool, settleLimit)
	}
}

// submit gives the agent a command as it was given (its cycle's decision
// is what is compared) and waits until the agent has handled it.
func (d *driver) submit(ctx context.Context, c agent.Command) error {
	d.calls.Add(1)
	go func() {
		defer d.calls.Done()
		_, _ = d.n.Agent.Submit(ctx, c)
	}()
	d.raised++
	return d.settle(ctx)
}

// finishCalls moves virtual time on, 100 ms a millisecond, until the
// calls still waiting for it have returned.
func (d *driver) finishCalls(ctx context.Context) error {
	done := make(chan struct{})
	go func() { d.calls.Wait(); close(done) }()
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return d.keepUp(ctx)
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("tool calls still running %v after the last input", settleLimit)
		case <-tick.C:
			d.clk.Advance(100 * time.Millisecond)
		}
	}
}

// at moves the virtual clock to t (firing the node's timers) and, with a
// speed, waits for the wall clock to catch up.
func (d *driver) at(ctx context.Context, t time.Time) error {
	if err := d.throughDeadlines(ctx, t); err != nil {
		return err
	}
	return d.advance(ctx, t)
}

// throughDeadlines: while the agent waits on an LLM call that ran out its
// deadline when recorded (the replay's server holds it: llmHold), the
// clock moves to t (no bound: zero t) timer by timer, and when a deadline
// has fired the replay waits until the held call has ended and the agent
// has handled what followed, before it moves on. So the call fails at its
// deadline, and what came after it live comes after it again.
func (d *driver) throughDeadlines(ctx context.Context, t time.Time) error {
	for {
		h, late := d.llmHold()
		if !late {
			return nil
		}
		next, ok := d.clk.Next()
		if !ok || !t.IsZero() && next.After(t) {
			return nil
		}
		fired := d.clk.fired.Load()
		if err := d.advance(ctx, next); err != nil {
			return err
		}
		if d.clk.fired.Load() == fired {
			continue // a timer, not a deadline
		}
		if err := d.released(ctx, h); err != nil {
			return err
		}
		if err := d.settle(ctx); err != nil {
			return err
		}
	}
}

// released waits until the LLM call of hold h has ended: its deadline has
// fired, and the client closes the request.
func (d *driver) released(ctx context.Context, h int) error {
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		if n, late := d.llmHold(); !late || n != h {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("an LLM call that ran out its deadline when recorded still waited %v after a deadline fired (at +%v of the recording)", settleLimit, d.clk.Now().Sub(d.start))
		case <-poll.C:
		}
	}
}

// llmHold is the replay's LLM server's hold in progress, if any (see
// ollama.hold).
func (d *driver) llmHold() (n int, late bool) {
	if d.llm == nil {
		return 0, false
	}
	return d.llm.hold()
}

// waitsOnHold reports whether the agent waits on LLM hold n for what only
// comes later (the input that cut the call off when recorded, or the clock
// reaching its deadline): the cycle that made the call still runs and
// nothing queued outranks it (agent.Loop.Steady). Then the replay goes
// on feeding; otherwise the loop is preempting that cycle, or it has
// ended, and the replay waits for the agent to settle.
func (d *driver) waitsOnHold(n int) bool {
	cycle, steady := d.n.Agent.Steady()
	if n != d.hold {
		d.hold, d.holdCycle = n, cycle // the call is held while its cycle runs
	}
	return steady && cycle == d.holdCycle
}

// advance moves the virtual clock to t and, with a speed, waits for the
// wall clock to catch up.
func (d *driver) advance(ctx context.Context, t time.Time) error {
	if now := d.clk.Now(); t.After(now) {
		d.clk.Advance(t.Sub(now))
	}
	if d.speed > 0 {
		due := d.wallStart.Add(time.Duration(float64(t.Sub(d.start)) / d.speed))
		if d := time.Until(due); d > 0 {
			return clock.Sleep(ctx, clock.Real(), d)
		}
	}
	return nil
}

// settleLimit bounds how long the agent may take over one input before
// the replay gives up (a tool ignoring its context, a wedged loop).
const settleLimit = 30 * time.Second

// settle waits until every interrupt given to the agent has been handled
// (coalesced and dropped ones excepted), or the agent waits on an LLM call
// held for what comes later (see waitsOnHold and throughDeadlines).
func (d *driver) settle(ctx context.Context) error {
	deadline := time.NewTimer(settleLimit)
	defer deadline.Stop()
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		st := d.n.Agent.Status()
		q := st.Queue
		want := d.raised - (q.Coalesced - d.base[0]) - (q.Dropped - d.base[1])
		// Idle too: a tool called from outside can raise an interrupt of
		// its own (estop.trigger's e-stop), which the count does not know;
		// without it the last cycle of a recording was sometimes not
		// waited for.
		if d.probe.finished.Load() >= want && st.State == "idle" && q.Queued == 0 {
			return d.keepUp(ctx)
		}
		if n, _ := d.llmHold(); n != 0 && d.waitsOnHold(n) {
			return d.keepUp(ctx)
		}
		// So does a cycle held for its preemption (see probe), and it
		// stays handled while it is held and nothing else waits: the
		// reload that ends a cycle held for it settles first.
		if h := d.probe.held.Load(); h != d.ackedCycles {
			d.ackedCycles = h
			return d.keepUp(ctx)
		}
		if d.probe.holding.Load() && q.Queued == 0 && d.probe.finished.Load()+1 >= want {
			return d.keepUp(ctx)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("the agent did not handle an input within %v (at +%v of the recording; %d interrupts, %d cycles done, queue %+v)", settleLimit, d.clk.Now().Sub(d.start), want, d.probe.finished.Load(), q)
		case <-d.probe.wake:
		case <-poll.C: // coalescing and the LLM server signal nothing
		}
	}
}

// keepUp collects what the node did and, when the replay is recorded,
// waits for the recorder to have written it: the node's rings are bounded,
// and a replay feeds faster than a disk takes.
func (d *driver) keepUp(ctx context.Context) error {
	d.collect()
	if d.out == nil {
		return nil
	}
	deadline := time.Now().Add(settleLimit)
	for d.out.Through() < d.lastSeq {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("--out: the recorder did not keep up within %v", settleLimit)
		}
		time.Sleep(100 * time.Microsecond)
	}
	return nil
}

// collect reads what the replay node did since the last call.
func (d *driver) collect() {
	d.items = d.cur.Read(d.items[:0], 0)
	for _, it := range d.items {
		d.lastSeq = max(d.lastSeq, it.Seq())
		switch it.Kind {
		case worldmodel.ItemEvent:
			switch it.Event.Kind {
			case "decision":
				d.got = append(d.got, decisionAction(it.Event.Time.Add(-d.shift), it.Event.Message, roundTrip(it.Event.Data)))
			case "actuators_stopped":
				d.got = append(d.got, estopAction(it.Event.Time.Add(-d.shift), it.Event.Priority, roundTrip(it.Event.Data)))
			}
		case worldmodel.ItemRecord:
			switch r := it.Record; r.Kind {
			case "tool_call", worldmodel.RecordActuator:
				d.got = append(d.got, recordAction(r.Time.Add(-d.shift), r.Kind, r.Source, r.Data))
			case "llm":
				var x exchange
				if json.Unmarshal(r.Data, &x) == nil {
					d.got = append(d.got, llmAction(r.Time.Add(-d.shift), r.Source, x))
				}
			}
		}
	}
	clear(d.items)
}

// roundTrip gives event data the shape it has when read from a recording
// (a trace struct becomes a map), so both sides compare alike.
func roundTrip(data map[string]any) map[string]any {
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out) // it was just encoded
	return out
}
