package mic

import (
	"encoding/binary"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The microphone's audio as an observation (<name>.audio), for the
// recorder: produced only while a consumer watches the source (record.audio
// in the board; nobody by default, and then it costs one check per read),
// and only around speech — the VAD opens the tap, a pre-roll keeps the
// onset, a hangover keeps the tail — so a recording holds what was said
// and not hours of room noise.

// AudioMIME is the encoding of <name>.audio blobs: 16-bit linear PCM,
// big-endian (RFC 2586), 16 kHz mono.
const AudioMIME = "audio/L16;rate=16000;channels=1"

const (
	tapChunk = 4000 // samples per blob: 250 ms
	// tapPreroll is the audio kept before speech opens the tap: 1.5 s, as
	// far back as the wake-word model looks (its receptive field is 1.27
	// s), so that a replay running the detector again over the recording
	// (replay --detections detectors) gives it the context it had live. A
	// quarter of a second was enough for the onset, but the model, started
	// on it, missed a phrase it had caught live.
	tapPreroll  = 24000
	tapHangover = 50 // hops (10 ms each) of silence before it closes
)

// tap gates the samples a pipeline reads into <name>.audio blobs.
type tap struct {
	source  string
	watcher sensors.Watcher // nil: the sink cannot say; nothing is produced
	pre     []int16         // the last tapPreroll samples, a ring
	preAt   int
	preN    int
	chunk   []int16
	quiet   int // hops without speech since the last with it
	open    bool
}

func newTap(source string, out sensors.Sink) *tap {
	w, _ := out.(sensors.Watcher)
	return &tap{source: source, watcher: w, quiet: tapHangover}
}

// hop takes the VAD's verdict on one hop.
func (t *tap) hop(speech bool) {
	if speech {
		t.quiet = 0
		return
	}
	t.quiet++
}

// add takes the samples the hops were judged on, the last captured at now.
func (t *tap) add(samples []int16, now time.Time, out sensors.Sink) {
	if t.watcher == nil || !t.watcher.Watched(t.source) {
		// Nobody records audio (the default): the 48 KB pre-roll is not
		// held, and goes again when a recording stops.
		t.open, t.preN, t.pre, t.chunk = false, 0, nil, nil
		return
	}
	if t.pre == nil {
		t.pre, t.preAt, t.chunk = make([]int16, tapPreroll), 0, make([]int16, 0, tapChunk)
	}
	speaking := t.quiet < tapHangover
	if !speaking && !t.open {
		t.keep(samples)
		return
	}
	if speaking && !t.open {
		t.open = true
		t.drainPreroll(now, out)
	}
	// Speech, or the end of the hangover (then the segment closes).
	for len(samples) > 0 {
		n := min(len(samples), tapChunk-len(t.chunk))
		t.chunk = append(t.chunk, samples[:n]...)
		samples = samples[n:]
		if len(t.chunk) == tapChunk {
			t.flush(now, out)
		}
	}
	if !speaking {
		t.open = false
		t.flush(now, out)
	}
}

// keep puts samples into the pre-roll ring.
func (t *tap) keep(samples []int16) {
	if len(samples) > len(t.pre) {
		samples = samples[len(samples)-len(t.pre):]
	}
	for _, v := range samples {
		t.pre[t.preAt] = v
		t.preAt = (t.preAt + 1) % len(t.pre)
	}
	t.preN = min(t.preN+len(samples), len(t.pre))
}

// drainPreroll starts the chunk with the pre-roll, oldest first.
func (t *tap) drainPreroll(now time.Time, out sensors.Sink) {
	start := (t.preAt - t.preN + len(t.pre)) % len(t.pre)
	for i := range t.preN {
		t.chunk = append(t.chunk, t.pre[(start+i)%len(t.pre)])
		if len(t.chunk) == tapChunk {
			t.flush(now, out)
		}
	}
	t.preN = 0
}

// flush observes the chunk as one blob (a fresh slice: the model keeps it).
func (t *tap) flush(now time.Time, out sensors.Sink) {
	if len(t.chunk) == 0 {
		return
	}
	data := make([]byte, 2*len(t.chunk))
	for i, v := range t.chunk {
		binary.BigEndian.PutUint16(data[2*i:], uint16(v))
	}
	t.chunk = t.chunk[:0]
	out.Observe(worldmodel.Observation{Time: now, Source: t.source, Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: AudioMIME, Data: data}})
}
