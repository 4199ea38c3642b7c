// Package pump is the control plane's consumer of the one stream
// (DESIGN.md §9a): it holds a world-model cursor, as the dashboard and the
// recorder do, and turns what it reads into MQTT publications: events
// (decisions to their own topic), actuator states that changed (retained,
// for Home Assistant), the e-stop latch, motion states, and telemetry,
// each sensor's readings at its configured interval or every reading when
// the interval is 0. It also notes the entities Home Assistant discovery
// announces (numeric sources with their units, motion sources) and says
// when new ones appear.
//
// It wakes when the model changes, at most once per Poll (readings come in
// bursts; one batch per Poll keeps the broker traffic and the CPU bounded),
// and at least once per Poll for telemetry that falls due. A pump that
// falls behind the rings loses the oldest items: counted (Missed) and
// logged, never slowing the agent.
package pump

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/lograte"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// defaultTelemetry is the board's default interval, for the sensors that
// plugins bring (the board does not list them).
const defaultTelemetry = 10 * time.Second

// healthEStop is the world model's health component the actuators keep for
// the e-stop latch ("latched" or "ok"); the pump mirrors it, retained, on
// state/estop so that `edgeagent fleet ls` sees stopped robots.
const healthEStop = "estop"

// World is the world model as the pump reads it.
type World interface {
	NewCursor(fromStart bool) *worldmodel.Cursor
	Actuators() map[string]string
	Health() map[string]string
}

// Topics are where the pump publishes.
type Topics struct {
	Events, Decisions string
	// State and Telemetry are prefixes: state/<actuator>,
	// state/<source>/motion, state/estop; telemetry/<sensor>.
	State, Telemetry string
}

// Config is what a pump publishes where, and how often.
type Config struct {
	Topics Topics
	QoS    byte // of events, decisions and states; telemetry is QoS 0
	Poll   time.Duration
	// Telemetry is each board sensor's interval (0: every reading).
	Telemetry map[string]time.Duration
	// Motion are the sources known to detect motion before their first
	// event (the board's cameras and PIRs).
	Motion []string
	// Publish sends or buffers one message without blocking for long.
	Publish func(topic string, payload []byte, qos byte, retain bool)
	// Announce, when set, is called (at most once a second, from the
	// pump's goroutine) when entities appeared: discovery announces again.
	Announce func()
	Clock    clock.Clock // nil: the wall clock
	Log      *slog.Logger
}

// Pump publishes the stream; one per run of the plane.
type Pump struct {
	world     World
	cfg       Config
	republish atomic.Bool
	missed    atomic.Uint64
	missLog   lograte.Limit

	mu      sync.Mutex
	numeric map[string]string // numeric source -> unit
	motion  map[string]bool   // motion sources
}

// New makes a pump; nothing is read until Run.
func New(w World, cfg Config) *Pump {
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Pump{world: w, cfg: cfg, numeric: map[string]string{}, motion: map[string]bool{}}
	for _, s := range cfg.Motion {
		p.motion[s] = true
	}
	return p
}

// Republish makes the next batch publish every retained state again,
// changed or not: after a (re)connect, or when Home Assistant restarted.
func (p *Pump) Republish() { p.republish.Store(true) }

// Missed counts the stream items the pump fell too far behind to publish.
func (p *Pump) Missed() uint64 { return p.missed.Load() }

// Entities are copies of what discovery announces: the numeric sources
// with their units, and the motion sources.
func (p *Pump) Entities() (numeric map[string]string, motion map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.numeric), maps.Clone(p.motion)
}

type reading struct {
	value float64
	time  time.Time
}

// state is what one Run has published and what waits.
type state struct {
	cursor    *worldmodel.Cursor
	items     []worldmodel.Item
	actuators map[string]string
	estop     string                        // as published on state/estop: latched | ok
	motion    map[string]string             // source -> ON/OFF as published
	latest    map[string]map[string]reading // sensor -> quantity -> latest reading
	pending   map[string]bool               // sensors with readings not yet published
	due       map[string]time.Time          // next telemetry publication per sensor
	discDirty bool
	discAt    time.Time
}

// Run publishes until ctx ends. It reads from the start of what the model
// holds: events raised while the plane was starting are published too.
func (p *Pump) Run(ctx context.Context) {
	st := &state{
		actuators: map[string]string{}, motion: map[string]string{}, estop: "ok",
		latest: map[string]map[string]reading{}, pending: map[string]bool{}, due: map[string]time.Time{},
		cursor: p.world.NewCursor(true),
	}
	clk, poll := p.cfg.Clock, p.cfg.Poll
	tick := clk.NewTicker(poll)
	defer tick.Stop()
	for {
		wake := st.cursor.Wait() // before the Read in collect: see Cursor.Wait
		last := clk.Now()
		p.collect(st, last)
		select {
		case <-ctx.Done():
			return
		case <-tick.C():
		case <-wake:
			// Changed: batch what else comes within the rest of the Poll.
			if rest := poll - clk.Since(last); rest > 0 && clock.Sleep(ctx, clk, rest) != nil {
				return
			}
		}
	}
}

