package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensorconf"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// With Options.Detections "detectors", each sensor whose kind can run its
// detectors again (sensors.Redetector: the camera's motion detector, the
// microphone's wake word) is built from the board as the node would build
// it, and the recorded frames and audio go through it at their times; its
// recorded detections are not fed, its own are. The rest of the recording
// is fed as with "recorded".

// Detections are what one sensor's detectors found in a replay, beside
// what they found when the recording was made.
type Detections struct {
	Sensor  string
	Topics  []string // the recorded channels fed to the detectors
	Fed     int      // recorded inputs (frames, audio chunks) run through them
	Bad     int      // inputs the detectors could not take (a corrupt JPEG)
	BadNote string   // the first of those, with its time
	Kinds   []string // the event kinds compared
	// Recorded and Replayed are the detections (events of Kinds) with
	// their times on the recording's clock. Missing were recorded and not
	// found again, New found and not recorded, each within Tolerance.
	Recorded, Replayed []Detection
	Missing, New       []Detection
	Tolerance          time.Duration
}

// Detection is one event a detector raised.
type Detection struct {
	Kind    string
	Time    time.Time
	Message string
}

// Differ reports whether the detectors found something else.
func (d *Detections) Differ() bool { return len(d.Missing)+len(d.New) > 0 }

// detector is one sensor's detectors in a replay. It is their Sink: what
// they report waits in out until the driver hands it to the node.
type detector struct {
	red                 *sensors.Redetection
	rep                 *Detections
	in, sources, events map[string]bool
	out                 []worldmodel.Item
	inputs              int // found in the recording
}

func (d *detector) Observe(o worldmodel.Observation) {
	if d.sources[o.Source] {
		d.out = append(d.out, worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: o})
	}
}

func (d *detector) Raise(e worldmodel.Event) {
	if d.events[e.Kind] {
		if e.Source == "" {
			e.Source = d.rep.Sensor
		}
		d.out = append(d.out, worldmodel.Item{Kind: worldmodel.ItemEvent, Event: e})
	}
}

// newDetectors builds the detectors of the board's enabled sensors. A
// kind this binary does not link has none here.
func newDetectors(cfg *board.Config, dir string) ([]*detector, error) {
	var dets []*detector
	kinds := sensors.Kinds()
	for i, sc := range cfg.Sensors {
		if !sc.Enabled || !slices.Contains(kinds, sc.Kind) {
			continue
		}
		scfg, _, err := sensorconf.Of(cfg, sc, dir)
		if err != nil {
			return nil, sensorconf.Locate(cfg, i, err)
		}
		s, err := sensors.New(scfg)
		if err != nil {
			return nil, fmt.Errorf("--detections detectors: %w", sensorconf.Locate(cfg, i, err))
		}
		r, ok := s.(sensors.Redetector)
		if !ok {
			continue
		}
		d := &detector{rep: &Detections{Sensor: sc.Name}}
		red, err := r.Redetect(d)
		if err != nil {
			return nil, fmt.Errorf("--detections detectors: sensor %q: %w", sc.Name, err)
		}
		if red == nil {
			continue
		}
		d.red, d.rep.Kinds, d.rep.Tolerance = red, red.Events, red.Tolerance
		d.in, d.sources, d.events = set(red.Inputs), set(red.Sources), set(red.Events)
		for _, src := range red.Inputs {
			d.rep.Topics = append(d.rep.Topics, record.BlobTopic(src, red.MIME))
		}
		dets = append(dets, d)
	}
	if len(dets) == 0 {
		return nil, errors.New("--detections detectors: the board has no detectors to run (a camera with motion enabled, a microphone with a wake word)")
	}
	return dets, nil
}

