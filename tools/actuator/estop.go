package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// EStopKind is the event kind that trips the e-stop (any source: the MQTT
// estop topic, a GPIO button, estop.trigger).
const EStopKind = "estop"

// stopBound is how long EStop waits for the actuators before returning: a
// hung write (a wedged I2C bus) must not hold the caller, and must not hold
// the other actuators either — they are stopped in parallel.
const stopBound = time.Second

// EStopStatus is the state of the latch.
type EStopStatus struct {
	Latched bool      `json:"latched"`
	Since   time.Time `json:"since,omitzero"`
	Source  string    `json:"source,omitempty"`
	Message string    `json:"message,omitempty"`
	Count   uint64    `json:"count"` // e-stops since the agent started
	// Last is the most recent e-stop's report.
	Last *EStopReport `json:"last,omitempty"`
}

// EStopReport says what one e-stop did.
type EStopReport struct {
	Time    time.Time         `json:"time"`
	Source  string            `json:"source"`
	Took    time.Duration     `json:"took_ns"` // event handled → every actuator stopped
	Stopped map[string]string `json:"stopped"` // actuator → what was done
	Failed  map[string]string `json:"failed,omitempty"`
	// Pending lists actuators whose stop had not finished within the bound
	// (a hung write); it keeps trying in the background.
	Pending []string `json:"pending,omitempty"`
}

// HandleCritical is the node's Critical-event handler: an "estop" event
// stops everything. Other Critical events are not the actuators' business.
func (s *Set) HandleCritical(e worldmodel.Event) {
	if e.Kind == EStopKind {
		s.EStop(e)
	}
}

// EStop latches the e-stop and stops every actuator at once, directly (not
// through the agent loop): motors stopped, outputs off (unless their
// on_estop says hold), servo ramps ended where they are, every background
// task cancelled. Until Reset, every actuating command is refused; stop and
// off commands still pass. Calling it again while latched stops again.
//
// It is five steps: latch, stop, wait (bounded), persist, report. Only the
// first two are on the ≤ 100 µs budget of BenchmarkEStop; persisting and
// the audit never wait for a disk.
func (s *Set) EStop(e worldmodel.Event) EStopReport {
	start := s.clk.Now()
	if e.Source == "" {
		e.Source = "unknown"
	}
	s.latch(e, start)
	run := s.stopAll(start, e.Source)
	rep := run.wait()
	s.persist(rep)
	s.report(e, rep)
	return rep
}

// latch refuses every actuating command from now on and records the cause
// of the first e-stop.
func (s *Set) latch(e worldmodel.Event, at time.Time) {
	s.latched.Store(true) // first: a command that takes a lock after this is refused
	s.emu.Lock()
	if !s.es.Latched {
		s.es.Latched, s.es.Since, s.es.Source, s.es.Message = true, at, e.Source, e.Message
	}
	s.es.Count++
	// Again under the lock: a Reset between the first store and here must
	// not leave the status latched and the actuators unlatched.
	s.latched.Store(true)
	s.emu.Unlock()
}

// stopRun is one e-stop's stopping: which actuators are left, and the
// report that wait hands back. An actuator stopped after wait gave up is
// logged and recorded as an event instead.
type stopRun struct {
	s     *Set
	start time.Time
	all   sync.WaitGroup // the actuators stopped on goroutines of their own

	mu       sync.Mutex
	left     map[string]bool
	rep      EStopReport
	returned bool // wait has reported; a late stop is logged instead
}

// stopAll stops every actuator, most dangerous first, on this goroutine:
// no hand-off to another goroutine that a busy CPU might not schedule for
// a while. An actuator whose lock is held (a write in progress, possibly a
// hung one) gets a goroutine of its own instead, so it cannot hold up the
// others.
func (s *Set) stopAll(start time.Time, source string) *stopRun {
	run := &stopRun{s: s, start: start, left: make(map[string]bool, len(s.acts)),
		rep: EStopReport{Time: start, Source: source, Stopped: map[string]string{}}}
	for _, a := range s.acts {
		run.left[a.base().cfg.Name] = true
	}
	for _, a := range s.stopOrder {
		b := a.base()
		if b.mu.TryLock() {
			what, err := s.stopLocked(a)
			b.mu.Unlock()
			run.note(b.cfg.Name, what, err)
			continue
		}
		run.all.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer run.all.Done()
			b.mu.Lock()
			what, err := s.stopLocked(a)
			b.mu.Unlock()
			run.note(b.cfg.Name, what, err)
		}()
	}
	return run
}

