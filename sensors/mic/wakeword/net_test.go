package wakeword

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// randomNet makes a one-tower model of the shipped shape with random
// weights: enough to test the file format and streaming, which must not
// depend on what the weights are.
func randomNet(seed uint64) *Net {
	return &Net{Name: "test_word", Phrase: "test word", Offset: 0.25, Smooth: 7, Training: `{"seed":1}`,
		Towers: []Tower{randomTower(seed, 8, []int{1, 2, 4, 8})}}
}

// towersNet is a model of k towers of different shapes.
func towersNet(seed uint64, k int) *Net {
	n := randomNet(seed)
	for i := 1; i < k; i++ {
		n.Towers = append(n.Towers, randomTower(seed+uint64(i)*1000, 4+2*i, []int{1, 2, 4, 8, 16}[:2+i%4]))
	}
	return n
}

func randomTower(seed uint64, width int, dilations []int) Tower {
	r := rand.New(rand.NewPCG(seed, 1))
	// A log-mel floor within the range of the tests' signals, so
	// streaming and the file format are tested with it.
	t := Tower{LogFloor: -12}
	for i := 0; i < Mels; i++ {
		t.Mean = append(t.Mean, float32(-8+r.NormFloat64()))
		t.Std = append(t.Std, float32(1+r.Float64()))
	}
	in := Mels
	for i, d := range dilations {
		c := Conv{In: in, Out: width, Kernel: 3, Dilation: d}
		if i == 0 {
			c.Kernel = 2
		}
		for range c.Kernel * c.Out * c.In {
			c.W = append(c.W, float32(r.NormFloat64()/math.Sqrt(float64(c.Kernel*c.In))))
		}
		for range c.Out {
			c.B = append(c.B, float32(r.NormFloat64()*0.1))
		}
		t.Layers = append(t.Layers, c)
		in = c.Out
	}
	for range in {
		t.OutW = append(t.OutW, float32(r.NormFloat64()))
	}
	t.OutB = -0.5
	return t
}

