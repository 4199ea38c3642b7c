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

// verifiedNet is a model of two towers and a verifier of two more, one
// of them reaching further back than any tower.
func verifiedNet(seed uint64) *Net {
	n := towersNet(seed, 2)
	n.Verifier = []Tower{randomTower(seed+7000, 6, []int{1, 2, 4, 8, 16, 32}), randomTower(seed+8000, 5, []int{1, 2})}
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
	for _, n := range []*Net{randomNet(1), towersNet(1, 3), verifiedNet(1)} {
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
		if len(got.Verifier) != len(n.Verifier) {
			t.Fatalf("%d verifier towers, want %d", len(got.Verifier), len(n.Verifier))
		}
		assertWeights(t, got, n)
		// A model without a verifier is the format builds before
		// verifiers read.
		want := uint16(2)
		if len(n.Verifier) > 0 {
			want = 3
		}
		if v := binary.LittleEndian.Uint16(encode(t, n)[4:]); v != want {
			t.Fatalf("format version %d, want %d", v, want)
		}
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
	for _, n := range []*Net{randomNet(2), towersNet(2, 2), verifiedNet(2)} {
		corrupt(t, encode(t, n))
	}
	// A verifier in a version 2 file, or a version 3 file without one, is
	// a file this build did not write (checksum recomputed: only the
	// version is wrong).
	for _, n := range []*Net{randomNet(2), verifiedNet(2)} {
		b := encode(t, n)
		binary.LittleEndian.PutUint16(b[4:], 5-binary.LittleEndian.Uint16(b[4:]))
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		if _, err := ReadNet(bytes.NewReader(b)); !errors.Is(err, ErrBadModel) {
			t.Fatalf("%d verifier towers under the other version: err %v", len(n.Verifier), err)
		}
	}
	n0 := verifiedNet(3)
	n0.Verifier[1].Std[4] = 0
	if err := WriteNet(&bytes.Buffer{}, n0); err == nil {
		t.Fatal("WriteNet accepted a verifier with a zero deviation")
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
	for _, n := range []*Net{randomNet(5), towersNet(5, 3), verifiedNet(5)} {
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
	st := newNetState(verifiedNet(6))
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

// A verifier multiplies the towers' probability by its own: the logit is
// that of the product, never above the towers' alone, and far below it
// where the verifier says no.
func TestVerifierVetoes(t *testing.T) {
	n := verifiedNet(17)
	for i := range n.Verifier { // random weights say yes to everything
		n.Verifier[i].OutB -= 25
	}
	towers := newNetState(&Net{Towers: n.Towers})
	ver := newNetState(&Net{Towers: n.Verifier})
	st := newNetState(n)
	sig := make([]int16, 2*audio.Rate)
	audio.NewNoise("pink", -25, 5).Fill(sig)
	ext := newExtractor()
	var feat [Dims]float32
	sigm := func(z float32) float64 { return 1 / (1 + math.Exp(-float64(z))) }
	frames, vetoes := 0, 0
	for i := 0; i+HopSamples <= len(sig); i += HopSamples {
		ext.push(sig[i:i+HopSamples], feat[:])
		a, b, got := towers.step(ext.logMel), ver.step(ext.logMel), st.step(ext.logMel)
		if want := sigm(a) * sigm(b); math.Abs(sigm(got)-want) > 1e-6 || got > a {
			t.Fatalf("frame %d: towers %v, verifier %v, model %v (probability %v, want %v)", frames, a, b, got, sigm(got), want)
		}
		if sigm(b) < 0.5 && float64(a-got) > 0.5 {
			vetoes++
		}
		frames++
	}
	if frames < 150 || vetoes == 0 {
		t.Fatalf("%d frames, %d vetoes: the test would prove nothing", frames, vetoes)
	}
	// Where both say yes the product's logit is the smaller less log 2;
	// where one says no, that one's.
	for _, c := range [][3]float64{{40, 40, 40 - math.Ln2}, {-40, 40, -40}, {40, -40, -40}, {0, 0, math.Log(0.25 / 0.75)}, {200, 300, 200}} {
		if got := float64(bothLogit(float32(c[0]), float32(c[1]))); !(math.Abs(got-c[2]) < 1e-5*max(1, math.Abs(c[2]))) {
			t.Errorf("bothLogit(%v, %v) = %v, want %v", c[0], c[1], got, c[2])
		}
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
