// Package actuator turns the actuator blocks of a board config into skills
// (headlight.set, pan.set_angle, drive.drive …) built on gobot v2 drivers,
// on the platform adaptor the board names (raspi, jetson, or the sim
// adaptor in ./simadaptor).
//
// The safety envelope lives here, below every caller: MQTT, the LLM, a
// reflex and the CLI all reach an actuator through the same tool code, so
// the limits of the board config (servo angles and rate, motor speed and
// dead-man timeout, PWM duty bounds, commands per second) cannot be
// bypassed by a caller that forgot a hook. E-stop latches here too: after
// EStop every actuating command is refused until Reset, whoever sends it.
// Every physical action is appended to the audit log.
//
// Each actuator owns one mutex; every write to its hardware happens under
// it, and its background work (a servo ramp, a dead-man timer, a beep
// pattern, an auto-off) runs in one goroutine that any new command, stop or
// e-stop cancels.
package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"gobot.io/x/gobot/v2"
	"gobot.io/x/gobot/v2/drivers/gpio"
	"periph.io/x/conn/v3/i2c"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Adaptor is a gobot platform adaptor as the gpio drivers use it: a
// connection with digital, PWM and servo writers. raspi.Adaptor,
// jetson.Adaptor and simadaptor.Adaptor all are.
type Adaptor interface {
	gobot.Connection
	gpio.DigitalWriter
	gpio.PwmWriter
	gpio.ServoWriter
}

// I2COpener is implemented by adaptors that can open an I2C bus by the name
// the board config uses ("1", "7", "sim"); pca9685_servo needs it.
type I2COpener interface {
	OpenI2C(bus string) (i2c.BusCloser, error)
}

// AuditStore is where the audit log goes (store.Store is one).
type AuditStore interface {
	Append(bucket string, v any, keep int) (uint64, error)
	Tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error
	LogSize(bucket string) (entries int, bytes int64, err error)
	Evict(bucket string, evict func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error)
}

// LatchStore is implemented by stores that can also keep the e-stop latch
// across restarts (*store.Store does).
type LatchStore interface {
	Put(bucket, key string, v any) error
	Get(bucket, key string, v any) (bool, error)
	Delete(bucket, key string) error
}

// Settings are the plugin-level options (`plugins: {actuators: {...}}` in
// the board file).
type Settings struct {
	// AuditMaxAge and AuditMaxMB bound the audit log in the store: older
	// entries go, and past the size the oldest routine entries go first
	// (e-stops, resets, refusals and admin actions last).
	AuditMaxAge time.Duration `yaml:"audit_max_age"`
	AuditMaxMB  int           `yaml:"audit_max_mb"`
	// PWM selects how a Raspberry Pi drives PWM: "sysfs" (the kernel's
	// hardware PWM; header pins 12/32 are pwm0 and 33/35 pwm1, enabled with
	// dtoverlay=pwm-2chan) or "pi-blaster" (any pin, the pi-blaster daemon
	// must run).
	PWM string `yaml:"pwm"`
}

// DefaultSettings are used for fields left empty.
var DefaultSettings = Settings{AuditMaxAge: DefaultRetention.MaxAge, AuditMaxMB: int(DefaultRetention.MaxBytes >> 20), PWM: "sysfs"}

// Options build a Set.
type Options struct {
	Platform  string // raspi | jetson | sim
	Model     string // board model (rpi4, jetson-orin-nano …)
	Actuators []board.Actuator
	Settings  Settings
	World     *worldmodel.Model
	// Store keeps the audit log and, if it is a LatchStore, the e-stop
	// latch across restarts; nil keeps both in memory only.
	Store AuditStore
	// Raise is how estop.trigger raises its Critical event (node.Raise), so
	// that the e-stop takes the same path whoever raises it. Nil calls EStop
	// directly.
	Raise func(worldmodel.Event)
	Log   *slog.Logger
	Clock clock.Clock // default: the wall clock
	// Adaptor replaces the platform's adaptor (tests, benchmarks).
	Adaptor Adaptor
	// Admin tells the administration tools (permission admin), whose calls
	// are audited too; nil audits physical actions only.
	Admin func(tool string) bool
}

