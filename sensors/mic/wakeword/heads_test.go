package wakeword_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword/wakewordtest"
)

// toneHead is a hand-set head over wakewordtest's frontend that answers a
// 1 kHz tone in the window's newest embedding: hidden unit = power at
// 1 kHz (band 6) over its eight frames, output = 8·(hidden − 2.3).
func toneHead(t testing.TB) *wakeword.Head {
	in := wakeword.WindowLen * wakeword.EmbedDim
	w1 := make([]float32, in)
	for f := range 8 {
		w1[(wakeword.WindowLen-1)*wakeword.EmbedDim+f*12+6] = 1.0 / 8
	}
	h, err := wakeword.NewHead(wakeword.HeadInfo{Name: "tone", Phrase: "tone", Frontend: "wakewordtest", Threshold: 0.5},
		[]wakeword.Layer{{In: in, Out: 1, W: w1, B: []float32{2}}, {In: 1, Out: 1, W: []float32{8}, B: []float32{-2.3 * 8}}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// scene is pink noise at -60 dBFS with a 1 kHz tone (-12 dBFS) from at for
// dur.
func scene(total, at, dur time.Duration) []int16 {
	x := make([]int16, int(total.Seconds()*audio.Rate))
	audio.NewNoise("pink", -60, 1).Fill(x)
	addTone(x, at, dur)
	return x
}

func addTone(x []int16, at, dur time.Duration) {
	a, n := int(at.Seconds()*audio.Rate), int(dur.Seconds()*audio.Rate)
	for i := a; i < a+n && i < len(x); i++ {
		x[i] += int16(8000 * math.Sin(2*math.Pi*1000*float64(i)/audio.Rate))
	}
}

// busy is 10 s of sound for benchmarks: tone bursts of 700 ms every
// second, whose gaps are shorter than the gate's close, so the frontend
// runs throughout, as during talk.
func busy() []int16 {
	x := scene(10*time.Second, 0, 0)
	for s := range 10 {
		addTone(x, time.Duration(s)*time.Second, 700*time.Millisecond)
	}
	return x
}

// countingFrontend counts the samples the detector hands the frontend.
type countingFrontend struct {
	wakewordtest.Frontend
	samples int
}

func (c *countingFrontend) Push(dst []wakeword.Embedding, x []int16) []wakeword.Embedding {
	c.samples += len(x)
	return c.Frontend.Push(dst, x)
}

func TestHeadsDetectOnceAndSoon(t *testing.T) {
	fe := &countingFrontend{}
	d := wakeword.NewHeads([]*wakeword.Head{toneHead(t)}, fe, wakeword.HeadOptions{})
	x := scene(8*time.Second, 4*time.Second, 250*time.Millisecond)
	var dets []wakeword.Detection
	for i := 0; i < len(x); i += 517 { // blocks that do not align with hops
		dets = d.Process(dets, x[i:min(len(x), i+517)], nil)
	}
	if len(dets) != 1 {
		t.Fatalf("%d detections, want 1: %+v", len(dets), dets)
	}
	end := 4250 * time.Millisecond
	if lat := dets[0].At - end; lat < -250*time.Millisecond || lat > 300*time.Millisecond {
		t.Errorf("detected %v after the tone ended, want during it or within 300ms", lat)
	}
	if dets[0].Name != "tone" || dets[0].Score < 0.5 {
		t.Errorf("detection %+v", dets[0])
	}
	// The frontend ran only around the sound: the pre-roll, the tone and
	// the gate's close, not the 7.4 s of quiet.
	if ran := time.Duration(fe.samples) * time.Second / audio.Rate; ran > 3500*time.Millisecond {
		t.Errorf("frontend heard %v of 8s", ran)
	}
}

// The pre-roll lets a window that reaches back before the VAD's onset see
// real audio: a tone preceded by quiet is detected at once, not a window
// later, whatever the block size.
func TestHeadsStreamingEqualsOneBlock(t *testing.T) {
	x := scene(6*time.Second, 3*time.Second, 500*time.Millisecond)
	run := func(block int) []wakeword.Detection {
		d := wakeword.NewHeads([]*wakeword.Head{toneHead(t)}, &wakewordtest.Frontend{}, wakeword.HeadOptions{})
		var dets []wakeword.Detection
		for i := 0; i < len(x); i += block {
			dets = d.Process(dets, x[i:min(len(x), i+block)], nil)
		}
		return dets
	}
	a, b := run(len(x)), run(160)
	if len(a) != 1 || len(b) != 1 || a[0].At != b[0].At || a[0].Score != b[0].Score {
		t.Fatalf("one block %+v, hops %+v", a, b)
	}
}

func TestHeadsSilenceNeverRunsTheFrontend(t *testing.T) {
	fe := &countingFrontend{}
	d := wakeword.NewHeads([]*wakeword.Head{toneHead(t)}, fe, wakeword.HeadOptions{})
	x := make([]int16, 10*audio.Rate)
	audio.NewNoise("pink", -60, 2).Fill(x)
	if dets := d.Process(nil, x, nil); len(dets) != 0 || fe.samples != 0 {
		t.Fatalf("%d detections, frontend ran on %d samples", len(dets), fe.samples)
	}
}

func TestHeadFileRoundTrip(t *testing.T) {
	h := toneHead(t)
	h.Info.Training = `{"seed":1}`
	var b bytes.Buffer
	if err := wakeword.WriteHead(&b, h); err != nil {
		t.Fatal(err)
	}
	g, err := wakeword.ReadHead(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if g.Info != h.Info {
		t.Errorf("info %+v, want %+v", g.Info, h.Info)
	}
	x := make([]float32, wakeword.WindowLen*wakeword.EmbedDim)
	for i := range x {
		x[i] = float32(i%7) / 3
	}
	if g.Score(x) != h.Score(x) {
		t.Error("scores differ after a round trip")
	}
}

func TestHeadFileRefusesDamage(t *testing.T) {
	h := toneHead(t)
	h.Info.Name = "SECRET"
	var b bytes.Buffer
	if err := wakeword.WriteHead(&b, h); err != nil {
		t.Fatal(err)
	}
	good := b.Bytes()
	flip := func(i int) []byte {
		c := bytes.Clone(good)
		c[i] ^= 0x40
		return c
	}
	for name, data := range map[string][]byte{
		"empty":       nil,
		"other magic": append([]byte("EAWW"), good[4:]...),
		"version":     flip(4),
		"cut short":   good[:len(good)-9],
		"padded":      append(bytes.Clone(good), 0, 0, 0, 0),
		"weight":      flip(len(good) - 40),
		"header":      flip(20),
		"checksum":    flip(len(good) - 1),
	} {
		_, err := wakeword.ReadHead(bytes.NewReader(data))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "tone") {
			t.Errorf("%s: error echoes the file: %v", name, err)
		}
		if !errors.Is(err, wakeword.ErrBadModel) {
			t.Errorf("%s: %v, want ErrBadModel", name, err)
		}
	}
}

func TestNewHeadChecksShapes(t *testing.T) {
	in := wakeword.WindowLen * wakeword.EmbedDim
	info := wakeword.HeadInfo{Name: "x", Threshold: 0.5}
	for name, ls := range map[string][]wakeword.Layer{
		"none":        nil,
		"wrong input": {{In: 10, Out: 1, W: make([]float32, 10), B: make([]float32, 1)}},
		"two outputs": {{In: in, Out: 2, W: make([]float32, 2*in), B: make([]float32, 2)}},
		"short W":     {{In: in, Out: 1, W: make([]float32, in-1), B: make([]float32, 1)}},
		"NaN":         {{In: in, Out: 1, W: append(make([]float32, in-1), float32(math.NaN())), B: make([]float32, 1)}},
	} {
		if _, err := wakeword.NewHead(info, ls); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := wakeword.NewHead(wakeword.HeadInfo{Threshold: 1}, []wakeword.Layer{{In: in, Out: 1, W: make([]float32, in), B: make([]float32, 1)}}); err == nil {
		t.Error("threshold 1 accepted")
	}
}

// BenchmarkHeadsSilence is the detector's cost in a quiet room: the VAD
// and the pre-roll ring. BenchmarkHeadsSound is the cost with the gate
// open, the frontend (here wakewordtest's) and one head per embedding.
func BenchmarkHeadsSilence(b *testing.B) { benchHeads(b, false) }
func BenchmarkHeadsSound(b *testing.B)   { benchHeads(b, true) }

func benchHeads(b *testing.B, sound bool) {
	x := make([]int16, 10*audio.Rate)
	audio.NewNoise("pink", -60, 3).Fill(x)
	fe := &countingFrontend{}
	if sound {
		x = busy()
	}
	d := wakeword.NewHeads([]*wakeword.Head{toneHead(b)}, fe, wakeword.HeadOptions{})
	var dets []wakeword.Detection
	b.SetBytes(int64(2 * len(x)))
	b.ResetTimer()
	for range b.N {
		dets = d.Process(dets[:0], x, nil)
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/10e9, "rtf")
	b.ReportMetric(float64(fe.samples)/float64(b.N*len(x)), "open")
}

// Without heads the detector is the VAD alone: no frontend, no
// detections, and the speech timeline hop by hop.
func TestHeadsWithoutHeadsIsAVAD(t *testing.T) {
	d := wakeword.NewHeads(nil, nil, wakeword.HeadOptions{})
	x := scene(5*time.Second, 2*time.Second, 700*time.Millisecond)
	var hops, speech int
	var dets []wakeword.Detection
	for i := 0; i < len(x); i += 517 {
		dets = d.Process(dets, x[i:min(len(x), i+517)], func(s bool) {
			hops++
			if s {
				speech++
			}
		})
	}
	// 700 ms of tone, and the VAD's hangover after it.
	if len(dets) != 0 || hops != len(x)/wakeword.HopSamples || speech < 60 || speech > 120 {
		t.Fatalf("%d detections, %d hops, %d of speech", len(dets), hops, speech)
	}
	if f := d.NoiseFloorDBFS(); f > -50 || f < -80 {
		t.Fatalf("noise floor %.1f dBFS in -60 dBFS of pink noise", f)
	}
}
