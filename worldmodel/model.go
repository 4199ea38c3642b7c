package worldmodel

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/edgeagent/edgeagent/clock"
)

// Defaults for zero Config fields.
const (
	DefaultCapacity   = 256
	DefaultMaxSources = 512
	DefaultEvents     = 1024
)

var (
	eventSize = int64(unsafe.Sizeof(Event{}))
)

// Config bounds the model's memory. Zero fields take the defaults above.
//
// A blob source (camera snapshots) should get a small capacity in
// Capacities, e.g. 4: the ring keeps every blob it holds alive, so
// capacity × frame size is what that source costs.
type Config struct {
	DefaultCapacity int            // per-source ring capacity
	Capacities      map[string]int // per-source override, by exact source name
	// Horizon is how far back a source's history must reach: a ring grows
	// towards its capacity only while its oldest reading is no older than
	// this, and otherwise overwrites it. So a slow source holds one
	// horizon of readings instead of filling its capacity over hours.
	// Zero: no horizon, rings grow to their capacity (the board's
	// world.horizon is 10 minutes by default). The event log and the
	// journal grow the same way, beyond their first logFloor entries: an
	// LLM exchange in the journal carries its whole prompt, and 1,024 of
	// them filling over hours were megabytes of creep.
	Horizon time.Duration
	// MaxSources bounds the number of distinct sources, and separately of
	// actuators and health components, so that a misbehaving producer
	// inventing names cannot grow the model. What is refused is counted in
	// Stats.Dropped.
	MaxSources int
	Events     int // event-log capacity
	Records    int // journal capacity (tool calls, LLM exchanges, state changes)
	// Clock stamps what arrives without a time (default: the wall clock; a
	// replay gives its virtual one).
	Clock clock.Clock
}

// Model is the agent's bounded picture of the world. All methods are safe
// for concurrent use.
//
// Every change (observation, event, actuator or health change) takes the
// next number of one model-wide counter: observations and events can be
// ordered against each other, and Version is simply the counter.
type Model struct {
	cfg     Config
	seq     atomic.Uint64
	dropped atomic.Uint64

	// sources is replaced, never modified, so that Append finds an existing
	// source with one atomic load and no lock; srcMu serializes the rare
	// additions.
	sources atomic.Pointer[sourceSet]
	srcMu   sync.Mutex
	refused *Ring // handed out for sources beyond MaxSources

	evMu    sync.Mutex
	events  ring[Event]
	evTotal uint64

	recMu    sync.Mutex
	records  ring[Record]
	recTotal uint64
	notes    atomic.Uint64 // journal-only records: they do not change Version

	wake   waker  // consumers waiting for the next change
	demand demand // sources produced only while watched

	stMu      sync.Mutex
	actuators map[string]string
	health    map[string]string
}

type sourceSet struct {
	byName map[string]*Ring
	sorted []*Ring // by source name, for deterministic listings
}

// New returns an empty model.
func New(cfg Config) *Model {
	if cfg.DefaultCapacity <= 0 {
		cfg.DefaultCapacity = DefaultCapacity
	}
	if cfg.MaxSources <= 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	if cfg.Events <= 0 {
		cfg.Events = DefaultEvents
	}
	if cfg.Records <= 0 {
		cfg.Records = DefaultRecords
	}
	cfg.Capacities = maps.Clone(cfg.Capacities) // the caller may reuse its map
	cfg.Clock = clock.Or(cfg.Clock)
	m := &Model{
		cfg:       cfg,
		events:    ring[Event]{limit: cfg.Events},
		records:   ring[Record]{limit: cfg.Records},
		actuators: map[string]string{},
		health:    map[string]string{},
	}
	m.refused = &Ring{m: m}
	m.sources.Store(&sourceSet{byName: map[string]*Ring{}})
	return m
}

// Append stores o in its source's ring and returns the sequence number it
// was given. A zero o.Time is set to the current time; a producer that
// knows when it sampled should set Time itself, which is more accurate and
// skips the clock read that is half the cost of an append. It returns 0,
// and counts a drop, when o.Source is empty or would be a source beyond
// MaxSources. Appending to an existing source does not allocate.
func (m *Model) Append(o Observation) uint64 {
	if r := m.sources.Load().byName[o.Source]; r != nil {
		return r.Append(o)
	}
	return m.Ring(o.Source).Append(o)
}

