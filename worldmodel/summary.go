package worldmodel

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Lengths beyond which free text is cut in summaries, so that one chatty
// producer cannot take the whole prompt budget.
const (
	maxTextBytes = 80  // text observations
	maxInfoBytes = 120 // names, units, states, event messages
)

// Summary is SummaryAt(now, maxBytes) on the model's clock.
func (m *Model) Summary(maxBytes int) string { return m.SummaryAt(m.cfg.Clock.Now(), maxBytes) }

// SummaryAt describes the world as of now in compact text for an LLM
// prompt, at most maxBytes long (maxBytes <= 0: no limit). Sections, in
// this order and each only when non-empty:
//
//	sensors (N):                latest value per source, by source name
//	unhealthy (N):              components whose health is not "ok", by name
//	actuators (N):              actuator states, by name
//	events (N, newest first):   the event log
//
// Identical state and now give byte-identical text. When the text would be
// too long, whole lines are left out, in this order of importance: health,
// actuators, High and Critical events, sensors, other events; each section
// keeps a prefix of its own order (events: newest first). A final "… N more"
// line counts the items left out, if it fits.
func (m *Model) SummaryAt(now time.Time, maxBytes int) string {
	// Sources produced only while watched (a camera's live frames, a
	// microphone's audio) are left out: what the agent is told must not
	// depend on whether someone had a page open.
	sensors := slices.DeleteFunc(m.LatestAll(), func(o Observation) bool { return m.onDemand(o.Source) })
	unhealthy, actuators := m.stateLines()
	events, urgent, other, logged := m.recentEvents(maxBytes)

	secSensors := newSection(fmt.Sprintf("sensors (%d):", len(sensors)), len(sensors), func(i int) string {
		return sensorLine(sensors[i], now)
	})
	secHealth := newSection(fmt.Sprintf("unhealthy (%d):", len(unhealthy)), len(unhealthy), func(i int) string {
		return unhealthy[i]
	})
	secActuators := newSection(fmt.Sprintf("actuators (%d):", len(actuators)), len(actuators), func(i int) string {
		return actuators[i]
	})
	secEvents := newSection(fmt.Sprintf("events (%d, newest first):", logged), len(events), func(i int) string {
		return eventLine(events[i], now)
	})
	secEvents.hidden = logged - len(events)
	l := layout{
		sections: []*section{secSensors, secHealth, secActuators, secEvents},
		admission: []admission{
			{secHealth, inOrder(len(unhealthy))}, {secActuators, inOrder(len(actuators))},
			{secEvents, urgent}, {secSensors, inOrder(len(sensors))}, {secEvents, other},
		},
	}
	return l.render(maxBytes)
}

// minEventLine is the shortest an event line can be, newline included.
const minEventLine = len("  [low]  0s ago\n")

// recentEvents copies, newest first, the events a summary of maxBytes can
// show: no more than fit of each class (urgent: High and above, and the
// others), as the budget is filled per class. Copying the whole log for a
// small budget would cost a full log's worth of garbage per heartbeat.
// urgent and other index into events; logged is the size of the log.
func (m *Model) recentEvents(maxBytes int) (events []Event, urgent, other []int, logged int) {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	logged = m.events.len()
	quota := logged
	if maxBytes > 0 {
		quota = min(quota, maxBytes/minEventLine)
	}
	events = make([]Event, 0, min(logged, 2*quota))
	urgent, other = []int{}, []int{}
	for i := logged - 1; i >= 0 && (len(urgent) < quota || len(other) < quota); i-- {
		e := m.events.at(i)
		class := &other
		if e.Priority >= High {
			class = &urgent
		}
		if len(*class) < quota {
			*class = append(*class, len(events))
			events = append(events, *e)
		}
	}
	return events, urgent, other, logged
}

// stateLines returns the summary lines of unhealthy components and of
// actuators, sorted by name.
func (m *Model) stateLines() (unhealthy, actuators []string) {
	m.stMu.Lock()
	defer m.stMu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(m.health)) {
		if h := m.health[name]; !strings.EqualFold(strings.TrimSpace(h), "ok") {
			unhealthy = append(unhealthy, "  "+clean(name, maxInfoBytes)+": "+clean(h, maxInfoBytes))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.actuators)) {
		actuators = append(actuators, "  "+clean(name, maxInfoBytes)+": "+clean(m.actuators[name], maxInfoBytes))
	}
	return unhealthy, actuators
}

// section is one titled list of lines, formatted lazily: under a tight
// budget most lines are never needed.
type section struct {
	header string
	format func(i int) string
	lines  []string // formatted so far
	keep   []bool
	kept   int
	hidden int // items that cannot fit and were not even fetched
}

func newSection(header string, n int, format func(int) string) *section {
	return &section{header: header, format: format, lines: make([]string, n), keep: make([]bool, n)}
}

func (s *section) line(i int) string {
	if s.lines[i] == "" {
		s.lines[i] = s.format(i)
	}
	return s.lines[i]
}