// note records how one actuator's stop went.
func (r *stopRun) note(name, what string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.returned {
		after := r.s.clk.Since(r.start)
		r.s.log.Warn("e-stop: a pending actuator stopped late", "actuator", name, "did", what, "err", err, "after", after)
		r.s.world.Record(worldmodel.Event{Kind: "actuator_stopped_late", Source: name, Priority: worldmodel.High,
			Message: fmt.Sprintf("%s stopped %s after the e-stop (err: %v)", name, after.Round(time.Millisecond), err)})
		return
	}
	delete(r.left, name)
	switch {
	case err != nil:
		if r.rep.Failed == nil {
			r.rep.Failed = map[string]string{}
		}
		r.rep.Failed[name] = err.Error()
	case what != "":
		r.rep.Stopped[name] = what
	}
}

// wait gives the actuators stopped on goroutines of their own up to
// stopBound, then reports: those still stopping are Pending and go on in
// the background.
func (r *stopRun) wait() EStopReport {
	r.mu.Lock()
	deferred := len(r.left) > 0
	r.mu.Unlock()
	if deferred {
		done := make(chan struct{})
		r.s.wg.Add(1)
		go func() { defer r.s.wg.Done(); r.all.Wait(); close(done) }()
		t := r.s.clk.NewTimer(stopBound)
		select {
		case <-done:
		case <-t.C():
		}
		t.Stop()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.returned = true
	r.rep.Took = r.s.clk.Since(r.start)
	r.rep.Pending = sortedKeys(r.left)
	final := r.rep
	final.Stopped = maps.Clone(r.rep.Stopped)
	final.Failed = maps.Clone(r.rep.Failed)
	return final
}

// persist keeps the report as the latch's last one and saves the latch in
// the background (see persistLatch), so a restart comes back stopped.
func (s *Set) persist(rep EStopReport) {
	s.emu.Lock()
	s.es.Last = &rep
	s.emu.Unlock()
	s.persistLatch()
	s.world.SetHealth(healthEStop, "latched")
}

// report tells the world model, the log and the audit what the e-stop did.
func (s *Set) report(e worldmodel.Event, rep EStopReport) {
	failed := len(rep.Failed)+len(rep.Pending) > 0
	msg := fmt.Sprintf("e-stop from %s: %d actuators stopped in %s", e.Source, len(rep.Stopped), rep.Took.Round(time.Microsecond))
	prio := worldmodel.High
	if failed {
		msg += fmt.Sprintf("; FAILED to stop %v %v", rep.Failed, rep.Pending)
		prio = worldmodel.Critical
		s.log.Error("e-stop could not stop every actuator", "failed", rep.Failed, "pending", rep.Pending)
	} else {
		s.log.Warn("e-stop", "source", e.Source, "message", e.Message, "took", rep.Took)
	}
	s.world.Record(worldmodel.Event{Kind: "actuators_stopped", Source: "actuators", Priority: prio, Message: msg,
		Data: map[string]any{"took_us": rep.Took.Microseconds(), "cause": e.Source}})
	entry := Entry{Caller: "estop:" + e.Source, Tool: "estop", Actuator: "*",
		Requested: Marshal(map[string]any{"source": e.Source, "message": e.Message}), Applied: Marshal(rep),
		Result: map[bool]string{false: "ok", true: "failed"}[failed]}
	entry.Time, entry.Order = s.audit.stamp() // kept if the entry is filed from another goroutine
	// In order with the other entries, unless the queue is full: then from
	// another goroutine, because the raiser (node.Raise, then the agent
	// loop's interrupt) must not wait for a busy disk.
	if !s.audit.tryRecord(entry) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.audit.record(entry)
		}()
	}
}

