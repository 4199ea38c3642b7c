// Package actuator turns actuator blocks (Config, translated from the board
// file by the actuators plugin) into skills (headlight.set, pan.set_angle,
// drive.drive …) built on gobot v2 drivers, on the platform adaptor the
// board names (raspi, jetson, or the sim adaptor in ./simadaptor). Each
// kind is a package of its own that registers itself (Register; the
// built-in ones are imported by ./kinds); this package is what they share.
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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gobot.io/x/gobot/v2"
	"gobot.io/x/gobot/v2/drivers/gpio"
	"periph.io/x/conn/v3/i2c"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/wait"
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
// the board config uses ("1", "7", "sim"); kinds on I2C (a PCA9685) need it.
type I2COpener interface {
	OpenI2C(bus string) (i2c.BusCloser, error)
}

// AuditStore is where the audit log and the e-stop latch go (store.Bolt and
// store.Memory are ones).
type AuditStore interface {
	Append(bucket string, v any, keep int) (uint64, error)
	Tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error
	LogSize(bucket string) (entries int, bytes int64, err error)
	Evict(bucket string, evict func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error)
	// The e-stop latch is a key that survives restarts.
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
	Actuators []Config
	Settings  Settings
	// World receives the actuators' states and readings, their health and
	// the e-stop's events; nil: a world of the Set's own.
	World World
	// Store keeps the audit log and the e-stop latch (store.Bolt across
	// restarts, store.Memory for the life of the process). Required.
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

// World is the world model as the actuators write it: each actuator's
// state and readings, health (an actuator's, the e-stop latch's), and
// events (the e-stop, an actuator that stopped late).
type World interface {
	SetActuator(name, state string)
	SetHealth(component, health string)
	Append(worldmodel.Observation) uint64
	Record(worldmodel.Event) worldmodel.Event
}

// Set is the actuators of one board plus the e-stop latch and the audit log.
type Set struct {
	o     Options
	log   *slog.Logger
	clk   clock.Clock
	world World
	acts  []Actuator
	// stopOrder is acts by danger (Kind.StopRank): motors, then PWM
	// outputs, switches and servos (which only stop their ramps).
	stopOrder []Actuator
	audit     *auditLog

	latched atomic.Bool
	emu     sync.Mutex // guards es
	es      EStopStatus

	pmu          sync.Mutex // guards persisting, persistDirty
	persisting   bool       // a goroutine is writing the latch to the store
	persistDirty bool       // the latch changed since that goroutine last read it

	mu      sync.Mutex // guards hw, started, buses, shared
	hw      Adaptor
	started bool
	buses   map[string]i2c.BusCloser
	shared  map[string]any // devices shared by several actuators (a PCA9685), by key

	wg wait.Group // background goroutines (ramps, timers, e-stop helpers)
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
	if o.Store == nil {
		// The node always has one (store.Memory without a file): an
		// audit log that silently kept nothing would be worse than none.
		return nil, errors.New("actuators: no store for the audit log")
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
		return nil, errors.New("plugins.actuators.pwm: want sysfs or pi-blaster")
	}
	if o.Adaptor == nil {
		if _, ok := platforms[o.Platform]; !ok {
			return nil, fmt.Errorf("actuators: no adaptor for this device.platform (have %v)", platformNames())
		}
	}
	s := &Set{o: o, log: o.Log, clk: o.Clock, world: o.World, buses: map[string]i2c.BusCloser{}, shared: map[string]any{}}
	s.audit = newAuditLog(o.Store, Retention{MaxAge: o.Settings.AuditMaxAge, MaxBytes: int64(o.Settings.AuditMaxMB) << 20}, o.Clock, o.Log)
	if err := s.loadLatch(); err != nil {
		return nil, err
	}
	var errs []error
	for i, cfg := range o.Actuators {
		if cfg.Name == "estop" || cfg.Name == "audit" {
			errs = append(errs, fmt.Errorf("actuators[%d].name: estop and audit name the e-stop's and the audit's tools", i))
			continue
		}
		a, err := build(s, cfg)
		if err != nil {
			errs = append(errs, blockError(i, err))
			continue
		}
		s.acts = append(s.acts, a)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.stopOrder = slices.Clone(s.acts)
	slices.SortStableFunc(s.stopOrder, func(a, b Actuator) int { return a.base().rank - b.base().rank })
	if o.Adaptor == nil {
		// Let the platform reject what it cannot drive (a PWM pin without
		// hardware PWM) now, not at the first command.
		if err := platforms[o.Platform].check(s.platformConfig()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Set) platformConfig() platformConfig {
	pc := platformConfig{model: s.o.Model, settings: s.o.Settings, now: s.clk.Now}
	for _, a := range s.acts {
		pc.pins = append(pc.pins, a.PWMPins()...)
		if sa, ok := a.(SimAttacher); ok {
			pc.sim = append(pc.sim, sa)
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
		b := a.base()
		b.mu.Lock()
		err := b.ensureOpenLocked()
		switch {
		case err != nil:
		case s.latched.Load():
			// An e-stop came before the start: the safe state, not `initial`.
			if _, err = a.SafeLocked(true); err == nil {
				b.SetStateLocked("stopped (estop)")
			}
		default:
			err = a.InitialLocked()
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
		b := a.base()
		b.mu.Lock()
		b.CancelTaskLocked()
		if b.opened {
			if what, err := a.SafeLocked(false); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", b.cfg.Name, err))
				done[b.cfg.Name] = "failed: " + err.Error()
			} else {
				done[b.cfg.Name] = what
			}
			b.SetStateLocked(a.IdleState())
		}
		b.opened = false
		b.mu.Unlock()
	}
	if len(done) > 0 {
		s.audit.record(Entry{Caller: "shutdown", Tool: "stop", Actuator: "*",
			Applied: Marshal(done), Result: resultOf(errors.Join(errs...))})
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
	clear(s.shared)
	hw := s.hw
	s.hw = nil
	s.mu.Unlock()
	if err := hw.Finalize(); err != nil {
		errs = append(errs, fmt.Errorf("finalize adaptor: %w", err))
	}
	return errors.Join(errs...)
}

func (s *Set) waitGoroutines(ctx context.Context) error {
	if s.wg.Wait(ctx) != nil {
		return errors.New("actuator goroutines did not end in time (a write is hanging)")
	}
	return nil
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
		out = append(out, a.Tools()...)
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
		b := a.base()
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
		out[i] = a.base().cfg.Name
	}
	return out
}

// Seconds turns a tool's duration parameter into a Duration.
func Seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// blockError names the block an actuator's error is about by its index,
// never by its name (a value from the board file); an error the board
// placed (a kind's option or limit, at its file:line:col) names it already.
func blockError(i int, err error) error {
	block := fmt.Sprintf("actuators[%d]", i)
	if strings.Contains(err.Error(), block+".") {
		return err
	}
	return fmt.Errorf("%s: %w", block, err)
}