// Set is the actuators of one board plus the e-stop latch and the audit log.
type Set struct {
	o     Options
	log   *slog.Logger
	clk   clock.Clock
	world *worldmodel.Model
	acts  []actuator
	// stopOrder is acts by danger: motors, then PWM outputs, switches and
	// servos (which only stop their ramps).
	stopOrder []actuator
	audit     *auditLog

	latched atomic.Bool
	emu     sync.Mutex // guards es
	es      EStopStatus

	latchStore   LatchStore // nil: the latch lives in memory only
	pmu          sync.Mutex // guards persisting, persistDirty
	persisting   bool       // a goroutine is writing the latch to the store
	persistDirty bool       // the latch changed since that goroutine last read it

	mu      sync.Mutex // guards hw, started, i2c
	hw      Adaptor
	started bool
	buses   map[string]i2c.BusCloser
	chips   map[string]*pcaChip

	wg sync.WaitGroup // background goroutines (ramps, timers, e-stop helpers)
}

// New checks the actuator blocks and their options and builds the Set
// without touching hardware: `edgeagent check` and `tools` use it on any
// machine. Start opens the adaptor.
func New(o Options) (*Set, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = clock.Real()
	}
	if o.World == nil {
		o.World = worldmodel.New(worldmodel.Config{})
	}
	if o.Settings.AuditMaxAge == 0 {
		o.Settings.AuditMaxAge = DefaultSettings.AuditMaxAge
	}
	if o.Settings.AuditMaxMB == 0 {
		o.Settings.AuditMaxMB = DefaultSettings.AuditMaxMB
	}
	if o.Settings.PWM == "" {
		o.Settings.PWM = DefaultSettings.PWM
	}
	if o.Settings.AuditMaxAge < time.Hour || o.Settings.AuditMaxMB < 1 {
		return nil, fmt.Errorf("actuators: audit_max_age must be at least 1h and audit_max_mb at least 1")
	}
	if o.Settings.PWM != "sysfs" && o.Settings.PWM != "pi-blaster" {
		return nil, fmt.Errorf("actuators: pwm %q: want sysfs or pi-blaster", o.Settings.PWM)
	}
	if o.Adaptor == nil {
		if _, ok := platforms[o.Platform]; !ok {
			return nil, fmt.Errorf("actuators: no adaptor for platform %q (have %v)", o.Platform, platformNames())
		}
	}
	s := &Set{o: o, log: o.Log, clk: o.Clock, world: o.World, buses: map[string]i2c.BusCloser{}, chips: map[string]*pcaChip{}}
	s.audit = newAuditLog(o.Store, Retention{MaxAge: o.Settings.AuditMaxAge, MaxBytes: int64(o.Settings.AuditMaxMB) << 20}, o.Clock.Now, o.Log)
	if ls, ok := o.Store.(LatchStore); ok {
		s.latchStore = ls
		if err := s.loadLatch(); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, cfg := range o.Actuators {
		if cfg.Name == "estop" || cfg.Name == "audit" {
			errs = append(errs, fmt.Errorf("actuator %q: the name is taken by the %s tools", cfg.Name, cfg.Name))
			continue
		}
		a, err := build(s, cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("actuator %s: %w", cfg.Name, err))
			continue
		}
		s.acts = append(s.acts, a)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	rank := map[string]int{"motor": 0, "pwm": 1, "relay": 2, "buzzer": 2, "digital": 2, "led": 3, "servo": 4, "pca9685_servo": 4}
	s.stopOrder = slices.Clone(s.acts)
	slices.SortStableFunc(s.stopOrder, func(a, b actuator) int {
		return rank[a.common().cfg.Kind] - rank[b.common().cfg.Kind]
	})
	if o.Adaptor == nil {
		// Let the platform reject what it cannot drive (a PWM pin without
		// hardware PWM) now, not at the first command.
		if err := platforms[o.Platform].check(s.platformConfig()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func build(s *Set, cfg board.Actuator) (actuator, error) {
	switch cfg.Kind {
	case "led", "relay", "digital", "buzzer":
		return newSwitch(s, cfg)
	case "servo", "pca9685_servo":
		return newServo(s, cfg)
	case "motor":
		return newMotor(s, cfg)
	case "pwm":
		return newPWM(s, cfg)
	}
	return nil, fmt.Errorf("kind %q is not supported", cfg.Kind)
}

func (s *Set) platformConfig() platformConfig {
	pc := platformConfig{model: s.o.Model, settings: s.o.Settings, now: s.clk.Now}
	for _, a := range s.acts {
		pc.pins = append(pc.pins, a.pwmPins()...)
		if c := a.common().cfg; c.Kind == "pca9685_servo" {
			pc.chips = append(pc.chips, chipRef{c.Bus, uint16(c.Address)})
		}
	}
	return pc
}

// Start connects the adaptor, builds the gobot drivers and applies each
// actuator's initial state. An actuator that fails to open is reported
// (world-model health, status) and retried at its next command; only an
// adaptor that cannot connect at all fails Start.
func (s *Set) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.hw != nil {
		s.mu.Unlock()
		return nil
	}
	hw := s.o.Adaptor
	if hw == nil {
		var err error
		if hw, err = platforms[s.o.Platform].open(s.platformConfig()); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("actuators: %s adaptor: %w", s.o.Platform, err)
		}
	}
	if err := hw.Connect(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("actuators: %s adaptor: connect: %w", s.o.Platform, err)
	}
	s.hw = hw
	s.mu.Unlock()
	// Commands are refused (not started) until every actuator is open and
	// in its initial state, so a early command cannot be overwritten by it.
	// s.mu is not held here: opening a PCA9685 takes it.
	for _, a := range s.acts {
		b := a.common()
		b.mu.Lock()
		err := b.ensureOpenLocked(a)
		switch {
		case err != nil:
		case s.latched.Load():
			// An e-stop came before the start: the safe state, not `initial`.
			if _, err = a.safeLocked(true); err == nil {
				b.setStateLocked("stopped (estop)")
			}
		default:
			err = a.initialLocked()
		}
		b.mu.Unlock()
		if err != nil {
			s.log.Error("actuator not ready", "actuator", b.cfg.Name, "err", err)
		}
	}
	s.audit.start()
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	s.log.Info("actuators started", "platform", s.o.Platform, "adaptor", hw.Name(), "actuators", len(s.acts))
	return nil
}

// Stop brings every actuator to its safe state, ends their goroutines,
// writes the pending audit entries and finalizes the adaptor.
func (s *Set) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.started {
		s.mu.Unlock()
		return s.waitGoroutines(ctx) // an e-stop before the start may have left some
	}
	s.started = false
	s.mu.Unlock()
	var errs []error
	done := map[string]string{}
	for _, a := range s.acts {
		b := a.common()
		b.mu.Lock()
		b.cancelTaskLocked()
		if b.opened {
			if what, err := a.safeLocked(false); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", b.cfg.Name, err))
				done[b.cfg.Name] = "failed: " + err.Error()
			} else {
				done[b.cfg.Name] = what
			}
			b.setStateLocked(a.idleState())
		}
		b.opened = false
		b.mu.Unlock()
	}
	if len(done) > 0 {
		s.audit.record(Entry{Time: s.clk.Now(), Caller: "shutdown", Tool: "stop", Actuator: "*",
			Applied: marshal(done), Result: resultOf(errors.Join(errs...))})
	}
	if err := s.waitGoroutines(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := s.audit.stop(ctx); err != nil {
		errs = append(errs, err)
	}
	s.mu.Lock()
	for name, b := range s.buses {
		if err := b.Close(); err != nil {
			errs = append(errs, fmt.Errorf("i2c bus %s: %w", name, err))
		}
	}
	clear(s.buses)
	clear(s.chips)
	hw := s.hw
	s.hw = nil
	s.mu.Unlock()
	if err := hw.Finalize(); err != nil {
		errs = append(errs, fmt.Errorf("finalize adaptor: %w", err))
	}
	return errors.Join(errs...)
}