// stopLocked brings one actuator to its e-stop state.
func (s *Set) stopLocked(a Actuator) (string, error) {
	b := a.base()
	b.CancelTaskLocked()
	if !b.opened {
		return "", nil // never started: nothing is moving
	}
	what, err := a.SafeLocked(true)
	if err != nil {
		return "", err
	}
	b.SetStateLocked("stopped (estop)")
	return what, nil
}

// Reset releases the latch. Actuators stay where the e-stop left them:
// nothing restarts by itself.
func (s *Set) Reset() (was EStopStatus) {
	s.emu.Lock()
	was = s.es
	s.es.Latched, s.es.Since, s.es.Source, s.es.Message = false, time.Time{}, "", ""
	s.latched.Store(false)
	s.emu.Unlock()
	if !was.Latched {
		return was
	}
	s.persistLatch()
	s.world.SetHealth(healthEStop, "ok")
	for _, a := range s.acts {
		b := a.base()
		b.mu.Lock()
		if b.state == "stopped (estop)" {
			b.SetStateLocked(a.IdleState())
		}
		b.mu.Unlock()
	}
	return was
}

// Latched reports whether the e-stop is latched.
func (s *Set) Latched() bool { return s.latched.Load() }

// EStopState returns the latch state.
func (s *Set) EStopState() EStopStatus {
	s.emu.Lock()
	defer s.emu.Unlock()
	return s.es
}

func (s *Set) raise(e worldmodel.Event) {
	if s.o.Raise != nil {
		s.o.Raise(e)
		return
	}
	e = s.world.Record(e)
	if e.Priority == worldmodel.Critical {
		s.HandleCritical(e)
	}
}

type triggerParams struct {
	Reason string `json:"reason"`
}

