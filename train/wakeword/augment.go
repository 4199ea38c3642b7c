package wakeword

import (
	"math"
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// A scene is one clip of sound: utterances placed in time, a room, a
// background and a microphone gain. Training draws scenes at random so
// the model hears the phrase in many rooms, noises and levels; evaluation
// draws them with fixed noise conditions.
type scene struct {
	length int // samples
	parts  []placed
	noise  string  // "", "white", "pink", "babble"
	snr    float64 // dB of the speech over the noise
	reverb bool
	eq     bool
	peak   float64 // dBFS of the speech's loudest sample after gain
	seed   uint64
}

type placed struct {
	x  []int16
	at int // sample offset; may be negative (the clip starts mid-utterance)
}

// render mixes a scene. babble is a pool of speech for babble noise.
func (sc scene) render(babble [][]int16) []int16 {
	r := rand.New(rand.NewPCG(sc.seed, 0x5eed))
	sp := make([]float64, sc.length)
	var energy float64
	var active int
	for _, p := range sc.parts {
		for i, v := range p.x {
			if j := p.at + i; j >= 0 && j < len(sp) {
				sp[j] += float64(v)
			}
			energy += float64(v) * float64(v)
		}
		active += len(p.x)
	}
	if sc.eq {
		equalise(r, sp)
	}
	if sc.reverb {
		sp = reverberate(r, sp)
	}
	// Speech level measured on the utterances themselves, so the SNR means
	// what it says whatever the padding.
	speechRMS := 0.0
	if active > 0 {
		speechRMS = math.Sqrt(energy / float64(active))
	}
	if sc.noise != "" {
		nz := make([]float64, sc.length)
		switch sc.noise {
		case "babble":
			for range 3 + r.IntN(4) {
				b := pick(r, babble)
				o := r.IntN(len(b))
				for i := range nz {
					nz[i] += float64(b[(o+i)%len(b)])
				}
			}
		default:
			g := audio.NewNoise(sc.noise, -20, sc.seed)
			for i := range nz {
				nz[i] = g.Next()
			}
		}
		nrms := rms(nz)
		target := speechRMS / math.Pow(10, sc.snr/20)
		if speechRMS == 0 { // noise only: a level of its own
			target = 32768 * math.Pow(10, sc.snr/20)
		}
		if nrms > 0 {
			g := target / nrms
			for i := range sp {
				sp[i] += g * nz[i]
			}
		}
	}
	// Every microphone hisses: a floor 45–70 dB under the speech. Without
	// it, "clean" synthetic clips have digital silence, whose log energies
	// sit at the analysis floor, far from anything a microphone gives.
	floor := math.Max(speechRMS, 100) * math.Pow(10, -(45+25*r.Float64())/20)
	hiss := audio.NewNoise("white", -20, sc.seed^0xf1005)
	g20 := 32768 * math.Pow(10, -20.0/20)
	for i := range sp {
		sp[i] += hiss.Next() / g20 * floor
	}
	pk := 0.0
	for _, v := range sp {
		pk = max(pk, math.Abs(v))
	}
	out := make([]int16, sc.length)
	if pk == 0 {
		return out
	}
	g := 32767 * math.Pow(10, sc.peak/20) / pk
	for i, v := range sp {
		out[i] = int16(max(-32768, min(32767, math.Round(v*g))))
	}
	return out
}

func rms(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(max(1, len(x))))
}

// equalise applies a random first-order high-pass (thin phone-like
// microphones, 100–400 Hz) or low-pass (muffled, far or behind a grille,
// 2–6 kHz), or a tilt between them.
func equalise(r *rand.Rand, x []float64) {
	const fs = audio.Rate
	if r.IntN(2) == 0 {
		fc := 100 + 300*r.Float64()
		a := math.Exp(-2 * math.Pi * fc / fs)
		var px, py float64
		for i, v := range x {
			py = a * (py + v - px)
			px = v
			x[i] = py
		}
		return
	}
	fc := 2000 + 4000*r.Float64()
	a := math.Exp(-2 * math.Pi * fc / fs)
	mix := 0.5 + 0.5*r.Float64() // keep some of the dry signal: a tilt, not a wall
	var y float64
	for i, v := range x {
		y = (1-a)*v + a*y
		x[i] = mix*y + (1-mix)*v
	}
}

// reverberate adds a small room: Schroeder's four parallel combs and two
// all-passes, with a random reverberation time (0.15–0.7 s) and wet level.
// It costs a few operations per sample where convolving with a measured
// room response would cost thousands.
func reverberate(r *rand.Rand, x []float64) []float64 {
	rt60 := 0.15 + 0.55*r.Float64()
	wet := 0.15 + 0.45*r.Float64()
	combs := []int{1116, 1188, 1277, 1356} // samples at 16 kHz: 70–85 ms, mutually prime-ish
	out := make([]float64, len(x))
	for _, d := range combs {
		d = d * (90 + r.IntN(21)) / 100 // room size
		g := math.Pow(10, -3*float64(d)/audio.Rate/rt60)
		buf := make([]float64, d)
		k := 0
		for i, v := range x {
			y := buf[k]
			buf[k] = v + g*y
			k = (k + 1) % d
			out[i] += y / float64(len(combs))
		}
	}
	for _, d := range []int{225, 556} {
		buf := make([]float64, d)
		k := 0
		for i, v := range out {
			b := buf[k]
			y := -0.5*v + b
			buf[k] = v + 0.5*y
			k = (k + 1) % d
			out[i] = y
		}
	}
	for i := range out {
		out[i] = (1-wet)*x[i] + wet*out[i]*2
	}
	return out
}
