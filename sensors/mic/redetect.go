package mic

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var _ sensors.Redetector = (*Sensor)(nil)

// Redetect implements sensors.Redetector: the recorded audio around speech
// (<name>.audio, record.audio) goes through the pipeline the live audio
// goes through, in reads of the live size, so the detector (trained head,
// VAD, refractory period) and the wake_word events are the live ones.
// What the gaps between speech segments held is not in the recording: the
// detector hears the segments back to back. No command is
// captured after a wake word (the transcripts are recorded), and with
// detector wyoming the built-in detector decides, as live while the
// server is down.
func (s *Sensor) Redetect(out sensors.Sink) (*sensors.Redetection, error) {
	if s.o.WakeWord.Detector == "off" || len(s.heads) == 0 {
		return nil, nil
	}
	p, err := s.newPipeline(out)
	if err != nil {
		return nil, err
	}
	p.replay = true
	var samples []int16
	return &sensors.Redetection{
		Inputs: []string{s.name + ".audio"},
		MIME:   AudioMIME,
		Events: []string{EventWakeWord},
		// A chunk is stamped with the capture time of the read that
		// completes it, and live reads are up to 100 ms long: a replay's
		// reads, cut from the chunk, end at other times.
		Tolerance: 300 * time.Millisecond,
		Feed: func(in worldmodel.Observation) error {
			if in.Blob == nil || in.Blob.MIME != AudioMIME {
				return fmt.Errorf("audio is not %s", AudioMIME)
			}
			samples = samples[:0]
			for i := 0; i+1 < len(in.Blob.Data); i += 2 {
				samples = append(samples, int16(binary.BigEndian.Uint16(in.Blob.Data[i:])))
			}
			// The chunk's last sample is at its time.
			for i := 0; i < len(samples); i += len(p.buf) {
				end := min(i+len(p.buf), len(samples))
				at := in.Time.Add(-time.Duration(len(samples)-end) * time.Second / audio.Rate)
				p.process(samples[i:end], at)
			}
			return nil
		},
	}, nil
}