type auditParams struct {
	Limit  int       `json:"limit"`
	Tool   string    `json:"tool"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
	Safety bool      `json:"safety"`
}

func (s *Set) estopTools() []tools.Tool {
	touches := make([]string, 0, len(s.acts))
	for _, n := range s.Names() {
		touches = append(touches, "actuator."+n)
	}
	trigger := tools.Typed(tools.Spec{
		Name:        "estop.trigger",
		Description: "Emergency stop: stop every motor, servo and output at once and refuse all actuation until an admin resets it.",
		Permission:  "actuate",
		Touches:     touches,
		Params: json.RawMessage(`{"type":"object","properties":{
  "reason":{"type":"string","maxLength":200,"default":"","description":"why, for the log"}},"additionalProperties":false}`),
	}, func(ctx context.Context, p triggerParams) (tools.Result, error) {
		caller := tools.CallerOf(ctx)
		before := s.EStopState().Count
		s.raise(worldmodel.Event{Kind: EStopKind, Source: "skill", Priority: worldmodel.Critical,
			Message: fmt.Sprintf("estop.trigger by %s%s", caller, msgSuffix(p.Reason))})
		st := s.EStopState()
		if st.Count == before || st.Last == nil {
			// The event went somewhere that did not call HandleCritical: stop
			// here rather than trust the wiring.
			rep := s.EStop(worldmodel.Event{Kind: EStopKind, Source: "skill", Message: p.Reason})
			st.Last = &rep
		}
		return tools.Result{Value: map[string]any{"latched": true, "report": st.Last}}, nil
	})
	reset := tools.Func(tools.Spec{
		Name:        "estop.reset",
		Description: "Release a latched emergency stop so actuators accept commands again. Nothing restarts by itself.",
		Permission:  "admin",
		Touches:     touches,
	}, func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
		was := s.Reset()
		caller := tools.CallerOf(ctx)
		if !was.Latched {
			return tools.Result{Value: map[string]any{"latched": false}, Notes: []string{"the e-stop was not latched"}}, nil
		}
		s.raise(worldmodel.Event{Kind: "estop_reset", Source: "actuators", Priority: worldmodel.Normal,
			Message: fmt.Sprintf("e-stop reset by %s (latched since %s by %s)", caller, was.Since.Format(time.TimeOnly), was.Source)})
		s.audit.record(Entry{Caller: caller, Tool: "estop.reset", Actuator: "*",
			Applied: Marshal(map[string]any{"latched": false}), Result: "ok",
			Notes: []string{fmt.Sprintf("latched for %s", s.clk.Since(was.Since).Round(time.Millisecond))}})
		return tools.Result{Value: map[string]any{"latched": false, "was_latched_since": was.Since, "source": was.Source}}, nil
	})
	status := tools.Func(tools.Spec{
		Name:        "estop.status",
		Description: "Whether the emergency stop is latched, since when and why, and what the last e-stop did.",
		Permission:  "read",
		Touches:     touches,
	}, func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Value: s.EStopState()}, nil
	})
	query := tools.Typed(tools.Spec{
		Name:        "audit.query",
		Description: "Read the audit log of physical actions and administration: time, caller, tool, parameters requested and applied, result.",
		Permission:  "admin",
		Params: json.RawMessage(`{"type":"object","properties":{
  "limit":{"type":"integer","minimum":1,"maximum":1000,"default":50},
  "tool":{"type":"string","default":"","description":"only this tool (e.g. drive.drive), or this actuator's tools (e.g. drive)"},
  "since":{"type":"string","format":"date-time","description":"only entries at or after this time (RFC 3339)"},
  "until":{"type":"string","format":"date-time","description":"only entries before this time (RFC 3339)"},
  "safety":{"type":"boolean","default":false,"description":"only e-stops, resets, refusals and admin actions"}},
"additionalProperties":false}`),
	}, func(ctx context.Context, p auditParams) (tools.Result, error) {
		entries, err := s.audit.query(ctx, Query{Limit: p.Limit, Tool: p.Tool, Since: p.Since, Until: p.Until, SafetyOnly: p.Safety})
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Value: entries}, nil
	})
	return []tools.Tool{trigger, reset, status, query}
}

// The latch survives a restart: a robot that was e-stopped comes back up
// stopped (its actuators in their safe state, not their `initial` one)
// until someone resets it, as a physical e-stop switch stays pressed.
// healthEStop is the world model's health component for the latch: the
// summary, agent.status and MQTT's retained state/estop read it there.
const healthEStop = "estop"

const (
	latchBucket = "estop"
	latchKey    = "latch"
)

// persistLatch writes the latch state in the background: the e-stop must
// not wait for an fsync. One goroutine at a time writes, always the state
// current when it writes, and changes that come while it writes are
// coalesced into its next write: however many e-stops and resets, the
// store ends with the last state, and nothing piles up behind a slow disk.
func (s *Set) persistLatch() {
	s.pmu.Lock()
	s.persistDirty = true
	if s.persisting {
		s.pmu.Unlock()
		return
	}
	s.persisting = true
	s.wg.Add(1)
	s.pmu.Unlock()
	go func() {
		defer s.wg.Done()
		for {
			s.pmu.Lock()
			if !s.persistDirty {
				s.persisting = false
				s.pmu.Unlock()
				return
			}
			s.persistDirty = false
			s.pmu.Unlock()
			st := s.EStopState()
			var err error
			if st.Latched {
				st.Last = nil
				err = s.o.Store.Put(latchBucket, latchKey, st)
			} else {
				err = s.o.Store.Delete(latchBucket, latchKey)
			}
			if err != nil {
				s.log.Error("e-stop latch not saved: it will not survive a restart", "latched", st.Latched, "err", err)
			}
		}
	}()
}

func (s *Set) loadLatch() error {
	var st EStopStatus
	ok, err := s.o.Store.Get(latchBucket, latchKey, &st)
	if err != nil {
		return fmt.Errorf("e-stop latch: %w", err)
	}
	if ok && st.Latched {
		s.es = EStopStatus{Latched: true, Since: st.Since, Source: st.Source, Message: st.Message}
		s.latched.Store(true)
		s.world.SetHealth(healthEStop, "latched")
		s.log.Warn("the e-stop is still latched from before the restart; estop.reset (admin) releases it",
			"since", st.Since, "source", st.Source)
	}
	return nil
}
