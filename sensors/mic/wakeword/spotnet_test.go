package wakeword

import (
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// silentNet is a model named name whose score never rises: its output
// bias is far below any threshold.
func silentNet(name string) *Net {
	n := randomNet(11)
	n.Name = name
	tw := &n.Towers[0]
	for i := range tw.OutW {
		tw.OutW[i] = 0
	}
	tw.OutB = -50
	return n
}

// Templates and a model of the same name: a template match needs the
// model to agree a little; a model of another name does not hold the
// templates back.
func TestTemplatesNeedTheModelOfTheirName(t *testing.T) {
	m := testModel(t)
	sig, _ := scene(6*time.Second, background{"pink", 20}, 3, [][]int16{clip(t, "pos/enrolled_a.wav")}, []time.Duration{3 * time.Second})
	run := func(nets ...*Net) []Detection {
		sp, err := NewSpotter([]*Model{m}, Options{Nets: nets})
		if err != nil {
			t.Fatal(err)
		}
		return sp.Process(nil, sig, nil)
	}
	if ds := run(); len(ds) != 1 || ds[0].Detector != DetectorTemplates {
		t.Fatalf("templates alone: %+v", ds)
	}
	if ds := run(silentNet("other_word")); len(ds) != 1 || ds[0].Detector != DetectorTemplates {
		t.Fatalf("with another word's model: %+v", ds)
	}
	if ds := run(silentNet("hey_robot")); len(ds) != 0 {
		t.Fatalf("the model of the same name heard nothing, yet: %+v", ds)
	}
}

// The shipped model detects the phrase from a voice it never trained on,
// once, shortly after the phrase ends, and its detection says so.
func TestBuiltinModelDetectsHeldOutVoice(t *testing.T) {
	n := builtinNet(t)
	sig, ends := scene(6*time.Second, background{"pink", 20}, 5, [][]int16{clip(t, "pos/unseen_gb_f2.wav")}, []time.Duration{3 * time.Second})
	sp, err := NewSpotter(nil, Options{Nets: []*Net{n}})
	if err != nil {
		t.Fatal(err)
	}
	ds := sp.Process(nil, sig, nil)
	if len(ds) != 1 {
		t.Fatalf("%d detections: %+v", len(ds), ds)
	}
	d := ds[0]
	if d.Name != "hey_robot" || d.Detector != DetectorModel || d.Score < DefaultNetThreshold || d.Score > 1 {
		t.Fatalf("detection %+v", d)
	}
	if lat := d.At - ends[0]; lat < -100*time.Millisecond || lat > 300*time.Millisecond {
		t.Fatalf("decided %v after the phrase's end", lat)
	}
}

// A model's score counts only after it has heard its receptive field: a
// model that says "yes" to everything scores 0 until then, and fires
// right after.
func TestNetSilentUntilItsReceptiveFieldIsHeard(t *testing.T) {
	n := silentNet("eager")
	n.Towers[0].OutB = 50 // the opposite of silent: every hop scores ~1
	sp, err := NewSpotter(nil, Options{Nets: []*Net{n}})
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]int16, 3*16000)
	audio.NewNoise("white", -30, 2).Fill(sig)
	warm := n.ReceptiveField()
	hop, first := 0, -1
	var dets []Detection
	for k := 0; k+HopSamples <= len(sig); k += HopSamples {
		dets = sp.Process(dets[:0], sig[k:k+HopSamples], func(bool) {
			if sc := sp.NetScore(0); hop < warm && sc != 0 {
				t.Fatalf("hop %d of a %d-hop receptive field: score %v", hop, warm, sc)
			} else if hop >= warm && sc < 0.99 {
				t.Fatalf("hop %d: score %v after the receptive field", hop, sc)
			}
			hop++
		})
		if len(dets) > 0 && first < 0 {
			first = hop
		}
	}
	if first < warm || first > warm+n.SmoothHops()+settleHops+2 {
		t.Fatalf("first detection at hop %d, want just after %d", first, warm)
	}
}
