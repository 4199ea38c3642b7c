package mic

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// tapSink records observations and watches what it is told to.
type tapSink struct {
	watched bool
	obs     []worldmodel.Observation
}

func (s *tapSink) Observe(o worldmodel.Observation) { s.obs = append(s.obs, o) }
func (s *tapSink) Raise(worldmodel.Event)           {}
func (s *tapSink) Watched(string) bool              { return s.watched }

// feed gives the tap n hops of 160 samples with the VAD's verdict; each
// sample holds its index in the stream, so what comes out can be located.
func feed(tp *tap, out *tapSink, next *int, hops int, speech bool) {
	for range hops {
		hop := make([]int16, 160)
		for i := range hop {
			hop[i] = int16(*next % 30000)
			*next++
		}
		tp.hop(speech)
		tp.add(hop, time.Unix(0, 0), out)
	}
}

func samplesOf(obs []worldmodel.Observation) []int16 {
	var out []int16
	for _, o := range obs {
		for i := 0; i+1 < len(o.Blob.Data); i += 2 {
			out = append(out, int16(binary.BigEndian.Uint16(o.Blob.Data[i:])))
		}
	}
	return out
}

func TestTapSpeechOnlyWithPrerollAndTail(t *testing.T) {
	out := &tapSink{watched: true}
	tp := newTap("mic.audio", out)
	next := 0
	feed(tp, out, &next, 200, false) // 2 s of room noise: nothing
	if len(out.obs) != 0 {
		t.Fatalf("%d blobs before any speech", len(out.obs))
	}
	onset := next
	feed(tp, out, &next, 100, true)             // 1 s of speech
	feed(tp, out, &next, tapHangover+20, false) // the tail, then silence
	got := samplesOf(out.obs)
	// Pre-roll (1.5 s) + speech (1 s) + the hangover (500 ms).
	want := tapPreroll + 100*160 + tapHangover*160
	if len(got) != want {
		t.Fatalf("%d samples, want %d", len(got), want)
	}
	if first := int(got[0]); first != onset-tapPreroll {
		t.Fatalf("first sample %d, want the pre-roll from %d", first, onset-tapPreroll)
	}
	for i := 1; i < len(got); i++ {
		if int(got[i]) != (int(got[i-1])+1)%30000 {
			t.Fatalf("a gap at %d: %d then %d", i, got[i-1], got[i])
		}
	}
	for i, o := range out.obs {
		if o.Source != "mic.audio" || o.Kind != worldmodel.BlobRef || o.Blob.MIME != AudioMIME || len(o.Blob.Data) > 2*tapChunk {
			t.Fatalf("blob %d: %s %v %s %d bytes", i, o.Source, o.Kind, o.Blob.MIME, len(o.Blob.Data))
		}
	}
	// Nobody watching: nothing, whatever is said.
	out.obs, out.watched = nil, false
	feed(tp, out, &next, 100, true)
	if len(out.obs) != 0 {
		t.Fatalf("%d blobs while unwatched", len(out.obs))
	}
}

// A read of many hops at once never makes a blob longer than a chunk,
// also when it closes the segment.
func TestTapChunksLargeReads(t *testing.T) {
	out := &tapSink{watched: true}
	tp := newTap("mic.audio", out)
	read := make([]int16, 4800) // 300 ms, more than a chunk
	add := func(hops int, speech bool) {
		for range hops {
			tp.hop(speech)
		}
		tp.add(read, time.Unix(0, 0), out)
	}
	for range 6 {
		add(30, false) // 1.8 s of room noise: the pre-roll keeps its last 1.5 s
	}
	add(30, true)           // speech opens the tap
	add(30, true)           //
	add(tapHangover, false) // the hangover ends: this read closes the segment
	total := 0
	for i, o := range out.obs {
		if len(o.Blob.Data) > 2*tapChunk {
			t.Fatalf("blob %d: %d bytes, more than a chunk", i, len(o.Blob.Data))
		}
		total += len(o.Blob.Data) / 2
	}
	if want := tapPreroll + 3*len(read); total != want {
		t.Fatalf("%d samples, want %d", total, want)
	}
}

func TestTapIdleCostsNoAllocation(t *testing.T) {
	out := &tapSink{watched: true}
	tp := newTap("mic.audio", out)
	hop := make([]int16, 160)
	allocs := testing.AllocsPerRun(1000, func() {
		tp.hop(false)
		tp.add(hop, time.Time{}, out)
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per hop of silence", allocs)
	}
}
