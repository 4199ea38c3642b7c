// Package worldmodel holds what the agent knows about the world: typed
// observations in one bounded ring per source, an event log with priorities,
// and actuator states. Memory is bounded by configuration, never by uptime.
package worldmodel

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Priority orders events. The agent loop preempts a running cycle when an
// event of strictly higher priority arrives.
type Priority int8

const (
	Low      Priority = iota // heartbeats, housekeeping
	Normal                   // commands
	High                     // motion start, wake word, PIR, threshold alarms
	Critical                 // e-stop
)

// priorityNames are the priorities' names, by value.
var priorityNames = [...]string{Low: "low", Normal: "normal", High: "high", Critical: "critical"}

func (p Priority) String() string {
	if p >= 0 && int(p) < len(priorityNames) {
		return priorityNames[p]
	}
	return fmt.Sprintf("priority(%d)", int8(p))
}

// ParsePriority is the inverse of Priority.String.
func ParsePriority(s string) (Priority, error) {
	if i := slices.Index(priorityNames[:], s); i >= 0 {
		return Priority(i), nil
	}
	return 0, errors.New("unknown priority (want low, normal, high or critical)")
}

// Kind says which fields of an Observation carry its value.
type Kind uint8

const (
	Reading  Kind = iota + 1 // Value + Unit
	Text                     // Text
	BlobRef                  // Blob (e.g. a JPEG snapshot)
	EventRef                 // Event
)

// kindNames are the kinds' names, by value (0 is no kind).
var kindNames = [...]string{Reading: "reading", Text: "text", BlobRef: "blob", EventRef: "event"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Observation is one sample from one source. Source names are
// "<sensor>.<quantity>" by convention (e.g. "env.temperature"); each source
// has its own bounded ring.
type Observation struct {
	Seq    uint64 // assigned by the model on append, strictly increasing across sources
	Time   time.Time
	Source string
	Kind   Kind
	Value  float64 // Reading
	Unit   string  // Reading
	Text   string  // Text
	Blob   *Blob   // BlobRef
	Event  *Event  // EventRef
}

// Blob is an opaque binary payload such as a JPEG frame. The model keeps the
// reference; the bytes must not be modified after they are observed.
type Blob struct {
	MIME string
	Data []byte
}

// Event is something that happened, with a priority. Kind is a short
// snake_case word (motion_start, wake_word, estop, threshold, sensor_fault,
// preempted, ...); Source is the sensor, actuator or subsystem that raised it.
type Event struct {
	Seq      uint64 // assigned by the model when recorded
	Time     time.Time
	Kind     string
	Source   string
	Priority Priority
	Message  string
	Data     map[string]any // small, JSON-encodable details (boxes, scores, values)
}

// Key identifies repeats of "the same" event for coalescing.
func (e Event) Key() string { return e.Source + "/" + e.Kind }
