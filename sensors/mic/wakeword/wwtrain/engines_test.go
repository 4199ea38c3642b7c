package wwtrain

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// flite's and festival's voices say the phrase, and the delivery's speed
// reaches them: a slow delivery is longer than a fast one.
func TestOtherEnginesSpeak(t *testing.T) {
	needSynths(t)
	syn, err := newSynth(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []Voice{{"en-us", "rms", engineFlite}, {"en-us", "ked_diphone", engineFestival}} {
		d := Delivery{Voice: v, Speed: 115, Pitch: 50, Amp: 100, Text: "hey robot"}
		slow, err := syn.say(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		d.Speed = 215
		fast, err := syn.say(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		secs := func(x []int16) float64 { return float64(len(x)) / audio.Rate }
		if secs(fast) < 0.3 || secs(slow) < 1.4*secs(fast) {
			t.Errorf("%s: %.2f s slow, %.2f s fast", v, secs(slow), secs(fast))
		}
		if audio.RMS(fast) < 100 {
			t.Errorf("%s: silent (RMS %.0f)", v, audio.RMS(fast))
		}
	}
}

// A missing engine is an error before any synthesis, naming what to
// install; an unknown one is refused.
func TestMissingEngineIsAClearError(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ds := []Delivery{{Voice: Voice{"en-us", "m3", ""}}, {Voice: Voice{"en-us", "rms", engineFlite}}}
	if err := checkEngines(ds[:1]); err != nil {
		t.Errorf("espeak-ng only: %v", err)
	}
	err := checkEngines(ds)
	if err == nil || !strings.Contains(err.Error(), "apt-get install flite") {
		t.Errorf("flite missing: %v", err)
	}
	err = checkEngines([]Delivery{{Voice: Voice{"en-us", "x", "sam"}}})
	if err == nil || !strings.Contains(err.Error(), `unknown speech engine "sam"`) {
		t.Errorf("unknown engine: %v", err)
	}
}

// The share of flite's speakers swaps whole deliveries from a stream of
// its own: every espeak-ng delivery left is the one a run without flite
// makes (so the cache still serves it), training hears only flite's
// training speakers, validation has flite's validation speaker whatever
// the share, and the test has festival's voices as a group of their own.
func TestFliteShare(t *testing.T) {
	needSynths(t)
	dir := t.TempDir()
	cfg := tinyConfig()
	cfg.PosUtterances, cfg.NegUtterances = 24, 24
	c0 := testCorpus(t, cfg, dir)
	cfg.OtherEngines = 0.5
	c5 := testCorpus(t, cfg, dir)
	for _, set := range []struct {
		name string
		a, b []utt
	}{{"phrase", c0.pos, c5.pos}, {"speech", c0.speech, c5.speech}} {
		if len(set.a) != len(set.b) {
			t.Fatalf("%s: %d utterances, %d with flite", set.name, len(set.a), len(set.b))
		}
		swapped := 0
		for i, u := range set.b {
			if e := set.a[i].d.Voice.Engine; e != "" {
				t.Fatalf("%s %d: %s without flite", set.name, i, set.a[i].d.Voice)
			}
			if u.d.Voice.Engine == "" {
				if u.d != set.a[i].d || !slices.Equal(u.x, set.a[i].x) {
					t.Fatalf("%s %d: %v, without flite %v", set.name, i, u.d, set.a[i].d)
				}
				continue
			}
			swapped++
			if u.d.Voice.Engine != engineFlite || !slices.Contains(fliteTrain, u.d.Voice.Variant) {
				t.Fatalf("%s %d: trains on %s", set.name, i, u.d.Voice)
			}
		}
		if swapped < len(set.b)/5 || swapped > len(set.b)*4/5 {
			t.Errorf("%s: %d of %d by flite at a share of 0.5", set.name, swapped, len(set.b))
		}
	}
	for _, c := range []*corpus{c0, c5} {
		var flite, festival int
		for _, u := range c.valPos {
			if u.d.Voice.Engine == engineFlite && slices.Contains(fliteVal, u.d.Voice.Variant) {
				flite++
			}
		}
		for _, u := range c.testPos {
			if u.d.Voice.Group() == GroupNewEngine {
				festival++
			}
		}
		if flite != cfg.ValPosUtterances || festival != cfg.TestPosPerGroup || len(c.engineNear) != 2*len(c.confusables) {
			t.Errorf("validation by flite %d, test by festival %d, festival confusables %d", flite, festival, len(c.engineNear))
		}
	}
}