func set(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// claim takes the messages that are the detectors' business: their inputs
// (returned, to be fed) and their recorded outputs (left out; the events
// among them kept to compare).
func claim(m recording.Msg, dets []*detector) (*input, bool, error) {
	c := m.Channel
	for _, d := range dets {
		switch {
		case d.in[c.Source] && (c.Kind == record.KindImage || c.Kind == record.KindAudio):
			b, err := blobOf(m)
			if err != nil {
				return nil, true, err
			}
			d.inputs++
			return &input{t: m.Time, det: d, obs: &worldmodel.Observation{Time: m.Time, Source: c.Source, Kind: worldmodel.BlobRef, Blob: b}}, true, nil
		case d.sources[c.Source] && (c.Kind == record.KindObservation || c.Kind == record.KindImage):
			return nil, true, nil
		case c.Kind == record.KindEvent && c.Source == d.rep.Sensor:
			var msg message
			if err := json.Unmarshal(m.Data, &msg); err != nil {
				return nil, true, fmt.Errorf("not a recorder message")
			}
			if d.events[msg.Kind] {
				d.rep.Recorded = append(d.rep.Recorded, Detection{Kind: msg.Kind, Time: m.Time, Message: msg.Message})
				return nil, true, nil
			}
		}
	}
	return nil, false, nil
}

// blobOf is a recorded frame (foxglove.CompressedImage) or audio chunk
// (edgeagent.Audio) as the blob the sensor observed.
func blobOf(m recording.Msg) (*worldmodel.Blob, error) {
	var b struct {
		Format string `json:"format"`
		MIME   string `json:"mime"`
		Data   []byte `json:"data"` // base64
	}
	if err := json.Unmarshal(m.Data, &b); err != nil {
		return nil, fmt.Errorf("not an image or audio message: %w", err)
	}
	if b.MIME == "" {
		b.MIME = "image/" + b.Format
	}
	return &worldmodel.Blob{MIME: b.MIME, Data: b.Data}, nil
}

// missingInputs is the error for detectors the recording has nothing for.
func missingInputs(dets []*detector) error {
	for _, d := range dets {
		if d.inputs > 0 {
			continue
		}
		hint := "camera frames are recorded with record.frames"
		if d.red.MIME != "image/jpeg" {
			hint = "audio is recorded with record: {audio: true}, around speech only"
		}
		return fmt.Errorf("--detections detectors: the recording has nothing for the detectors of sensor %q: no %s (%s)",
			d.rep.Sensor, strings.Join(d.rep.Topics, " or "), hint)
	}
	return nil
}

// compareDetections pairs each sensor's recorded and replayed detections
// of one kind in time order; a pair further apart than the tolerance is
// one missing and one new.
func compareDetections(d *Detections) {
	for _, k := range d.Kinds {
		w, g := ofDetKind(d.Recorded, k), ofDetKind(d.Replayed, k)
		i, j := 0, 0
		for i < len(w) || j < len(g) {
			switch {
			case i < len(w) && j < len(g) && absDur(w[i].Time.Sub(g[j].Time)) <= d.Tolerance:
				i, j = i+1, j+1
			case j == len(g) || i < len(w) && w[i].Time.Before(g[j].Time):
				d.Missing = append(d.Missing, w[i])
				i++
			default:
				d.New = append(d.New, g[j])
				j++
			}
		}
	}
}

func ofDetKind(ds []Detection, kind string) []Detection {
	var out []Detection
	for _, d := range ds {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Detection) int { return a.Time.Compare(b.Time) })
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// printDetections writes each sensor's detections and, where they
// differ, every detection that moved, appeared or vanished.
func (r *Report) printDetections(w io.Writer) {
	if len(r.Detectors) > 0 {
		fmt.Fprintln(w, "detections by the board's detectors over the recorded frames and audio:")
	}
	for i := range r.Detectors {
		d := &r.Detectors[i]
		fmt.Fprintf(w, "  %-16s %d inputs from %s", d.Sensor, d.Fed, strings.Join(d.Topics, ", "))
		for _, k := range d.Kinds {
			fmt.Fprintf(w, "; %s recorded %d replayed %d", k, len(ofDetKind(d.Recorded, k)), len(ofDetKind(d.Replayed, k)))
		}
		fmt.Fprintln(w)
		if d.Bad > 0 {
			fmt.Fprintf(w, "    %d of %d inputs could not be used; the first %s\n", d.Bad, d.Fed, d.BadNote)
		}
	}
	for i := range r.Detectors {
		d := &r.Detectors[i]
		if !d.Differ() {
			continue
		}
		same := "at the same time"
		if d.Tolerance > 0 {
			same = fmt.Sprintf("within %v", d.Tolerance)
		}
		fmt.Fprintf(w, "DETECTIONS DIFFER for %s (a detection counts as found again %s):\n", d.Sensor, same)
		type change struct {
			sign string
			Detection
		}
		var diff []change
		for _, m := range d.Missing {
			diff = append(diff, change{"- recorded only", m})
		}
		for _, n := range d.New {
			diff = append(diff, change{"+ replayed only", n})
		}
		slices.SortStableFunc(diff, func(a, b change) int { return a.Time.Compare(b.Time) })
		for _, x := range diff {
			fmt.Fprintf(w, "  %s  %s at +%s  %s\n", x.sign, x.Kind, x.Time.Sub(r.Start).Round(time.Millisecond), x.Message)
		}
	}
}