func (s *Set) waitGoroutines(ctx context.Context) error {
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return errors.New("actuator goroutines did not end in time (a write is hanging)")
	}
}

// Adaptor is the connected adaptor (nil before Start). Tests on the sim
// platform type-assert it to *simadaptor.Adaptor to read the pins.
func (s *Set) Adaptor() Adaptor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hw
}

// Tools returns the skills of every actuator plus estop.* and audit.query.
func (s *Set) Tools() []tools.Tool {
	var out []tools.Tool
	for _, a := range s.acts {
		out = append(out, a.tools()...)
	}
	return append(out, s.estopTools()...)
}

// ActuatorStatus is one actuator in Status.
type ActuatorStatus struct {
	Kind        string `json:"kind"`
	State       string `json:"state"`
	Fault       string `json:"fault,omitempty"`
	RateLimited uint64 `json:"rate_limited,omitempty"` // commands refused by the rate limit
}

// Status is the "actuators" component of agent.status.
type Status struct {
	Platform  string                    `json:"platform"`
	Started   bool                      `json:"started"`
	Actuators map[string]ActuatorStatus `json:"actuators"`
	EStop     EStopStatus               `json:"estop"`
	Audit     AuditStats                `json:"audit"`
	Pins      map[string]string         `json:"pins,omitempty"` // sim adaptor only
}

