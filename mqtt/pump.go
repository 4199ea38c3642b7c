package mqtt

import (
	"cmp"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The pump is MQTT's consumer of the one stream (DESIGN.md §9a): it holds
// a world-model cursor, as the dashboard and the recorder do, and wakes when
// the model changes, at most once per Poll (readings come in bursts; one
// batch per Poll keeps the broker traffic and the CPU bounded), and at least
// once per Poll for telemetry that falls due. Each batch publishes the
// events (decisions to the decisions topic, the rest to events), actuator
// states that changed (retained, for Home Assistant), motion states, and
// telemetry: each sensor's readings at its configured telemetry interval,
// or every reading when the interval is 0. A pump that falls behind the
// rings loses the oldest items: counted (stream_missed in agent.status)
// and logged, never slowing the agent.

const defaultTelemetry = 10 * time.Second // board's default, for sensors plugins bring

// healthEStop is the world model's health component the actuators keep for
// the e-stop latch ("latched" or "ok"); the pump mirrors it, retained, on
// state/estop so that `edgeagent fleet ls` sees stopped robots.
const healthEStop = "estop"

type reading struct {
	value float64
	time  time.Time
}

type pumpState struct {
	cursor    *worldmodel.Cursor
	items     []worldmodel.Item
	actuators map[string]string
	estop     string                        // as published on state/estop: latched | ok
	motion    map[string]string             // source -> ON/OFF as published
	latest    map[string]map[string]reading // sensor -> quantity -> latest reading
	pending   map[string]bool               // sensors with readings not yet published
	due       map[string]time.Time          // next telemetry publication per sensor
	interval  map[string]time.Duration      // board sensors' telemetry intervals
	discDirty bool
	discAt    time.Time
}

func (p *Plane) pump(rs *runState) {
	defer close(rs.pumpDone)
	st := &pumpState{
		actuators: map[string]string{}, motion: map[string]string{}, estop: "ok",
		latest: map[string]map[string]reading{}, pending: map[string]bool{},
		due: map[string]time.Time{}, interval: map[string]time.Duration{},
	}
	for _, s := range p.cfg.Sensors {
		st.interval[s.Name] = s.Telemetry
	}
	// From the start of what the model holds: events raised while the
	// plane was starting are published too.
	st.cursor = p.d.World.NewCursor(true)
	clk := p.d.Clock
	tick := clk.NewTicker(p.opts.Poll)
	defer tick.Stop()
	var last time.Time
	for {
		wake := st.cursor.Wait() // before the Read in collect: see Cursor.Wait
		last = clk.Now()
		p.collect(rs, st, last)
		select {
		case <-rs.ctx.Done():
			return
		case <-tick.C():
		case <-wake:
			// Changed: batch what else comes within the rest of the Poll.
			if rest := p.opts.Poll - clk.Since(last); rest > 0 && clock.Sleep(rs.ctx, clk, rest) != nil {
				return
			}
		}
	}
}

func (p *Plane) collect(rs *runState, st *pumpState, now time.Time) {
	w := p.d.World
	qos := byte(p.cfg.QoS)
	out := publishFunc(func(topic string, payload []byte, qos byte, retain bool) {
		rs.conn.publish(message{topic: topic, payload: payload, qos: qos, retain: retain})
	})
	republish := rs.republish.Swap(false)

	st.items = st.cursor.Read(st.items[:0], 0)
	if n := st.cursor.Lost(); n > 0 {
		p.streamMissed.Add(n)
		if p.missLog.Allow(p.d.Clock.Now()) {
			p.log.Warn("the MQTT pump fell behind the world model's rings: the oldest items were not published", "missed", n)
		}
	}
	for i := range st.items {
		switch it := &st.items[i]; it.Kind {
		case worldmodel.ItemEvent:
			p.pumpEvent(rs, st, it.Event, out)
		case worldmodel.ItemObservation:
			p.pumpReading(rs, st, it.Obs, out)
		}
	}
	clear(st.items) // drop references to blobs until the next batch

	acts := w.Actuators()
	for name, state := range acts {
		if republish || st.actuators[name] != state {
			out(p.topics.State+name, []byte(state), qos, true)
		}
	}
	for name := range st.actuators {
		if _, ok := acts[name]; !ok {
			out(p.topics.State+name, nil, qos, true) // gone: clear the retained state
		}
	}
	st.actuators = acts
	if es := cmp.Or(w.Health()[healthEStop], "ok"); republish || es != st.estop {
		st.estop = es
		out(p.topics.State+"estop", []byte(es), qos, true)
	}
	if republish {
		for src, state := range st.motion {
			out(p.topics.State+src+"/motion", []byte(state), qos, true)
		}
	}

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
		out(p.topics.Telemetry+sensor, telemetryPayload(st.latest[sensor], latest), 0, false)
		delete(st.pending, sensor)
		iv, known := st.interval[sensor]
		if !known {
			iv = defaultTelemetry
		}
		st.due[sensor] = now.Add(iv)
	}

	// New entities: re-announce, at most once a second (a sensor's first
	// readings arrive together).
	if st.discDirty && now.Sub(st.discAt) >= time.Second {
		st.discDirty, st.discAt = false, now
		p.publishDiscovery(rs)
	}
}

type publishFunc func(topic string, payload []byte, qos byte, retain bool)

// pumpEvent publishes an event, and a motion source's state when it changes.
func (p *Plane) pumpEvent(rs *runState, st *pumpState, e worldmodel.Event, out publishFunc) {
	qos := byte(p.cfg.QoS)
	topic := p.topics.Events
	if e.Kind == "decision" {
		topic = p.topics.Decisions
	}
	out(topic, eventPayload(e), qos, false)
	if e.Kind != "motion_start" && e.Kind != "motion_end" {
		return
	}
	state := "OFF"
	if e.Kind == "motion_start" {
		state = "ON"
	}
	if st.motion[e.Source] != state {
		st.motion[e.Source] = state
		out(p.topics.State+e.Source+"/motion", []byte(state), qos, true)
	}
	rs.discMu.Lock()
	if !rs.motion[e.Source] {
		rs.motion[e.Source] = true
		st.discDirty = true
	}
	rs.discMu.Unlock()
}

// pumpReading keeps a reading for its sensor's telemetry, publishing at
// once when the sensor's interval is 0.
func (p *Plane) pumpReading(rs *runState, st *pumpState, o worldmodel.Observation, out publishFunc) {
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
	rs.discMu.Lock()
	if unit, known := rs.numeric[o.Source]; !known || unit != o.Unit {
		rs.numeric[o.Source] = o.Unit
		st.discDirty = true
	}
	rs.discMu.Unlock()
	iv, known := st.interval[sensor]
	if !known {
		iv = defaultTelemetry
	}
	if iv == 0 {
		out(p.topics.Telemetry+sensor, telemetryPayload(q, o.Time), 0, false)
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

type eventView struct {
	Seq      uint64         `json:"seq"`
	Time     time.Time      `json:"time"`
	Kind     string         `json:"kind"`
	Source   string         `json:"source"`
	Priority string         `json:"priority"`
	Message  string         `json:"message,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
}

func eventPayload(e worldmodel.Event) []byte {
	v := eventView{e.Seq, e.Time, e.Kind, e.Source, e.Priority.String(), e.Message, e.Data}
	data, err := json.Marshal(v)
	if err != nil {
		v.Data = map[string]any{"error": "event data is not JSON-encodable: " + err.Error()}
		data, _ = json.Marshal(v)
	}
	return data
}
