package worldmodel

import (
	"encoding/json"
	"sort"
	"time"
)

// DefaultRecords is the journal's capacity when Config.Records is zero.
const DefaultRecords = 1024

// Record is something the agent did that is neither an observation nor an
// event: a tool call and its result, an LLM exchange, an actuator write as
// applied, a health change, an audit entry. It is part of the one stream
// every consumer (MQTT, dashboard, recorder) reads, so Data is encoded once,
// by the producer, and every consumer forwards the same bytes.
type Record struct {
	Seq    uint64 // assigned by the model, from the counter observations and events share
	Time   time.Time
	Kind   string          // tool_call, llm, actuator, health, audit …
	Source string          // the tool, actuator, component or plugin
	Data   json.RawMessage // a JSON object; must not be modified after Note
}

// Record kinds the model itself notes.
const (
	RecordActuator = "actuator" // Data: {"state": …}; Source: the actuator
	RecordHealth   = "health"   // Data: {"health": …}; Source: the component
)

// Note appends r to the bounded journal, giving it the next sequence number
// and, if r.Time is zero, the current time, and returns the stored record.
//
// A record does not change Version: what the agent did is not news about
// the world (otherwise every LLM exchange would make the motive think the
// world changed and ask the LLM again).
func (m *Model) Note(r Record) Record { return m.note(r, true) }

func (m *Model) note(r Record, journalOnly bool) Record {
	if r.Time.IsZero() {
		r.Time = m.cfg.Clock.Now()
	}
	m.recMu.Lock()
	if journalOnly {
		m.notes.Add(1) // before the seq, so Version never runs ahead
	}
	r.Seq = m.seq.Add(1) // under recMu, like ring appends: see visible
	*m.records.slot(m.records.len() < logFloor || m.young(m.records.at(0).Time, r.Time)) = r
	m.recTotal++
	m.recMu.Unlock()
	m.wake.signal()
	return r
}

// Records returns the journal's records with Seq > sinceSeq, oldest first;
// with limit > 0 only the newest limit of them.
func (m *Model) Records(sinceSeq uint64, limit int) []Record {
	m.recMu.Lock()
	defer m.recMu.Unlock()
	n := m.records.len()
	i := sort.Search(n, func(i int) bool { return m.records.at(i).Seq > sinceSeq })
	if limit > 0 && n-i > limit {
		i = n - limit
	}
	out := make([]Record, 0, n-i)
	for ; i < n; i++ {
		out = append(out, *m.records.at(i))
	}
	return out
}

// stateRecord notes an actuator or health change; unlike Note it is news
// (it changes Version). Called with stMu held, so the journal orders state
// changes as they happened.
func (m *Model) stateRecord(kind, name, key, state string) {
	data, _ := json.Marshal(map[string]string{key: state}) // a map of strings always encodes
	m.note(Record{Kind: kind, Source: name, Data: data}, false)
}