// collect publishes one batch: the stream's new items, the states that
// changed, the telemetry that fell due.
func (p *Pump) collect(st *state, now time.Time) {
	republish := p.republish.Swap(false)
	st.items = st.cursor.Read(st.items[:0], 0)
	if n := st.cursor.Lost(); n > 0 {
		p.missed.Add(n)
		if p.missLog.Allow(p.cfg.Clock.Now()) {
			p.cfg.Log.Warn("the MQTT pump fell behind the world model's rings: the oldest items were not published", "missed", n)
		}
	}
	for i := range st.items {
		switch it := &st.items[i]; it.Kind {
		case worldmodel.ItemEvent:
			p.event(st, it.Event)
		case worldmodel.ItemObservation:
			p.reading(st, it.Obs)
		}
	}
	clear(st.items) // drop references to blobs until the next batch
	p.states(st, republish)
	p.telemetry(st, now)
	// New entities: re-announce, at most once a second (a sensor's first
	// readings arrive together).
	if st.discDirty && now.Sub(st.discAt) >= time.Second {
		st.discDirty, st.discAt = false, now
		if p.cfg.Announce != nil {
			p.cfg.Announce()
		}
	}
}

// states publishes the actuator states and the e-stop latch that changed
// (all of them, and the motion states, on republish), retained.
func (p *Pump) states(st *state, republish bool) {
	out, t, qos := p.cfg.Publish, p.cfg.Topics, p.cfg.QoS
	acts := p.world.Actuators()
	for name, state := range acts {
		if republish || st.actuators[name] != state {
			out(t.State+name, []byte(state), qos, true)
		}
	}
	for name := range st.actuators {
		if _, ok := acts[name]; !ok {
			out(t.State+name, nil, qos, true) // gone: clear the retained state
		}
	}
	st.actuators = acts
	if es := cmp.Or(p.world.Health()[healthEStop], "ok"); republish || es != st.estop {
		st.estop = es
		out(t.State+"estop", []byte(es), qos, true)
	}
	if republish {
		for src, state := range st.motion {
			out(t.State+src+"/motion", []byte(state), qos, true)
		}
	}
}

// telemetry publishes the sensors whose interval has passed since their
// last publication and that have new readings.
func (p *Pump) telemetry(st *state, now time.Time) {
	for sensor := range st.pending {
		if now.Before(st.due[sensor]) {
			continue
		}
		var latest time.Time
		for _, r := range st.latest[sensor] {
			if r.time.After(latest) {
				latest = r.time
			}
		}
		p.cfg.Publish(p.cfg.Topics.Telemetry+sensor, telemetryPayload(st.latest[sensor], latest), 0, false)
		delete(st.pending, sensor)
		st.due[sensor] = now.Add(p.interval(sensor))
	}
}

func (p *Pump) interval(sensor string) time.Duration {
	if iv, known := p.cfg.Telemetry[sensor]; known {
		return iv
	}
	return defaultTelemetry
}

// event publishes an event, and a motion source's state when it changes.
func (p *Pump) event(st *state, e worldmodel.Event) {
	t, qos := p.cfg.Topics, p.cfg.QoS
	topic := t.Events
	if e.Kind == "decision" {
		topic = t.Decisions
	}
	p.cfg.Publish(topic, eventPayload(e), qos, false)
	if e.Kind != "motion_start" && e.Kind != "motion_end" {
		return
	}
	state := "OFF"
	if e.Kind == "motion_start" {
		state = "ON"
	}
	if st.motion[e.Source] != state {
		st.motion[e.Source] = state
		p.cfg.Publish(t.State+e.Source+"/motion", []byte(state), qos, true)
	}
	p.mu.Lock()
	if !p.motion[e.Source] {
		p.motion[e.Source] = true
		st.discDirty = true
	}
	p.mu.Unlock()
}

// reading keeps a reading for its sensor's telemetry, publishing at once
// when the sensor's interval is 0.
func (p *Pump) reading(st *state, o worldmodel.Observation) {
	if o.Kind != worldmodel.Reading {
		return
	}
	sensor, quantity, ok := strings.Cut(o.Source, ".")
	if !ok {
		quantity = "value"
	}
	q := st.latest[sensor]
	if q == nil {
		q = map[string]reading{}
		st.latest[sensor] = q
	}
	q[quantity] = reading{o.Value, o.Time}
	p.mu.Lock()
	if unit, known := p.numeric[o.Source]; !known || unit != o.Unit {
		p.numeric[o.Source] = o.Unit
		st.discDirty = true
	}
	p.mu.Unlock()
	if p.interval(sensor) == 0 {
		p.cfg.Publish(p.cfg.Topics.Telemetry+sensor, telemetryPayload(q, o.Time), 0, false)
		return
	}
	st.pending[sensor] = true
}

// telemetryPayload is {"time": …, "<quantity>": value, …} with every
// quantity of the sensor, so each message is complete on its own.
func telemetryPayload(q map[string]reading, t time.Time) []byte {
	m := make(map[string]any, len(q)+1)
	for name, r := range q {
		if math.IsNaN(r.value) || math.IsInf(r.value, 0) {
			m[name] = nil // not JSON; a broken reading shows as unknown
			continue
		}
		m[name] = r.value
	}
	m["time"] = t.UTC().Format(time.RFC3339Nano)
	data, _ := json.Marshal(m) // floats, nulls and a string: cannot fail
	return data
}

// Event is an event as published on the events and decisions topics.
type Event struct {
	Seq      uint64         `json:"seq"`
	Time     time.Time      `json:"time"`
	Kind     string         `json:"kind"`
	Source   string         `json:"source"`
	Priority string         `json:"priority"`
	Message  string         `json:"message,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
}

func eventPayload(e worldmodel.Event) []byte {
	v := Event{e.Seq, e.Time, e.Kind, e.Source, e.Priority.String(), e.Message, e.Data}
	data, err := json.Marshal(v)
	if err != nil {
		v.Data = map[string]any{"error": "event data is not JSON-encodable: " + err.Error()}
		data, _ = json.Marshal(v)
	}
	return data
}
