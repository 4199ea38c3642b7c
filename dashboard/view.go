package dashboard

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// What the page starts from (/api/state) is the same stream the live
// channel carries, in the same order and encoding: the page handles both
// with one function, so a reload shows what a page left open shows.

// stateLimit is how many list lines (events and LLM exchanges) and how many
// tool calls the page starts with.
const stateLimit = 100

// toolCall is the journal's kind for a tools registry call: the Audit
// tab's live list.
const toolCall = "tool_call"

// eventLog is the world model as the page's start reads it: its event log
// and journal with their counters, and the health states (the e-stop
// latch).
type eventLog interface {
	Stats() worldmodel.Stats
	Events(sinceSeq uint64, min worldmodel.Priority, limit int) []worldmodel.Event
	Records(sinceSeq uint64, limit int) []worldmodel.Record
	Health() map[string]string
}

// stateItems returns the newest events, LLM exchanges and tool calls as
// live messages, oldest first by the stream's sequence number, with the
// repeats of a failure (repeatKey) collapsed into their newest occurrence,
// which carries how many there were ("n") and when the first was ("first").
//
// The event log and the journal each keep their newest items, to different
// depths; merged, they are only complete from the later of their oldest
// items on, so when a log has lost items no list line older than its oldest
// is shown: the list never shows a stretch of the stream with one kind of
// line missing (a journal flooded by tool calls shortens it). Tool calls
// are a list of their own, complete as far as the journal reaches.
func stateItems(w eventLog) rawList {
	st := w.Stats() // before the copies: items added meanwhile only make the cut earlier
	evs := w.Events(0, worldmodel.Low, 0)
	recs := w.Records(0, 0)
	var from uint64
	if len(evs) > 0 && st.Events > uint64(len(evs)) {
		from = evs[0].Seq
	}
	if len(recs) > 0 && st.Records > uint64(len(recs)) {
		from = max(from, recs[0].Seq)
	}
	items := make([]worldmodel.Item, 0, len(evs)+len(recs))
	for _, e := range evs {
		if e.Seq >= from { // every event is a list line
			items = append(items, worldmodel.Item{Kind: worldmodel.ItemEvent, Event: e})
		}
	}
	for _, r := range recs {
		if r.Kind == toolCall || (r.Kind == recordLLM && r.Seq >= from) {
			items = append(items, worldmodel.Item{Kind: worldmodel.ItemRecord, Record: r})
		}
	}
	slices.SortFunc(items, func(a, b worldmodel.Item) int { return cmp.Compare(a.Seq(), b.Seq()) })
	return collapse(items)
}

// repeat is a failure's newest kept occurrence and what its older ones add.
type repeat struct {
	n     int
	first int64 // unix ms of the oldest occurrence
}

// collapse keeps, newest first, stateLimit list lines and stateLimit tool
// calls; a failure seen again further back adds to its newest line instead
// of taking one. It returns the kept items encoded, oldest first.
func collapse(items []worldmodel.Item) rawList {
	var (
		keep        []int // indexes into items, newest first
		keys        = make([]string, len(items))
		reps        = map[string]*repeat{}
		repOf       = map[int]*repeat{}
		lines, call int
	)
	for i := len(items) - 1; i >= 0; i-- {
		it := &items[i]
		if it.Kind == worldmodel.ItemRecord && it.Record.Kind == toolCall {
			if call < stateLimit {
				call++
				keep = append(keep, i)
			}
			continue
		}
		k := repeatKey(it)
		keys[i] = k
		if r := reps[k]; k != "" && r != nil {
			r.n++
			r.first = itemTime(it)
			continue
		}
		if lines == stateLimit {
			continue
		}
		lines++
		keep = append(keep, i)
		if k != "" {
			reps[k] = &repeat{n: 1, first: itemTime(it)}
			repOf[i] = reps[k]
		}
	}
	out := make(rawList, 0, len(keep))
	for _, i := range slices.Backward(keep) {
		b := encode(nil, &items[i], keys[i])
		if r := repOf[i]; r != nil && r.n > 1 {
			b = b[:len(b)-1] // the closing brace
			b = append(b, `,"n":`...)
			b = strconv.AppendInt(b, int64(r.n), 10)
			b = append(b, `,"first":`...)
			b = strconv.AppendInt(b, r.first, 10)
			b = append(b, '}')
		}
		out = append(out, b)
	}
	return out
}

