package sensors

import (
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// Redetector is implemented by a sensor kind whose detectors can run again
// over what a recording kept of their input (a camera's frames, a
// microphone's speech): a replay then checks a changed detector, threshold
// or model against recorded data instead of feeding the recorded
// detections (record/replay, `replay --detections detectors`).
type Redetector interface {
	// Redetect returns the sensor's detectors reporting to out as they
	// do live, or nil when the sensor's block enables none. Nothing is
	// opened and no goroutine is started.
	Redetect(out Sink) (*Redetection, error)
}

// Redetection is a sensor's detectors fed recorded input.
type Redetection struct {
	// Inputs are the sources of the recorded observations the detectors
	// take, e.g. cam.snapshot, all blobs of type MIME.
	Inputs []string
	MIME   string
	// Sources and Events are what the detectors make: observation sources
	// and the kinds of the events the sensor raises. A replay feeds none
	// of their recorded values, it takes the detectors' own; anything else
	// Feed reports (levels, say) is already in the recording and dropped.
	Sources, Events []string
	// Tolerance is how far a detection's time may move between the live
	// run and a replay without being a difference: inputs whose recorded
	// times are the ones the detectors saw need none.
	Tolerance time.Duration
	// Feed runs the detectors over one recorded input, synchronously, at
	// the input's time. An error is that input's alone (a frame that does
	// not decode): the detectors go on with the next.
	Feed func(in worldmodel.Observation) error
}