func encode(t *testing.T, n *Net) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteNet(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestNetFileRoundTrip(t *testing.T) {
	for _, n := range []*Net{randomNet(1), towersNet(1, 3)} {
		n.Towers[len(n.Towers)-1].LogFloor = -13
		got, err := ReadNet(bytes.NewReader(encode(t, n)))
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != n.Name || got.Phrase != n.Phrase || got.Offset != n.Offset || got.Training != n.Training ||
			got.Smooth != n.Smooth || got.SmoothHops() != 7 || len(got.Towers) != len(n.Towers) ||
			got.Params() != n.Params() || got.ReceptiveField() != n.ReceptiveField() {
			t.Fatalf("header changed: %+v", got)
		}
		for i := range n.Towers {
			if got.Towers[i].LogFloor != n.Towers[i].LogFloor || len(got.Towers[i].Layers) != len(n.Towers[i].Layers) {
				t.Fatalf("tower %d changed", i)
			}
		}
		assertWeights(t, got, n)
	}
}

func assertWeights(t *testing.T, got, want *Net) {
	t.Helper()
	for i, w := range want.weights() {
		g := got.weights()[i]
		for j := range w {
			if w[j] != g[j] {
				t.Fatalf("weight block %d[%d]: %v != %v", i, j, g[j], w[j])
			}
		}
	}
}

// Files of the first format (one tower, its shapes in the header's top
// level) still load: models trained before towers existed keep working.
func TestNetFileVersion1(t *testing.T) {
	n := randomNet(12)
	tw := n.Towers[0]
	h := map[string]any{"name": n.Name, "phrase": n.Phrase, "mels": Mels, "offset": n.Offset,
		"smooth_hops": n.Smooth, "log_floor": tw.LogFloor, "created": time.Time{}, "training": json.RawMessage(n.Training)}
	var layers []layerHeader
	for _, l := range tw.Layers {
		layers = append(layers, layerHeader{l.In, l.Out, l.Kernel, l.Dilation})
	}
	h["layers"] = layers
	file := func(version uint16, h map[string]any) []byte {
		hb, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.WriteString(netMagic)
		binary.Write(&b, binary.LittleEndian, version)
		binary.Write(&b, binary.LittleEndian, uint32(len(hb)))
		b.Write(hb)
		for _, w := range n.weights() {
			binary.Write(&b, binary.LittleEndian, w)
		}
		binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(b.Bytes()))
		return b.Bytes()
	}
	got, err := ReadNet(bytes.NewReader(file(1, h)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Towers) != 1 || got.Towers[0].LogFloor != tw.LogFloor || got.Smooth != n.Smooth || got.Offset != n.Offset {
		t.Fatalf("read %+v", got)
	}
	assertWeights(t, got, n)
	// The same header labelled version 2 mixes the formats: refused.
	if _, err := ReadNet(bytes.NewReader(file(2, h))); !errors.Is(err, ErrBadModel) {
		t.Fatalf("a version 2 file with version 1 fields: err %v", err)
	}
	if _, err := ReadNet(bytes.NewReader(file(3, h))); !errors.Is(err, ErrBadModel) {
		t.Fatalf("version 3: err %v", err)
	}
}

// Every truncation, every padding and every single-byte corruption is a
// clear error wrapping ErrBadModel, never a panic and never a model.
func TestNetFileCorruptOrTruncated(t *testing.T) {
	for _, n := range []*Net{randomNet(2), towersNet(2, 2)} {
		corrupt(t, encode(t, n))
	}
	// A well-formed file with a NaN weight (checksum recomputed) is
	// refused too: it would run, and score NaN forever.
	n := towersNet(3, 2)
	n.Towers[1].Layers[1].W[5] = float32(math.NaN())
	if err := WriteNet(&bytes.Buffer{}, n); err == nil {
		t.Fatal("WriteNet accepted a NaN weight")
	}
	n = randomNet(3)
	n.Smooth = maxSmooth + 1 // more than the picker can average
	if err := WriteNet(&bytes.Buffer{}, n); err == nil {
		t.Fatal("WriteNet accepted an impossible smoothing")
	}
	n = randomNet(3)
	n.Towers[0].LogFloor = float32(math.Inf(-1))
	if err := WriteNet(&bytes.Buffer{}, n); err == nil {
		t.Fatal("WriteNet accepted an infinite floor")
	}
	if err := WriteNet(&bytes.Buffer{}, towersNet(3, MaxTowers+1)); err == nil {
		t.Fatal("WriteNet accepted too many towers")
	}
	if err := WriteNet(&bytes.Buffer{}, &Net{Name: "x"}); err == nil {
		t.Fatal("WriteNet accepted a model without towers")
	}
}

func corrupt(t *testing.T, b []byte) {
	t.Helper()
	for k := 0; k < len(b); k++ {
		if _, err := ReadNet(bytes.NewReader(b[:k])); !errors.Is(err, ErrBadModel) {
			t.Fatalf("truncated to %d of %d bytes: err %v", k, len(b), err)
		}
	}
	if _, err := ReadNet(bytes.NewReader(append(append([]byte(nil), b...), 0))); !errors.Is(err, ErrBadModel) {
		t.Fatalf("padded: err %v", err)
	}
	for k := 0; k < len(b); k++ {
		c := append([]byte(nil), b...)
		c[k] ^= 0x5a
		if _, err := ReadNet(bytes.NewReader(c)); !errors.Is(err, ErrBadModel) {
			t.Fatalf("byte %d flipped: err %v", k, err)
		}
	}
}

func TestLoadNetErrorsNameTheFile(t *testing.T) {
	p := t.TempDir() + "/bad.eaww"
	if err := SaveNet(p, randomNet(4)); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadNet(p); err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, []byte("RIFF not a model"))
	_, err := LoadNet(p)
	if !errors.Is(err, ErrBadModel) || !bytes.Contains([]byte(err.Error()), []byte(p)) {
		t.Fatalf("err %v", err)
	}
}

// Streaming equivalence: the scores per hop are the same whether the
// audio arrives in one piece or in chunks of any size.
func TestNetScoresIndependentOfChunking(t *testing.T) {
	for _, n := range []*Net{randomNet(5), towersNet(5, 3)} {
		scoresIndependentOfChunking(t, n)
	}
}