// Ring returns the ring of source, creating it if needed. Over MaxSources
// (or for an empty name) it returns a ring that drops every append.
func (m *Model) Ring(source string) *Ring {
	if r := m.sources.Load().byName[source]; r != nil {
		return r
	}
	if source == "" {
		return m.refused
	}
	m.srcMu.Lock()
	defer m.srcMu.Unlock()
	old := m.sources.Load()
	if r := old.byName[source]; r != nil {
		return r
	}
	if len(old.sorted) >= m.cfg.MaxSources {
		return m.refused
	}
	limit := m.cfg.Capacities[source]
	if limit <= 0 {
		limit = m.cfg.DefaultCapacity
	}
	r := &Ring{m: m, source: source, obs: ring[slot]{limit: limit}}
	next := &sourceSet{byName: make(map[string]*Ring, len(old.byName)+1)}
	maps.Copy(next.byName, old.byName)
	next.byName[source] = r
	i := sort.Search(len(old.sorted), func(i int) bool { return old.sorted[i].source > source })
	next.sorted = slices.Insert(slices.Clone(old.sorted), i, r)
	m.sources.Store(next)
	return r
}

// visible returns the highest sequence number a reader may report, read
// before any ring is locked. Rings take their numbers under their lock, so
// every observation numbered up to this value is in its ring by the time
// the reader gets the lock, while higher numbers may still be in flight on
// another ring. Cutting at this value is what lets a consumer that follows
// Since(“”, cursor, …) never miss an observation.
func (m *Model) visible() uint64 { return m.seq.Load() }

// Latest returns the newest observation of source.
func (m *Model) Latest(source string) (Observation, bool) {
	if r := m.sources.Load().byName[source]; r != nil {
		return r.latest()
	}
	return Observation{}, false
}

// LatestAll returns the newest observation of every source that has one,
// sorted by source.
func (m *Model) LatestAll() []Observation {
	set := m.sources.Load()
	out := make([]Observation, 0, len(set.sorted))
	for _, r := range set.sorted {
		if o, ok := r.latest(); ok {
			out = append(out, o)
		}
	}
	return out
}

// Window returns the observations of source with Time in [from, to],
// oldest first; a zero from or to leaves that side open. Source "" means
// every source, ordered by Seq.
func (m *Model) Window(source string, from, to time.Time) []Observation {
	return m.gather(source, func(r *Ring, dst []Observation, upTo uint64) []Observation {
		return r.window(dst, from, to, upTo)
	})
}

// Since returns the observations of source with Seq > seq, oldest first,
// at most limit of them (limit <= 0: no limit). Source "" means every
// source. Feeding the last returned Seq back in pages through the history
// without gaps or repeats, unless the rings overwrite what was not read yet.
func (m *Model) Since(source string, seq uint64, limit int) []Observation {
	// The oldest limit of each ring are enough for the oldest limit overall.
	out := m.gather(source, func(r *Ring, dst []Observation, upTo uint64) []Observation {
		return r.since(dst, seq, upTo, limit)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit:limit]
	}
	return out
}

// gather appends with read what one source's ring holds, or, for source
// "", what every ring holds, ordered by Seq; upTo is the last Seq visible.
func (m *Model) gather(source string, read func(r *Ring, dst []Observation, upTo uint64) []Observation) []Observation {
	upTo := m.visible()
	if source != "" {
		if r := m.sources.Load().byName[source]; r != nil {
			return read(r, nil, upTo)
		}
		return nil
	}
	var out []Observation
	for _, r := range m.sources.Load().sorted {
		out = read(r, out, upTo)
	}
	sortBySeq(out)
	return out
}

func sortBySeq(obs []Observation) {
	slices.SortFunc(obs, func(a, b Observation) int { return cmp.Compare(a.Seq, b.Seq) })
}

// Sources returns the names of all sources, sorted.
func (m *Model) Sources() []string {
	set := m.sources.Load()
	out := make([]string, len(set.sorted))
	for i, r := range set.sorted {
		out[i] = r.source
	}
	return out
}

