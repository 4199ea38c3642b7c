package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Base is what every actuator has, whatever its kind: its config, its lock,
// its rate limit, its state and its one background task. A kind embeds
// *Base; every write to the hardware happens under the lock, and the
// background work (a ramp, a dead-man timer, a beep pattern) runs in one
// goroutine that any new command, stop or e-stop cancels.
type Base struct {
	s        *Set
	self     Actuator // the kind's actuator around this Base
	cfg      Config
	envelope *Envelope // the shared limits, once decoded
	bucket   *bucket
	rank     int

	mu          sync.Mutex
	opened      bool
	openErr     error
	state       string
	fault       string
	task        *task // the running background task, if any
	rateLimited uint64
}

func (b *Base) base() *Base { return b }

// Config is the actuator's block.
func (b *Base) Config() *Config { return &b.cfg }

// DecodeLimits decodes the block's `limits:` into l, the kind's limits
// struct holding its defaults (see Limits), strictly: a key of another
// kind is an unknown key, at its file:line:col. It checks the shared
// limits; the kind checks its own after it, reporting with
// Config.BadLimit. A kind with limit keys of its own calls it from New, as
// it decodes its options; for any other kind the shared ones are decoded
// after New.
func (b *Base) DecodeLimits(l Limits) error {
	if b.envelope != nil {
		return fmt.Errorf("actuator %s: limits decoded twice", b.cfg.Name) // a kind's mistake
	}
	if b.cfg.DecodeLimits != nil {
		if err := b.cfg.DecodeLimits(l); err != nil {
			return err
		}
	}
	e := l.shared()
	if e.OnViolation == "" {
		e.OnViolation = "refuse"
	}
	switch {
	case e.RateLimit < 0:
		return b.cfg.BadLimit("rate_limit", "must not be negative")
	case e.OnViolation != "refuse" && e.OnViolation != "clamp":
		return b.cfg.BadLimit("on_violation", "not one of refuse, clamp")
	}
	b.envelope, b.bucket = e, newBucket(e.RateLimit)
	return nil
}

// Clamp reports whether values outside the kind's limits are clamped
// rather than refused (limits.on_violation).
func (b *Base) Clamp() bool { return b.envelope != nil && b.envelope.Clamp() }

// WriteInitial writes the block's initial with write, for kinds whose
// state is a number (a duty, an angle, a level); a block without one
// writes nothing.
func (b *Base) WriteInitial(write func(v float64) error) error {
	if b.cfg.Initial == "" {
		return nil
	}
	v, err := strconv.ParseFloat(b.cfg.Initial, 64)
	if err != nil {
		return fmt.Errorf("initial %q: %w", b.cfg.Initial, err)
	}
	return write(v)
}

// Name is the actuator's name.
func (b *Base) Name() string { return b.cfg.Name }

// Lock and Unlock guard the actuator; a background task takes the lock
// through NextLocked and releases it with Unlock.
func (b *Base) Lock()   { b.mu.Lock() }
func (b *Base) Unlock() { b.mu.Unlock() }

// Adaptor is the connected platform adaptor (OpenLocked and later).
func (b *Base) Adaptor() Adaptor { return b.s.hw }

// Platform is the board's platform (raspi, jetson, sim).
func (b *Base) Platform() string { return b.s.o.Platform }

// Now is the Set's clock.
func (b *Base) Now() time.Time { return b.s.clk.Now() }

func (b *Base) ensureOpenLocked() error {
	if b.opened {
		return nil
	}
	if err := b.self.OpenLocked(); err != nil {
		b.openErr = err
		b.faultLocked(err)
		return err
	}
	b.opened, b.openErr = true, nil
	return nil
}

// SetStateLocked sets the state, mirrored into the world model.
func (b *Base) SetStateLocked(state string) {
	b.state = state
	b.s.world.SetActuator(b.cfg.Name, state)
}

func (b *Base) faultLocked(err error) {
	b.fault = err.Error()
	b.s.world.SetHealth(b.cfg.Name, "degraded: "+err.Error())
}

// ClearFaultLocked marks the actuator healthy after a good write.
func (b *Base) ClearFaultLocked() {
	if b.fault != "" {
		b.fault = ""
		b.s.world.SetHealth(b.cfg.Name, "ok")
	}
}

// HWErrLocked records a hardware failure and returns it.
func (b *Base) HWErrLocked(err error) error {
	b.faultLocked(err)
	return fmt.Errorf("%s: write failed: %w", b.cfg.Name, err)
}

// Observe appends a reading <name>.<quantity> to the world model.
func (b *Base) Observe(quantity string, v float64, unit string) {
	b.s.world.Append(worldmodel.Observation{Time: b.s.clk.Now(), Source: b.cfg.Name + "." + quantity, Kind: worldmodel.Reading, Value: v, Unit: unit})
}

// RecordEvent records an event in the world model (not an interrupt).
func (b *Base) RecordEvent(e worldmodel.Event) { b.s.world.Record(e) }

// AuditBackground logs what a background task did (a timer switching off,
// a dead-man stop) on the actuator's behalf.
func (b *Base) AuditBackground(caller, tool string, applied any, err error, notes ...string) {
	b.s.audit.record(Entry{Caller: caller, Tool: tool, Actuator: b.cfg.Name,
		Applied: Marshal(applied), Result: resultOf(err), Error: errString(err), Notes: notes})
}