func scoresIndependentOfChunking(t *testing.T, n *Net) {
	t.Helper()
	sig := make([]int16, audio.Rate*3)
	audio.NewNoise("pink", -30, 7).Fill(sig)
	for i := audio.Rate; i < 2*audio.Rate; i++ { // a tone burst, so the scores move
		sig[i] += int16(8000 * math.Sin(2*math.Pi*440*float64(i)/audio.Rate))
	}
	trace := func(chunk func() int) []float64 {
		sp, err := NewSpotter(nil, Options{Nets: []*Net{n}})
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		rest := sig
		for len(rest) > 0 {
			k := min(len(rest), chunk())
			sp.Process(nil, rest[:k], func(bool) { out = append(out, sp.NetScore(0)) })
			rest = rest[k:]
		}
		return out
	}
	whole := trace(func() int { return len(sig) })
	if len(whole) != len(sig)/HopSamples {
		t.Fatalf("%d scores for %d hops", len(whole), len(sig)/HopSamples)
	}
	lo, hi := 1.0, 0.0
	for _, v := range whole {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi-lo < 0.01 {
		t.Fatalf("scores do not move (%.3f..%.3f): the test would prove nothing", lo, hi)
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, c := range []func() int{func() int { return 1 }, func() int { return 159 }, func() int { return 161 },
		func() int { return 1 + r.IntN(2000) }} {
		got := trace(c)
		if len(got) != len(whole) {
			t.Fatalf("%d scores, want %d", len(got), len(whole))
		}
		for i := range got {
			if got[i] != whole[i] {
				t.Fatalf("hop %d: %v streamed in chunks, %v in one pass", i, got[i], whole[i])
			}
		}
	}
}

func TestNetStepDoesNotAllocate(t *testing.T) {
	st := newNetState(towersNet(6, 2))
	mel := make([]float64, Mels)
	if a := testing.AllocsPerRun(100, func() { st.step(mel) }); a != 0 {
		t.Fatalf("%v allocations per frame", a)
	}
}

// A model of several towers scores the mean of its towers' logits, each
// tower running as it would alone.
func TestTowersAverageLogits(t *testing.T) {
	n := towersNet(13, 3)
	alone := make([]*netState, len(n.Towers))
	for i := range n.Towers {
		alone[i] = newNetState(&Net{Towers: n.Towers[i : i+1]})
	}
	st := newNetState(n)
	sig := make([]int16, audio.Rate)
	audio.NewNoise("pink", -25, 4).Fill(sig)
	ext := newExtractor()
	var feat [Dims]float32
	frames, spread := 0, 0.0
	for i := 0; i+HopSamples <= len(sig); i += HopSamples {
		ext.push(sig[i:i+HopSamples], feat[:])
		var sum float32
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, a := range alone {
			l := a.step(ext.logMel)
			sum += l
			lo, hi = min(lo, float64(l)), max(hi, float64(l))
		}
		spread = max(spread, hi-lo)
		if got, want := st.step(ext.logMel), sum/float32(len(alone)); got != want {
			t.Fatalf("frame %d: logit %v, the towers' mean %v", frames, got, want)
		}
		frames++
	}
	if frames < 50 || spread < 0.1 {
		t.Fatalf("%d frames, towers' logits at most %.3f apart: the test would prove nothing", frames, spread)
	}
}

func TestPickerOneDetectionPerPeak(t *testing.T) {
	p := NewPicker(0.5, 100)
	p.Smooth = 1
	scores := []float64{0.1, 0.6, 0.9, 0.7, 0.6, 0.6, 0.6, 0.6, 0.9, 0.2}
	var fired []int64
	for h, s := range scores {
		if ok, peak, at := p.Step(int64(h), s); ok {
			if peak != 0.9 || at != 2 {
				t.Fatalf("peak %v at %d", peak, at)
			}
			fired = append(fired, int64(h))
		}
	}
	if len(fired) != 1 || fired[0] != 2+settleHops {
		t.Fatalf("fired at %v", fired)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkNetMemory reports the heap a running trained model costs: the
// parsed weights and one stream's state (the embedded file adds its own
// size, net-bytes, to the binary's read-only data).
func BenchmarkNetMemory(b *testing.B) {
	var before, after runtime.MemStats
	var keep []*Spotter
	for b.Loop() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := ReadNet(bytes.NewReader(builtinModel))
		if err != nil {
			b.Fatal(err)
		}
		sp, err := NewSpotter(nil, Options{Nets: []*Net{n}})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		keep = append(keep[:0], sp)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc), "heap-bytes")
	b.ReportMetric(float64(len(builtinModel)), "net-bytes")
	runtime.KeepAlive(keep)
}

// Smoothing: a one-hop spike does not fire; a score held up does.
func TestPickerSmoothing(t *testing.T) {
	p := NewPicker(0.5, 100)
	fired := 0
	for h, s := range []float64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0} {
		if ok, _, _ := p.Step(int64(h), s); ok {
			fired++
		}
	}
	if fired != 0 {
		t.Fatal("a one-hop spike fired")
	}
	for h := int64(20); h < 40; h++ {
		if ok, peak, _ := p.Step(h, 0.9); ok {
			if peak < 0.5 || peak > 0.9 {
				t.Fatalf("peak %v", peak)
			}
			return
		}
	}
	t.Fatal("a held score never fired")
}