// Status reports every actuator's state, the e-stop latch and the audit log.
func (s *Set) Status() any { return s.Snapshot() }

// Snapshot is Status with its concrete type.
func (s *Set) Snapshot() Status {
	st := Status{Platform: s.o.Platform, Actuators: map[string]ActuatorStatus{}, EStop: s.EStopState(), Audit: s.audit.stats()}
	s.mu.Lock()
	st.Started = s.started
	hw := s.hw
	s.mu.Unlock()
	if p, ok := hw.(interface{ State() map[string]string }); ok && st.Started {
		st.Pins = p.State()
	}
	for _, a := range s.acts {
		b := a.common()
		b.mu.Lock()
		st.Actuators[b.cfg.Name] = ActuatorStatus{Kind: b.cfg.Kind, State: b.state, Fault: b.fault, RateLimited: b.rateLimited}
		b.mu.Unlock()
	}
	return st
}

// Names lists the actuators, in board order.
func (s *Set) Names() []string {
	out := make([]string, len(s.acts))
	for i, a := range s.acts {
		out[i] = a.common().cfg.Name
	}
	return out
}

// actuator is one kind's implementation around the shared base.
type actuator interface {
	common() *base
	tools() []tools.Tool
	// pwmPins lists the pins this actuator drives with PWM or servo
	// writes, so the platform can set periods and pulse ranges.
	pwmPins() []pwmPin
	// openLocked builds the gobot driver on the connected adaptor.
	openLocked() error
	// initialLocked applies the board's `initial` state.
	initialLocked() error
	// safeLocked brings the actuator to its safe state (motor stopped,
	// output off, servo holding); estop says whether the actuator's
	// on_estop option applies. It reports what it did.
	safeLocked(estop bool) (string, error)
	// idleState is the world-model state after a stop or reset.
	idleState() string
}

// pwmPin is a pin the platform must prepare for PWM.
type pwmPin struct {
	actuator string
	pin      string
	period   time.Duration // 0: the platform default
	servo    bool
	pulseMin time.Duration
	pulseMax time.Duration
}

// base is what every actuator has: its config, lock, rate limit, state
// and background task.
type base struct {
	s      *Set
	cfg    board.Actuator
	bucket *bucket

	mu          sync.Mutex
	opened      bool
	openErr     error
	state       string
	fault       string
	task        *task // the running background task, if any
	rateLimited uint64
}

func (b *base) common() *base { return b }

func (b *base) init(s *Set, cfg board.Actuator) {
	b.s, b.cfg, b.bucket, b.state = s, cfg, newBucket(cfg.Limits.RateLimit), "unknown"
}

func (b *base) ensureOpenLocked(a actuator) error {
	if b.opened {
		return nil
	}
	if err := a.openLocked(); err != nil {
		b.openErr = err
		b.faultLocked(err)
		return err
	}
	b.opened, b.openErr = true, nil
	return nil
}

// setStateLocked mirrors the state into the world model.
func (b *base) setStateLocked(state string) {
	b.state = state
	b.s.world.SetActuator(b.cfg.Name, state)
}

func (b *base) faultLocked(err error) {
	b.fault = err.Error()
	b.s.world.SetHealth(b.cfg.Name, "degraded: "+err.Error())
}

func (b *base) clearFaultLocked() {
	if b.fault != "" {
		b.fault = ""
		b.s.world.SetHealth(b.cfg.Name, "ok")
	}
}

func (b *base) observe(quantity string, v float64, unit string) {
	b.s.world.Append(worldmodel.Observation{Time: b.s.clk.Now(), Source: b.cfg.Name + "." + quantity, Kind: worldmodel.Reading, Value: v, Unit: unit})
}

// task is an actuator's background work: a goroutine waiting on one
// timer. The timer is created by the command, under the lock, so its
// deadline counts from the command and not from whenever the goroutine
// gets scheduled.
type task struct {
	stop  chan struct{}
	timer clock.Timer
}