// admission is one step of filling the budget: the lines of sec with the
// indices in order, as long as they fit.
type admission struct {
	sec   *section
	order []int
}

type layout struct {
	sections  []*section // print order
	admission []admission
}

// fill decides which lines fit in budget bytes and returns how many item
// lines were left out.
func (l *layout) fill(budget int) (omitted int) {
	for _, s := range l.sections {
		clear(s.keep)
		s.kept = 0
	}
	for _, a := range l.admission {
		for _, i := range a.order {
			cost := len(a.sec.line(i)) + 1
			if a.sec.kept == 0 {
				cost += len(a.sec.header) + 1
			}
			if cost > budget {
				break
			}
			budget -= cost
			a.sec.keep[i] = true
			a.sec.kept++
		}
	}
	for _, s := range l.sections {
		omitted += s.hidden + len(s.lines) - s.kept
	}
	return omitted
}

func (l *layout) render(maxBytes int) string {
	total := 0
	for _, s := range l.sections {
		total += s.hidden + len(s.lines)
	}
	if total == 0 {
		const empty = "nothing observed yet\n"
		if maxBytes > 0 && len(empty) > maxBytes {
			return ""
		}
		return empty
	}
	if maxBytes <= 0 {
		maxBytes = math.MaxInt
	}
	more := ""
	if omitted := l.fill(maxBytes); omitted > 0 {
		// Make room for the "more" line; its count can only be smaller
		// than total, so reserving total's width is enough.
		if reserve := len(moreLine(total)); reserve <= maxBytes {
			more = moreLine(l.fill(maxBytes - reserve))
		}
	}
	var b strings.Builder
	b.Grow(min(maxBytes, 64*total))
	for _, s := range l.sections {
		if s.kept == 0 {
			continue
		}
		b.WriteString(s.header)
		b.WriteByte('\n')
		for i, keep := range s.keep {
			if keep {
				b.WriteString(s.lines[i])
				b.WriteByte('\n')
			}
		}
	}
	b.WriteString(more)
	return b.String()
}

func inOrder(n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	return order
}

func moreLine(n int) string { return "… " + strconv.Itoa(n) + " more\n" }

func sensorLine(o Observation, now time.Time) string {
	var v string
	switch o.Kind {
	case Reading:
		v = formatValue(o.Value)
		if o.Unit != "" {
			v += " " + clean(o.Unit, maxInfoBytes)
		}
	case Text:
		v = strconv.Quote(truncate(o.Text, maxTextBytes))
	case BlobRef:
		v = "blob"
		if o.Blob != nil {
			if o.Blob.MIME != "" {
				v = clean(o.Blob.MIME, maxInfoBytes)
			}
			v += " " + formatSize(len(o.Blob.Data))
		}
	case EventRef:
		v = "event"
		if o.Event != nil {
			v += " " + clean(o.Event.Kind, maxInfoBytes)
			if o.Event.Message != "" {
				v += ": " + clean(o.Event.Message, maxInfoBytes)
			}
		}
	default:
		v = o.Kind.String()
	}
	return "  " + clean(o.Source, maxInfoBytes) + " = " + v + " (" + formatAge(now.Sub(o.Time)) + " ago)"
}

func eventLine(e Event, now time.Time) string {
	s := "  [" + e.Priority.String() + "] " + clean(e.Kind, maxInfoBytes)
	if e.Source != "" {
		s += " from " + clean(e.Source, maxInfoBytes)
	}
	s += " " + formatAge(now.Sub(e.Time)) + " ago"
	if e.Message != "" {
		s += ": " + clean(e.Message, maxInfoBytes)
	}
	return s
}

// formatValue keeps at least four significant digits and never rounds the
// integer part, without exponents for everyday magnitudes: 21.4375 → 21.44,
// 1013.25 → 1013, 0.012345 → 0.01235.
func formatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0) || a >= 1e15 || a < 1e-4:
		return strconv.FormatFloat(v, 'g', 4, 64)
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	decimals := 3 - int(math.Floor(math.Log10(a)))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// formatAge is a short duration for "… ago": 0.4s, 3s, 42s, 5m12s, 3h05m, 2d04h.
func formatAge(d time.Duration) string {
	if d < 0 {
		d = 0 // clock skew between producers and the reader
	}
	switch {
	case d < 10*time.Second:
		return strings.TrimSuffix(strconv.FormatFloat(d.Seconds(), 'f', 1, 64), ".0") + "s"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

func formatSize(n int) string {
	switch {
	case n < 1024:
		return strconv.Itoa(n) + " B"
	case n < 1024*1024:
		return strconv.Itoa((n+512)/1024) + " KB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + " MB"
}

// clean makes s safe for one summary line: control characters become
// spaces and long text is cut.
func clean(s string, max int) string {
	s = truncate(s, max)
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }

// truncate cuts s to at most max bytes plus an ellipsis, on a rune boundary.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
