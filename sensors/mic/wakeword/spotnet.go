package wakeword

import (
	"math"
)

// Enrolled templates and a trained model of the same name work together:
// the model hears anyone, and the templates catch the owner's delivery
// even when the model is unsure. Alone, the templates also fire on near
// misses in the owner's voice ("okay robot" for "hey robot"), which the
// model has been trained to reject; so a template match counts only if the
// model's score reached assistFloor within the last second. A floor well
// below the model's threshold keeps the owner's takes useful where the
// model alone would miss them.
const (
	assistFloor = 0.05
	assistHops  = 100
)

// runNets steps every trained model by the hop just analysed.
//
// A model's score counts only once it has heard a whole receptive field of
// the stream: before that its input starts with the zero history of a
// fresh stream, which training never scores (its loss starts a second
// into each clip), and a model may answer anything there — one trained
// model gave 0.997 to the first second of white noise, at every stream
// start. Until then its score is 0: no detection in the first 1.3 s after
// the microphone opens, and no phantom in a trainer's calibration.
func (s *Spotter) runNets(dst []Detection) []Detection {
	now := s.hop - 1 // index of the hop just analysed
	for _, e := range s.nets {
		sc := e.net.Score(e.st.step(s.ext.logMel))
		if now < e.warm {
			sc = 0
		}
		e.last = sc
		if sc >= assistFloor {
			e.lastAssist = now
		}
		fired, peak, at := e.pick.Step(now, sc)
		if !fired {
			continue
		}
		rf := int64(e.net.ReceptiveField())
		dst = append(dst, Detection{Name: e.net.Name, Score: peak, Detector: DetectorModel,
			Start: hopTime(max(0, at+1-rf)), End: hopTime(at + 1), At: hopTime(now + 1), SNR: math.NaN()})
		s.quiet(now + 1)
		s.resetMatchers()
		s.armed = false
	}
	return dst
}

// confirmByNet reports whether a template detection of name may fire.
func (s *Spotter) confirmByNet(name string) bool {
	for _, e := range s.nets {
		if e.net.Name == name && s.hop-e.lastAssist > assistHops {
			return false
		}
	}
	return true
}

// NetScore is the calibrated score of trained model i (in the order of
// Options.Nets) for the last hop: for traces and tests.
func (s *Spotter) NetScore(i int) float64 { return s.nets[i].last }