// startTaskLocked cancels the running background task and runs fn in a new
// goroutine with a timer armed for d. fn must check stop (under b.mu)
// before every write and re-arm the timer only under b.mu.
func (b *base) startTaskLocked(d time.Duration, fn func(stop <-chan struct{}, t clock.Timer)) {
	b.cancelTaskLocked()
	tk := &task{stop: make(chan struct{}), timer: b.s.clk.NewTimer(d)}
	b.task = tk
	b.s.wg.Add(1)
	go func() {
		defer b.s.wg.Done()
		fn(tk.stop, tk.timer)
	}()
}

// cancelTaskLocked ends the background task: its goroutine sees stop
// closed at its next step, and its timer is disarmed now.
func (b *base) cancelTaskLocked() {
	if b.task != nil {
		close(b.task.stop)
		b.task.timer.Stop()
		b.task = nil
	}
}

// endTaskLocked is called by a task that finishes on its own.
func (b *base) endTaskLocked() { b.task = nil }

// nextLocked waits for the task's timer. It returns true with b.mu held
// when the timer fired and the task is still current, false (b.mu not held)
// when stop was closed: checking stop again under the lock is what keeps a
// cancelled task from writing after the command that replaced it.
func (b *base) nextLocked(stop <-chan struct{}, t clock.Timer) bool {
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

// command is one call of an actuator tool.
type command struct {
	tool   string
	params json.RawMessage
	// safe commands move the actuator to its safe state (stop, off): they
	// pass the e-stop latch and the rate limit.
	safe bool
}

// outcome is what a command did.
type outcome struct {
	applied any
	notes   []string
	value   any // the tool result; applied when nil
}

// do runs one command: under the actuator's lock it checks the adaptor,
// the e-stop latch and the rate limit, then runs fn (which applies the
// envelope and writes); then it audits the result.
func (b *base) do(ctx context.Context, a actuator, c command, fn func() (outcome, error)) (tools.Result, error) {
	caller := tools.CallerOf(ctx)
	b.mu.Lock()
	out, err := b.gateLocked(a, c)
	if err == nil {
		out, err = fn()
	}
	b.mu.Unlock()
	if errors.Is(err, ErrRateLimited) || errors.Is(err, ErrNotStarted) {
		return tools.Result{}, err // not an action: not audited (a flood must not flood the store)
	}
	b.s.audit.record(Entry{
		Time: b.s.clk.Now(), Caller: caller, Tool: c.tool, Actuator: b.cfg.Name,
		Requested: c.params, Applied: marshal(out.applied), Result: resultOf(err), Notes: out.notes, Error: errString(err),
	})
	if err != nil {
		return tools.Result{}, err
	}
	v := out.value
	if v == nil {
		v = out.applied
	}
	return tools.Result{Value: v, Notes: out.notes}, nil
}

func (b *base) gateLocked(a actuator, c command) (outcome, error) {
	b.s.mu.Lock()
	started := b.s.started
	b.s.mu.Unlock()
	if !started {
		return outcome{}, refuse(ErrNotStarted, "the actuators are not started (is the agent running?)")
	}
	if !c.safe && b.s.latched.Load() {
		es := b.s.EStopState()
		return outcome{}, refuse(ErrEStop, "e-stop latched since %s (source %s%s); an admin must call estop.reset",
			es.Since.Format(time.TimeOnly), es.Source, msgSuffix(es.Message))
	}
	if !b.opened {
		if err := b.ensureOpenLocked(a); err != nil {
			return outcome{}, fmt.Errorf("%s is not available: %w", b.cfg.Name, err)
		}
	}
	if !c.safe && b.bucket != nil {
		if ok, wait := b.bucket.take(b.s.clk.Now()); !ok {
			b.rateLimited++
			return outcome{}, refuse(ErrRateLimited, "%s accepts at most %s commands/s; retry in %s",
				b.cfg.Name, num(b.bucket.rate), wait.Round(time.Millisecond))
		}
	}
	return outcome{}, nil
}

// hwErrLocked records a hardware failure and returns it.
func (b *base) hwErrLocked(err error) error {
	b.faultLocked(err)
	return fmt.Errorf("%s: write failed: %w", b.cfg.Name, err)
}

func msgSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ": " + m
}

func marshal(v any) json.RawMessage {
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

// spec fills the common parts of an actuator tool's Spec.
func (b *base) spec(fn, desc, params string, perm string) tools.Spec {
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

// seconds turns a tool's duration parameter into a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