func itemTime(it *worldmodel.Item) int64 {
	if it.Kind == worldmodel.ItemEvent {
		return it.Event.Time.UnixMilli()
	}
	return it.Record.Time.UnixMilli()
}

// recordLLM is the journal's kind for an exchange with the model.
const recordLLM = "llm"

// maxRepeatWhy bounds the error clause in a repeat key.
const maxRepeatWhy = 80

// repeatKey names the failure an item reports, so that the page shows its
// repeats as one line with a count and the time it was last seen: without
// Ollama the engine fails every ~20 s, and one line per attempt buried
// everything else. A failure is an LLM exchange that ended in an error, an
// event whose data carries an "error" (a sensor's fault) or an event whose
// kind ends in "_failed". The key is the kind, the source and the error's
// leading clause ("llm unavailable" of "llm unavailable: ollama at …: dial
// tcp …"), so another failure of the same part is a line of its own.
// Anything else (decisions, motion, e-stops) has no key and is never
// collapsed. The stream itself keeps every record: this is only the view.
func repeatKey(it *worldmodel.Item) string {
	var kind, src, why string
	switch it.Kind {
	case worldmodel.ItemEvent:
		e := &it.Event
		kind, src = e.Kind, e.Source
		if s, ok := e.Data["error"].(string); ok && s != "" {
			why = s
		} else if strings.HasSuffix(e.Kind, "_failed") {
			why = e.Message
		} else {
			return ""
		}
	case worldmodel.ItemRecord:
		r := &it.Record
		if r.Kind != recordLLM || !bytes.Contains(r.Data, []byte(`"error"`)) { // a success has none: no need to parse it
			return ""
		}
		var d struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(r.Data, &d) != nil || d.Error == "" {
			return ""
		}
		kind, src, why = r.Kind, r.Source, d.Error
	default:
		return ""
	}
	if i := strings.Index(why, ": "); i >= 0 {
		why = why[:i]
	}
	if len(why) > maxRepeatWhy {
		why = strings.ToValidUTF8(why[:maxRepeatWhy], "")
	}
	return kind + " " + src + ": " + why
}

// estopView is the e-stop as the page shows it: latched or not comes from
// the actuators' latch, which they keep in the world model's health (where
// MQTT's retained state/estop reads it too), not from the events the page
// happens to hold, so an e-stop stays on the page until it is reset however
// much has happened since. When and by whom come from the e-stop that
// latched it, while the event log still holds it (a latch restored at
// start-up has no event).
type estopView struct {
	Latched bool   `json:"latched"`
	Time    int64  `json:"ts,omitempty"`
	Source  string `json:"src,omitempty"`
	Message string `json:"msg,omitempty"`
}

// The e-stop's health component and event kinds (tools/actuator's; the
// dashboard does not import the actuators).
const (
	healthEStop     = "estop"
	eventEStop      = "estop"
	eventEStopReset = "estop_reset"
)

func estopState(w eventLog) estopView {
	if w.Health()[healthEStop] != "latched" {
		return estopView{}
	}
	v := estopView{Latched: true}
	// The latch keeps the first e-stop until a reset: the oldest e-stop
	// after the newest reset.
	evs := w.Events(0, worldmodel.Normal, 0)
	for i := len(evs) - 1; i >= 0 && evs[i].Kind != eventEStopReset; i-- {
		if e := evs[i]; e.Kind == eventEStop {
			v.Time, v.Source, v.Message = e.Time.UnixMilli(), e.Source, e.Message
		}
	}
	return v
}
