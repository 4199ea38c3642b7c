package wwtrain

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// ctc's probability is the sum over every frame labelling that collapses
// (repeats merged, blanks dropped) to the target, counted by brute force.
func TestCTCMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const K, T = 3, 5
	prob := make([]float64, T*K)
	for f := range T {
		var sum float64
		for k := range K {
			prob[f*K+k] = 0.05 + r.Float64()
			sum += prob[f*K+k]
		}
		for k := range K {
			prob[f*K+k] /= sum
		}
	}
	for _, target := range [][]uint8{{1}, {1, 2}, {1, 1}, {2, 1, 2}, {1, 1, 1}} {
		var want float64
		path := make([]uint8, T)
		for code := range int(math.Pow(K, T)) {
			p, c := 1.0, code
			for f := range T {
				path[f] = uint8(c % K)
				c /= K
				p *= prob[f*K+int(path[f])]
			}
			if slices.Equal(collapse(path), target) {
				want += p
			}
		}
		ext := make([]uint8, 2*len(target)+1)
		for i, id := range target {
			ext[2*i+1] = id
		}
		S := len(ext)
		got := ctc(prob, K, T, ext, make([]float64, T*S), make([]float64, T*S))
		if want == 0 {
			if !math.IsInf(got, -1) {
				t.Fatalf("%v: log p %v for an impossible target", target, got)
			}
			continue
		}
		if math.Abs(got-math.Log(want)) > 1e-9 {
			t.Fatalf("%v: log p %v, enumeration %v", target, got, math.Log(want))
		}
	}
}

func collapse(path []uint8) []uint8 {
	var out []uint8
	for i, k := range path {
		if k != 0 && (i == 0 || path[i-1] != k) {
			out = append(out, k)
		}
	}
	return out
}

// The phone head's gradient, through the whole network, agrees with
// finite differences of the detector's frame loss plus the CTC loss.
func TestPhoneHeadGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	net := newTCN(4, 3, []int{1, 2}, r)
	net.addHead(4, r)
	const frames = 14
	x := jitter(r, net, frames)
	tg := phoneTarget{from: 3, to: 13, ids: []uint8{1, 3, 3, 2}}
	const scale = 0.7
	lossOf := func() float64 {
		w := net.newWork(frames)
		net.forward(w, x, frames)
		_, l := net.phoneLoss(w, net.view(make([]float32, len(net.params))), tg, scale, frames)
		var sum float64
		for _, z := range w.logit {
			sum += wakeword.Softplus(float64(z))
		}
		return sum + scale*l
	}
	w := net.newWork(frames)
	net.forward(w, x, frames)
	g := make([]float32, len(net.params))
	gv := net.view(g)
	dtop, _ := net.phoneLoss(w, gv, tg, scale, frames)
	if dtop == nil {
		t.Fatal("the target cannot be spelt")
	}
	dl := make([]float32, frames)
	for f, z := range w.logit {
		dl[f] = float32(1 / (1 + math.Exp(-float64(z))))
	}
	net.backward(w, gv, x, dl, dtop, frames)
	head := len(net.params) - len(net.phW) - len(net.phB)
	if checked, inHead := checkGradient(t, net, g, 5, 1e-3, head, lossOf); checked < 40 || inHead < 3 {
		t.Fatalf("only %d parameters checked, %d of the head", checked, inHead)
	}
}

// Only an utterance that lies whole in its clip, with frames enough to
// spell it, gets a phone target.
func TestWholeUtterance(t *testing.T) {
	ids := []uint8{1, 2, 2, 3}
	hop := wakeword.HopSamples
	tg, ok := wholeUtterance(50*hop+7, 120*hop+3, ids)
	if !ok || tg.from != 50-phoneLead || tg.to != 121+phoneTrail || !slices.Equal(tg.ids, ids) {
		t.Fatalf("whole utterance: %+v %v", tg, ok)
	}
	if tg, ok := wholeUtterance(180*hop, 199*hop, ids); !ok || tg.to != clipHops {
		t.Fatalf("an utterance near the clip's end keeps the frames the clip has: %+v %v", tg, ok)
	}
	if _, ok := wholeUtterance(-hop, 100*hop, ids); ok {
		t.Fatal("an utterance cut by the clip's start has no target: its first sounds are missing")
	}
	if _, ok := wholeUtterance(10*hop, 20*hop, nil); ok {
		t.Fatal("an utterance with no transcription has no target")
	}
	long := make([]uint8, 40)
	for i := range long {
		long[i] = uint8(1 + i%2)
	}
	if _, ok := wholeUtterance(clipHops*hop-30*hop, clipHops*hop, long); ok {
		t.Fatal("a target longer than its frames has none")
	}
	if n := ctcMinFrames([]uint8{1, 1, 2, 2, 2}); n != 8 {
		t.Fatalf("ctcMinFrames %d, want 8", n)
	}
}

// The phone targets are the transcriptions of the phrase and near-miss
// utterances that lie whole in their clips; ordinary speech and noise
// clips have none.
func TestPhoneTargets(t *testing.T) {
	needSynths(t)
	cfg := tinyConfig()
	cfg.PhoneWeight = 1
	c := testCorpus(t, cfg, t.TempDir())
	ds := c.trainingSet(cfg, newProgress(nil))
	if ds.phones != c.phones.size() || ds.phones < 10 {
		t.Fatalf("a head of %d outputs for %d symbols", ds.phones, len(c.phones.ids))
	}
	spelling := func(u utt) []uint8 { return c.phones.text[u.d.Voice.Accent+"|"+u.d.Text] }
	for i := range ds.npos {
		tg, ok := ds.phoneTarget(i)
		if u := c.pos[i/cfg.PosClips]; !ok || !slices.Equal(tg.ids, spelling(u)) {
			t.Fatalf("positive clip %d: target %v, want %v's transcription", i, tg.ids, u.d)
		}
	}
	for i := ds.npos; i < ds.near[0]; i++ {
		if _, ok := ds.phoneTarget(i); ok {
			t.Fatalf("speech clip %d has a phone target", i)
		}
	}
	spelt := 0
	for i := ds.near[0]; i < ds.near[1]; i++ {
		if tg, ok := ds.phoneTarget(i); ok {
			u := c.near[(i-ds.near[0])/max(1, cfg.NearClips)]
			if !slices.Equal(tg.ids, spelling(u)) {
				t.Fatalf("near-miss clip %d: target %v, want %v's transcription", i, tg.ids, u.d)
			}
			spelt++
		}
	}
	if spelt == 0 {
		t.Fatal("no near miss has a phone target")
	}
	for i := ds.near[1]; i < ds.n; i++ {
		if _, ok := ds.phoneTarget(i); ok {
			t.Fatalf("noise clip %d has a phone target", i)
		}
	}
	t.Logf("%d symbols; %d of %d near-miss clips spelt", len(c.phones.ids), spelt, ds.near[1]-ds.near[0])
}
