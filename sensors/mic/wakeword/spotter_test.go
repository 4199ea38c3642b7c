package wakeword

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

const speechDir = "../testdata/speech"

func clip(t testing.TB, name string) []int16 {
	t.Helper()
	s, err := audio.ReadWAVFile(filepath.Join(speechDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testModel(t testing.TB) *Model {
	t.Helper()
	var takes [][]int16
	for _, n := range []string{"hey_robot_1", "hey_robot_2", "hey_robot_3"} {
		takes = append(takes, clip(t, "enroll/"+n+".wav"))
	}
	m, err := Enroll("hey_robot", takes)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type background struct {
	colour string
	snr    float64 // dB below the speech's RMS
}

var backgrounds = []background{{"white", 60}, {"pink", 20}, {"white", 10}, {"pink", 5}}

// scene places clips (at the given start times) over a background whose
// level is snr dB below the first clip's RMS; it returns the signal and
// where each clip ends.
func scene(total time.Duration, bg background, seed uint64, clips []([]int16), at []time.Duration) ([]int16, []time.Duration) {
	sig := make([]int16, int(total.Seconds()*audio.Rate))
	ends := make([]time.Duration, len(clips))
	for i, c := range clips {
		o := int(at[i].Seconds() * audio.Rate)
		copy(sig[o:], c)
		ends[i] = at[i] + time.Duration(len(c))*time.Second/audio.Rate
	}
	n := make([]int16, len(sig))
	audio.NewNoise(bg.colour, audio.DBFS(audio.RMS(clips[0]))-bg.snr, seed).Fill(n)
	for i := range sig {
		sig[i] = int16(max(-32768, min(32767, int32(sig[i])+int32(n[i]))))
	}
	return sig, ends
}

func spot(t testing.TB, m *Model, sig []int16, o Options) []Detection {
	t.Helper()
	sp, err := NewSpotter([]*Model{m}, o)
	if err != nil {
		t.Fatal(err)
	}
	// Feed in uneven chunks, as a live source would.
	var ds []Detection
	for i := 0; i < len(sig); {
		n := min(len(sig)-i, 37+(i/7)%500)
		ds = sp.Process(ds, sig[i:i+n], nil)
		i += n
	}
	return ds
}

func TestEnrolledVoiceDetectedInNoise(t *testing.T) {
	m := testModel(t)
	for _, name := range []string{"pos/enrolled_a.wav", "pos/enrolled_b.wav"} {
		for i, bg := range backgrounds {
			sig, ends := scene(6*time.Second, bg, uint64(i+1), [][]int16{clip(t, name)}, []time.Duration{3 * time.Second})
			ds := spot(t, m, sig, Options{})
			if len(ds) != 1 {
				t.Errorf("%s in %s noise at %v dB: %d detections %+v, want 1", name, bg.colour, bg.snr, len(ds), ds)
				continue
			}
			d := ds[0]
			if d.Name != "hey_robot" || d.Score < DefaultThreshold || d.Score > 1 {
				t.Errorf("%s: detection %+v", name, d)
			}
			// It fires at the end of the phrase: not before its middle, and
			// promptly after it.
			if d.At < ends[0]-300*time.Millisecond || d.At > ends[0]+200*time.Millisecond {
				t.Errorf("%s %s %v dB: decided at %v, phrase ends at %v", name, bg.colour, bg.snr, d.At, ends[0])
			}
			if d.Start < 2800*time.Millisecond || d.Start > 3200*time.Millisecond {
				t.Errorf("%s: match starts at %v, phrase at 3s", name, d.Start)
			}
		}
	}
}

func TestOtherSpeechAndNoiseNotDetected(t *testing.T) {
	m := testModel(t)
	negs, _ := filepath.Glob(filepath.Join(speechDir, "neg", "*.wav"))
	if len(negs) < 5 {
		t.Fatalf("only %d negative clips in %s", len(negs), speechDir)
	}
	for i, bg := range backgrounds {
		// All negatives one after another, 1.5 s apart, after 3 s of
		// background.
		var cs [][]int16
		var at []time.Duration
		tm := 3 * time.Second
		for _, f := range negs {
			c := clip(t, filepath.Join("neg", filepath.Base(f)))
			cs = append(cs, c)
			at = append(at, tm)
			tm += time.Duration(len(c))*time.Second/audio.Rate + 1500*time.Millisecond
		}
		sig, _ := scene(tm+time.Second, bg, uint64(10+i), cs, at)
		if ds := spot(t, m, sig, Options{}); len(ds) != 0 {
			t.Errorf("%s noise at %v dB: false detections %+v", bg.colour, bg.snr, ds)
		}
	}
	// Noise alone, changing level half-way (the bank is rebuilt).
	a, b := make([]int16, 10*audio.Rate), make([]int16, 10*audio.Rate)
	audio.NewNoise("pink", -50, 1).Fill(a)
	audio.NewNoise("white", -30, 2).Fill(b)
	if ds := spot(t, m, append(a, b...), Options{}); len(ds) != 0 {
		t.Errorf("noise alone: false detections %+v", ds)
	}
}

func TestThresholdAndRefractory(t *testing.T) {
	m := testModel(t)
	p := clip(t, "pos/enrolled_a.wav")
	bg := background{"pink", 20}
	// Twice in quick succession (an echo, or a repeat): one detection.
	sig, _ := scene(7*time.Second, bg, 3, [][]int16{p, p}, []time.Duration{3 * time.Second, 3*time.Second + 900*time.Millisecond})
	if ds := spot(t, m, sig, Options{}); len(ds) != 1 {
		t.Errorf("repeat within the refractory period: %d detections", len(ds))
	}
	// With a short refractory period, both.
	if ds := spot(t, m, sig, Options{Refractory: 200 * time.Millisecond}); len(ds) != 2 {
		t.Errorf("repeat after a 200 ms refractory period: %d detections, want 2", len(ds))
	}
	// Far apart: both.
	sig, _ = scene(10*time.Second, bg, 4, [][]int16{p, p}, []time.Duration{3 * time.Second, 6 * time.Second})
	if ds := spot(t, m, sig, Options{}); len(ds) != 2 {
		t.Errorf("two utterances 3 s apart: %d detections, want 2", len(ds))
	}
	// A threshold above every score: nothing. The threshold is honoured.
	if ds := spot(t, m, sig, Options{Threshold: 0.99999}); len(ds) > 0 && ds[0].Score < 0.99999 {
		t.Errorf("detection with score %v below threshold", ds[0].Score)
	}
	if _, err := NewSpotter([]*Model{m}, Options{Threshold: 1.5}); err == nil {
		t.Error("threshold 1.5 accepted")
	}
}

func TestSpotterWithoutModelsIsAVAD(t *testing.T) {
	sp, err := NewSpotter(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := scene(5*time.Second, background{"white", 30}, 1, [][]int16{clip(t, "pos/enrolled_a.wav")}, []time.Duration{2 * time.Second})
	speech := 0
	ds := sp.Process(nil, sig, func(s bool) {
		if s {
			speech++
		}
	})
	if len(ds) != 0 || speech < 50 || speech > 120 {
		t.Fatalf("%d detections, %d speech hops (phrase is ~70 hops)", len(ds), speech)
	}
	if sp.Elapsed() != 5*time.Second {
		t.Fatalf("elapsed %v", sp.Elapsed())
	}
}

func TestEnrollChecksTakes(t *testing.T) {
	takes := [][]int16{clip(t, "enroll/hey_robot_1.wav"), clip(t, "enroll/hey_robot_2.wav"), clip(t, "enroll/hey_robot_3.wav")}
	if _, err := Enroll("hey_robot", takes[:2]); err == nil {
		t.Error("two takes accepted")
	}
	if _, err := Enroll("Hey Robot!", takes); err == nil {
		t.Error("bad name accepted")
	}
	// A different phrase in place of one take.
	odd := [][]int16{takes[0], takes[1], clip(t, "neg/open_the_garage_door.wav")}
	if _, err := Enroll("hey_robot", odd); err == nil {
		t.Error("a take of another phrase accepted")
	}
	// Silence, and a click.
	if _, err := Enroll("hey_robot", [][]int16{takes[0], takes[1], make([]int16, audio.Rate)}); err == nil {
		t.Error("a silent take accepted")
	}
	click := make([]int16, audio.Rate)
	for i := 8000; i < 8200; i++ {
		click[i] = 20000
	}
	if _, err := Trim(click); err == nil {
		t.Error("a 12 ms click accepted as a phrase")
	}
	// Trimming: a take padded with a second of quiet room either side comes
	// back at about its own length.
	room := make([]int16, audio.Rate)
	audio.NewNoise("pink", -60, 9).Fill(room)
	padded := append(append(append([]int16{}, room...), takes[0]...), room...)
	tr, err := Trim(padded)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(float64(len(tr)-len(takes[0]))) / audio.Rate; d > 0.15 {
		t.Errorf("trimmed to %.2f s, take is %.2f s", seconds(tr), seconds(takes[0]))
	}
}

func TestSaveLoad(t *testing.T) {
	m := testModel(t)
	dir := t.TempDir()
	if err := m.Save(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir, "hey_robot")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Takes) != len(m.Takes) {
		t.Fatalf("loaded %d takes", len(got.Takes))
	}
	for i := range m.Takes {
		if len(got.Takes[i]) != len(m.Takes[i]) || got.Takes[i][100] != m.Takes[i][100] {
			t.Fatalf("take %d differs after save/load", i)
		}
	}
	all, err := LoadAll(dir)
	if err != nil || len(all) != 1 || all[0].Name != "hey_robot" {
		t.Fatalf("LoadAll: %v, %v", all, err)
	}
	if _, err := Load(dir, "nope"); err == nil {
		t.Fatal("loading a missing wake word succeeded")
	}
	if _, err := LoadAll(t.TempDir()); err == nil {
		t.Fatal("LoadAll of an empty dir succeeded")
	}
	// A re-enrolment with more takes, then fewer, leaves no stale takes.
	m.Takes = append(m.Takes, m.Takes[0])
	if err := m.Save(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	m.Takes = m.Takes[:3]
	if err := m.Save(dir, time.Now()); err != nil {
		t.Fatal(err)
	}
	if fs, _ := filepath.Glob(filepath.Join(dir, "hey_robot", "take_*.wav")); len(fs) != 3 {
		t.Fatalf("%d take files after re-enrolment, want 3", len(fs))
	}
	if _, err := os.Stat(filepath.Join(dir, "hey_robot", manifestFile)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSpotterRealtimeFactor measures the detector's CPU time per
// second of audio on one goroutine, in the worst case for it: speech
// almost all the time (the VAD gate is open and every matcher runs), in
// noise (the bank has all its variants). Report: rtf (target ≤ 0.05).
func BenchmarkSpotterRealtimeFactor(b *testing.B) {
	benchRTF(b, []*Model{testModel(b)}, nil)
}

// BenchmarkHeadRealtimeFactor is the same for the shipped head over the
// speech frontend alone, and BenchmarkBothRealtimeFactor for the head
// personalised by templates.
func BenchmarkHeadRealtimeFactor(b *testing.B) {
	benchRTF(b, nil, []*Head{shippedHead(b)})
}

func BenchmarkBothRealtimeFactor(b *testing.B) {
	benchRTF(b, []*Model{testModel(b)}, []*Head{shippedHead(b)})
}

func shippedHead(tb testing.TB) *Head {
	h, err := Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func benchRTF(b *testing.B, models []*Model, heads []*Head) {
	var cs [][]int16
	var at []time.Duration
	tm := 3 * time.Second
	names := []string{"pos/enrolled_a.wav", "neg/turn_on_the_headlight.wav", "neg/what_time_is_it.wav", "pos/unseen_gb_f2.wav", "neg/hey_robin.wav", "neg/open_the_garage_door.wav"}
	for tm < 58*time.Second {
		for _, n := range names {
			c := clip(b, n)
			cs = append(cs, c)
			at = append(at, tm)
			tm += time.Duration(len(c))*time.Second/audio.Rate + 150*time.Millisecond
		}
	}
	sig, _ := scene(tm+time.Second, background{"pink", 10}, 1, cs, at)
	secs := float64(len(sig)) / audio.Rate
	o := Options{Heads: heads}
	if len(heads) > 0 {
		fe, err := NewSpeechFrontend()
		if err != nil {
			b.Fatal(err)
		}
		o.Frontend = fe
	}
	sp, err := NewSpotter(models, o)
	if err != nil {
		b.Fatal(err)
	}
	// Warm up: the bank is built from the opening background.
	sp.Process(nil, sig[:3*audio.Rate], nil)
	var ds []Detection
	b.ResetTimer()
	for b.Loop() {
		ds = sp.Process(ds[:0], sig, nil)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/secs, "rtf")
	b.ReportMetric(secs, "audio-s/op")
}

// BenchmarkHeadSilence is the shipped head's cost in a quiet room (pink
// noise at -60 dBFS) as the mic runs it: the VAD keeps the frontend shut,
// so this is the VAD and the pre-roll ring.
func BenchmarkHeadSilence(b *testing.B) {
	fe, err := NewSpeechFrontend()
	if err != nil {
		b.Fatal(err)
	}
	x := make([]int16, 10*audio.Rate)
	audio.NewNoise("pink", -60, 3).Fill(x)
	sp, err := NewSpotter(nil, Options{Heads: []*Head{shippedHead(b)}, Frontend: fe})
	if err != nil {
		b.Fatal(err)
	}
	var ds []Detection
	b.ResetTimer()
	for b.Loop() {
		ds = sp.Process(ds[:0], x, nil)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/10, "rtf")
}
