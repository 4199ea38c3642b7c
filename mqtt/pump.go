package mqtt

import (
	"cmp"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// The world model has no subscriptions: the pump polls it. Every Poll it
// publishes the events recorded since the last poll (decisions to the
// decisions topic, the rest to events), actuator states that changed
// (retained, for Home Assistant), motion states, and telemetry: each
// sensor's readings at its configured telemetry interval, or every
// reading when the interval is 0.

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
	evSeq, obsSeq uint64
	actuators     map[string]string
	estop         string                        // as published on state/estop: latched | ok
	motion        map[string]string             // source -> ON/OFF as published
	latest        map[string]map[string]reading // sensor -> quantity -> latest reading
	pending       map[string]bool               // sensors with readings not yet published
	due           map[string]time.Time          // next telemetry publication per sensor
	interval      map[string]time.Duration      // board sensors' telemetry intervals
	discDirty     bool
	discAt        time.Time
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
	tick := time.NewTicker(p.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-rs.ctx.Done():
			return
		case now := <-tick.C:
			p.collect(rs, st, now)
		}
	}
}

func (p *Plane) collect(rs *runState, st *pumpState, now time.Time) {
	w := p.d.World
	qos := byte(p.cfg.QoS)
	out := func(topic string, payload []byte, qos byte, retain bool) {
		rs.conn.publish(message{topic: topic, payload: payload, qos: qos, retain: retain})
	}
	republish := rs.republish.Swap(false)

	for _, e := range w.Events(st.evSeq, worldmodel.Low, 0) {
		st.evSeq = e.Seq
		topic := p.topics.Events
		if e.Kind == "decision" {
			topic = p.topics.Decisions
		}
		out(topic, eventPayload(e), qos, false)
		if e.Kind == "motion_start" || e.Kind == "motion_end" {
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
	}

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

	for _, o := range w.Since("", st.obsSeq, 0) {
		st.obsSeq = o.Seq
		if o.Kind != worldmodel.Reading {
			continue
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
			continue
		}
		st.pending[sensor] = true
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
