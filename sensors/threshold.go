package sensors

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// Threshold turns a numeric reading into events. Exactly one of Above,
// Below and Change is set:
//
//   - Above X raises Event when the reading goes above X, and re-arms only
//     once it has fallen to X-Hysteresis or below (then "<event>_cleared"
//     is raised at Low priority). Without the hysteresis band a reading that
//     hovers around X with noise would raise an event on every sample.
//   - Below X is the mirror image (re-arms at X+Hysteresis).
//   - Change D raises Event whenever the reading has moved by D or more
//     since the value that last raised it (the first reading is the initial
//     reference). It has no hysteresis: D is already a dead band.
//
// A reading that is already beyond an Above/Below limit when the sensor
// starts raises at once: a robot that boots next to a fire should know.
type Threshold struct {
	Quantity   string // the part of the source after "<sensor>.", e.g. "temperature"
	Above      *float64
	Below      *float64
	Change     *float64
	Hysteresis float64
	Priority   worldmodel.Priority
	Event      string // event kind; "threshold" when empty
}

// Validate reports a threshold that WithThresholds cannot evaluate.
func (t Threshold) Validate() error {
	n := 0
	for _, p := range []*float64{t.Above, t.Below, t.Change} {
		if p != nil {
			n++
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				return errors.New("threshold: limit must be a finite number")
			}
		}
	}
	switch {
	case t.Quantity == "":
		return errors.New("threshold: quantity is required")
	case n != 1:
		return errors.New("threshold: set exactly one of above, below, change")
	case t.Hysteresis < 0 || math.IsNaN(t.Hysteresis):
		return errors.New("threshold: hysteresis must be >= 0")
	case t.Change != nil && *t.Change <= 0:
		return errors.New("threshold: change must be > 0")
	case t.Change != nil && t.Hysteresis != 0:
		return errors.New("threshold: hysteresis has no meaning with change (change is its own dead band)")
	case t.Priority < worldmodel.Low || t.Priority > worldmodel.Critical:
		return fmt.Errorf("threshold: invalid priority %d", t.Priority)
	}
	return nil
}

// WithThresholds returns a Sink that passes everything to next and, for
// each reading of sensorName whose quantity has thresholds, raises their
// events on next. Thresholds must be valid (see Validate); an invalid one
// is ignored rather than guessed at. Safe for concurrent use.
func WithThresholds(sensorName string, ts []Threshold, next Sink) Sink {
	w := &thresholdSink{next: next}
	for _, t := range ts {
		if t.Validate() != nil {
			continue
		}
		if t.Event == "" {
			t.Event = "threshold"
		}
		w.states = append(w.states, thresholdState{
			Threshold: t,
			source:    sensorName + "." + t.Quantity,
			armed:     true,
		})
	}
	if len(w.states) == 0 {
		return next
	}
	return w
}

type thresholdSink struct {
	next   Sink
	mu     sync.Mutex
	states []thresholdState
}

type thresholdState struct {
	Threshold
	source string  // events carry the reading's source, so two quantities of one sensor never coalesce
	armed  bool    // Above/Below: an event will be raised at the next crossing
	seen   bool    // Change: ref holds a reference value
	ref    float64 // Change: value at the last event (or the first reading)
}

func (w *thresholdSink) Raise(e worldmodel.Event) { w.next.Raise(e) }

func (w *thresholdSink) Observe(o worldmodel.Observation) {
	// Record the reading first so the event's context is already in the
	// world model when the agent wakes up for it.
	w.next.Observe(o)
	if o.Kind != worldmodel.Reading || math.IsNaN(o.Value) {
		return
	}
	// Events are raised under the lock: raised outside it, two goroutines
	// could deliver an alarm and its clearing in the wrong order. Raise
	// never blocks, so holding the lock is cheap.
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.states {
		s := &w.states[i]
		if s.source != o.Source {
			continue
		}
		if e, ok := s.step(o); ok {
			w.next.Raise(e)
		}
	}
}

// step advances one threshold with reading o and returns the event to
// raise, if any.
func (s *thresholdState) step(o worldmodel.Observation) (worldmodel.Event, bool) {
	v := o.Value
	switch {
	case s.Above != nil:
		lim := *s.Above
		if s.armed && v > lim {
			s.armed = false
			return s.event(o, s.Event, s.Priority, "above", lim), true
		}
		if !s.armed && v <= lim-s.Hysteresis {
			s.armed = true
			return s.event(o, s.Event+"_cleared", worldmodel.Low, "above", lim), true
		}
	case s.Below != nil:
		lim := *s.Below
		if s.armed && v < lim {
			s.armed = false
			return s.event(o, s.Event, s.Priority, "below", lim), true
		}
		if !s.armed && v >= lim+s.Hysteresis {
			s.armed = true
			return s.event(o, s.Event+"_cleared", worldmodel.Low, "below", lim), true
		}
	case s.Change != nil:
		if !s.seen {
			s.seen, s.ref = true, v
			return worldmodel.Event{}, false
		}
		if math.Abs(v-s.ref) >= *s.Change {
			e := s.event(o, s.Event, s.Priority, "change", *s.Change)
			e.Data["from"] = s.ref
			s.ref = v
			return e, true
		}
	}
	return worldmodel.Event{}, false
}

func (s *thresholdState) event(o worldmodel.Observation, kind string, p worldmodel.Priority, rule string, limit float64) worldmodel.Event {
	// A reading without a time gets it from the world model, on the run's
	// clock, and so does an event: the event keeps the reading's.
	t := o.Time
	msg := o.Source + " " + fmtFloat(o.Value)
	if o.Unit != "" {
		msg += " " + o.Unit
	}
	switch {
	case rule == "change":
		msg += " changed by " + fmtFloat(math.Abs(o.Value-s.ref)) + " (threshold " + fmtFloat(limit) + ")"
	case kind == s.Event:
		msg += " " + rule + " " + fmtFloat(limit)
	default:
		msg += " back within " + rule + " " + fmtFloat(limit) + " (hysteresis " + fmtFloat(s.Hysteresis) + ")"
	}
	return worldmodel.Event{
		Time:     t,
		Kind:     kind,
		Source:   s.source,
		Priority: p,
		Message:  msg,
		Data: map[string]any{
			"quantity": s.Quantity,
			"value":    o.Value,
			"unit":     o.Unit,
			rule:       limit,
		},
	}
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