// task is an actuator's background work: a goroutine waiting on one
// timer. The timer is created by the command, under the lock, so its
// deadline counts from the command and not from whenever the goroutine
// gets scheduled.
type task struct {
	stop  chan struct{}
	timer clock.Timer
}

// StartTaskLocked cancels the running background task and runs fn in a new
// goroutine with a timer armed for d. fn must check stop (through
// NextLocked) before every write and re-arm the timer only under the lock.
func (b *Base) StartTaskLocked(d time.Duration, fn func(stop <-chan struct{}, t clock.Timer)) {
	b.CancelTaskLocked()
	tk := &task{stop: make(chan struct{}), timer: b.s.clk.NewTimer(d)}
	b.task = tk
	b.s.wg.Add(1)
	go func() {
		defer b.s.wg.Done()
		fn(tk.stop, tk.timer)
	}()
}

// CancelTaskLocked ends the background task: its goroutine sees stop
// closed at its next step, and its timer is disarmed now.
func (b *Base) CancelTaskLocked() {
	if b.task != nil {
		close(b.task.stop)
		b.task.timer.Stop()
		b.task = nil
	}
}

// EndTaskLocked is called by a task that finishes on its own.
func (b *Base) EndTaskLocked() { b.task = nil }

// NextLocked waits for the task's timer. It returns true with the lock held
// when the timer fired and the task is still current, false (lock not held)
// when stop was closed: checking stop again under the lock is what keeps a
// cancelled task from writing after the command that replaced it.
func (b *Base) NextLocked(stop <-chan struct{}, t clock.Timer) bool {
	select {
	case <-stop:
		return false
	case <-t.C():
	}
	b.mu.Lock()
	select {
	case <-stop:
		b.mu.Unlock()
		return false
	default:
		return true
	}
}

// Command is one call of an actuator tool.
type Command struct {
	Tool   string
	Params json.RawMessage
	// Safe commands move the actuator to its safe state (stop, off): they
	// pass the e-stop latch and the rate limit.
	Safe bool
}

// Outcome is what a command did.
type Outcome struct {
	Applied any
	Notes   []string
	Value   any // the tool result; Applied when nil
}

// Do runs one command: under the actuator's lock it stamps the audit
// entry, checks the adaptor, the e-stop latch and the rate limit, then runs
// fn (which applies the envelope and writes); then it audits the result.
// The stamp comes before the write, so that an action taken by someone who
// saw this write is audited after it.
func (b *Base) Do(ctx context.Context, c Command, fn func() (Outcome, error)) (tools.Result, error) {
	caller := tools.CallerOf(ctx)
	b.mu.Lock()
	at, order := b.s.audit.stamp()
	out, err := b.gateLocked(c)
	if err == nil {
		out, err = fn()
	}
	b.mu.Unlock()
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrNotStarted) {
		return tools.Result{}, err // not an action: not audited (a flood must not flood the store)
	}
	b.s.audit.record(Entry{
		Time: at, Order: order, Caller: caller, Via: tools.ViaOf(ctx), Tool: c.Tool, Actuator: b.cfg.Name,
		Requested: c.Params, Applied: Marshal(out.Applied), Result: resultOf(err), Notes: out.Notes, Error: errString(err),
	})
	if err != nil {
		return tools.Result{}, err
	}
	v := out.Value
	if v == nil {
		v = out.Applied
	}
	return tools.Result{Value: v, Notes: out.Notes}, nil
}

func (b *Base) gateLocked(c Command) (Outcome, error) {
	b.s.mu.Lock()
	started := b.s.started
	b.s.mu.Unlock()
	if !started {
		return Outcome{}, Refuse(ErrNotStarted, "the actuators are not started (is the agent running?)")
	}
	if !c.Safe && b.s.latched.Load() {
		es := b.s.EStopState()
		return Outcome{}, Refuse(ErrEStop, "e-stop latched since %s (source %s%s); an admin must call estop.reset",
			es.Since.Format(time.TimeOnly), es.Source, msgSuffix(es.Message))
	}
	if !b.opened {
		if err := b.ensureOpenLocked(); err != nil {
			return Outcome{}, fmt.Errorf("%s is not available: %w", b.cfg.Name, err)
		}
	}
	if !c.Safe && b.bucket != nil {
		if ok, wait := b.bucket.take(b.s.clk.Now()); !ok {
			b.rateLimited++
			return Outcome{}, Refuse(ErrRateLimited, "%s accepts at most %s commands/s; retry in %s",
				b.cfg.Name, Num(b.bucket.rate), wait.Round(time.Millisecond))
		}
	}
	return Outcome{}, nil
}

// Spec fills the common parts of an actuator tool's Spec: the name
// <actuator>.<fn>, the permission (perm, else the block's, else
// "actuate"), the block's scenarios and what it touches.
func (b *Base) Spec(fn, desc, params, perm string) tools.Spec {
	if perm == "" {
		perm = b.cfg.Permission
	}
	if perm == "" {
		perm = "actuate"
	}
	return tools.Spec{
		Name: b.cfg.Name + "." + fn, Description: desc, Params: json.RawMessage(params),
		Permission: perm, Scenarios: slices.Clone(b.cfg.Scenarios), Touches: []string{"actuator." + b.cfg.Name},
	}
}

func msgSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

// Marshal encodes v for the audit log (nil stays nil).
func Marshal(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return data
}

func resultOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrRefused):
		return "refused"
	}
	return "failed"
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