// Record stores e in the bounded event log, giving it the next sequence
// number and, if e.Time is zero, the current time, and returns the stored
// event. e.Data is kept by reference and must not be modified afterwards.
func (m *Model) Record(e Event) Event {
	if e.Time.IsZero() {
		e.Time = m.cfg.Clock.Now()
	}
	m.evMu.Lock()
	e.Seq = m.seq.Add(1)
	*m.events.slot(m.events.len() < logFloor || m.young(m.events.at(0).Time, e.Time)) = e
	m.evTotal++
	m.evMu.Unlock()
	m.wake.signal()
	return e
}

// Events returns the logged events with Seq > sinceSeq and Priority >= min,
// oldest first. With limit > 0 only the newest limit of them are returned:
// a caller catching up wants what happened last.
func (m *Model) Events(sinceSeq uint64, min Priority, limit int) []Event {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	n := m.events.len()
	i := sort.Search(n, func(i int) bool { return m.events.at(i).Seq > sinceSeq })
	var out []Event
	for ; i < n; i++ {
		if e := m.events.at(i); e.Priority >= min {
			out = append(out, *e)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out
}

// SetActuator records the state an actuator reports ("on", "angle=90",
// "stopped (estop)"). An empty state forgets the actuator.
func (m *Model) SetActuator(name, state string) {
	m.setState(m.actuators, RecordActuator, "state", name, state)
}

// SetHealth records the health of a sensor or subsystem: "ok" when healthy,
// otherwise a short reason ("degraded: i2c NACK"). An empty health means
// "ok". Only unhealthy components appear in the summary.
func (m *Model) SetHealth(component, health string) {
	if health == "" {
		health = "ok"
	}
	m.setState(m.health, RecordHealth, "health", component, health)
}

func (m *Model) setState(states map[string]string, kind, key, name, state string) {
	m.stMu.Lock()
	defer m.stMu.Unlock()
	old, known := states[name]
	switch {
	case state == "" && known:
		delete(states, name)
	case state == "" || old == state:
		return // no change: Version must stay put
	case !known && len(states) >= m.cfg.MaxSources:
		m.dropped.Add(1)
		return
	default:
		states[name] = state
	}
	m.stateRecord(kind, name, key, state) // takes the next number, under stMu like ring appends: see visible
}

// Actuators returns a copy of the actuator states.
func (m *Model) Actuators() map[string]string {
	m.stMu.Lock()
	defer m.stMu.Unlock()
	return maps.Clone(m.actuators)
}

// Health returns a copy of the component health states.
func (m *Model) Health() map[string]string {
	m.stMu.Lock()
	defer m.stMu.Unlock()
	return maps.Clone(m.health)
}

// Version changes whenever anything Summary shows changes, ages aside, so
// a heartbeat can skip the LLM when Version equals the value it read
// before the last summary. It is the sequence number of the last change.
func (m *Model) Version() uint64 { return m.seq.Load() - m.notes.Load() }

// Stats describes the model's size, for status reports.
type Stats struct {
	Sources  int    // distinct sources
	Held     int    // observations currently held in the rings
	Appended uint64 // observations appended over the model's life
	Dropped  uint64 // appends (and actuator/health names) refused: empty or over MaxSources
	Events   uint64 // events recorded over the model's life
	Records  uint64 // journal records noted over the model's life
	Bytes    int64  // approximate memory held: ring and log slots plus text, blob and message payloads
}

// Stats reports counters and approximate memory use. It visits every ring,
// so it is for status requests, not hot paths.
func (m *Model) Stats() Stats {
	set := m.sources.Load()
	s := Stats{Sources: len(set.sorted), Dropped: m.dropped.Load()}
	for _, r := range set.sorted {
		held, total, bytes := r.usage()
		s.Held += held
		s.Appended += total
		s.Bytes += bytes
	}
	m.evMu.Lock()
	s.Events = m.evTotal
	s.Bytes += int64(cap(m.events.buf)) * eventSize
	for i := range m.events.len() {
		e := m.events.at(i)
		s.Bytes += int64(len(e.Kind) + len(e.Source) + len(e.Message))
	}
	m.evMu.Unlock()
	m.recMu.Lock()
	s.Records = m.recTotal
	m.recMu.Unlock()
	return s
}
