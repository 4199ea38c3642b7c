package camera

import (
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var _ sensors.Redetector = (*Sensor)(nil)

// Redetect implements sensors.Redetector: recorded snapshots (JPEG, at
// their frame times) go through the processor a captured frame goes
// through, so the motion state machine, its events and the snapshots are
// the live ones. Only the telemetry of Run's ticker (fps, drops,
// detect_ms) is left out: it runs on the wall clock, and the recording
// has it.
func (s *Sensor) Redetect(out sensors.Sink) (*sensors.Redetection, error) {
	if !s.o.Motion.Enabled {
		return nil, nil
	}
	det, err := motion.New(s.o.Motion.Config)
	if err != nil {
		return nil, err
	}
	p := newProcessor(s, det, out, newHandoff(true))
	src := s.name + "."
	var f Frame
	var seq uint64
	var last time.Time // of the last input, fed or not
	return &sensors.Redetection{
		// A motion start's frame is recorded twice, as snapshot and
		// motion_snapshot, and is fed once.
		Inputs:  []string{src + "snapshot", src + "motion_snapshot"},
		MIME:    "image/jpeg",
		Sources: []string{src + "motion", src + "motion_area", src + "motion_update", src + "snapshot", src + "motion_snapshot"},
		Events:  []string{EventMotionStart, EventMotionEnd},
		Feed: func(in worldmodel.Observation) error {
			if seq > 0 && in.Time.Equal(last) {
				return nil
			}
			seq, last = seq+1, in.Time
			if in.Blob == nil || in.Blob.MIME != "image/jpeg" {
				return fmt.Errorf("%w: not a JPEG frame", ErrBadFrame)
			}
			if err := decodeJPEG(in.Blob.Data, &f); err != nil {
				return fmt.Errorf("%w: %w", ErrBadFrame, err)
			}
			f.Seq, f.Time = seq, in.Time
			p.frame(&f)
			return nil
		},
	}, nil
}
