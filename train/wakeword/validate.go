package wakeword

import (
	"context"
	"math"

	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// The threshold rule, written before any head was trained:
//
//	The threshold is the lowest value on a 0.01 grid from 0.30 to 0.99 at
//	which, on the validation speakers (espeak-ng variants never trained
//	on), the false accepts on their other speech are at most
//	TargetFAH per hour of it (rounded down: with less than two hours of
//	speech that means none), and at most MaxNear of their confusable
//	clips fire. If no value qualifies, 0.99.
//
// Only espeak-ng validation data is used: the flite and festival voices
// that stand in for people are for evaluation alone. A false accept is
// counted as the live detector counts detections: a run of windows at or
// above the threshold, and none again within the refractory period. The
// windows are those of the clip run through the frontend from its start
// (the live detector's gate replays a pre-roll of the same length).

// Validation is the report of the validation speakers at the threshold.
type Validation struct {
	Threshold   float64 `json:"threshold"`
	Recall      float64 `json:"recall"`        // phrase clips whose window at the phrase's end reaches it
	NearFire    float64 `json:"near_fire"`     // confusable clips with any window reaching it
	FalseAccept int     `json:"false_accepts"` // on the other speech
	SpeechHours float64 `json:"speech_hours"`  // of other speech
	Phrases     int     `json:"phrase_clips"`  // validation phrase clips
	Confusables int     `json:"confusable_clips"`
}

const refractEmbeds = int(ww.DefaultRefractory / (ww.EmbedHop * 1e9 / 16000))

func validate(f *fitter, clips []embedded, s *clipSets, cfg Config) Validation {
	scores := make([][]float64, len(clips))
	var ss []sample
	var idx [][2]int
	for i, em := range clips {
		for j := ww.WindowLen - 1; j < len(em.e); j++ {
			ss = append(ss, sample{c: int32(i), j: int16(j)})
			idx = append(idx, [2]int{i, j})
		}
		scores[i] = make([]float64, len(em.e))
	}
	vf := &fitter{net: f.net, clips: clips, workers: f.workers, shards: f.shards}
	for k, sc := range vf.scoreAll(context.Background(), ss) {
		scores[idx[k][0]][idx[k][1]] = sc
	}
	v := Validation{Threshold: 0.99}
	var samples int
	for i, k := range s.valKind {
		switch k {
		case valPos:
			v.Phrases++
		case valNear:
			v.Confusables++
		case valSpeech:
			samples += len(s.val[i])
		}
	}
	v.SpeechHours = float64(samples) / 16000 / 3600
	allowed := int(math.Floor(cfg.TargetFAH * v.SpeechHours))
	measure := func(th float64) Validation {
		m := Validation{Threshold: th, SpeechHours: v.SpeechHours, Phrases: v.Phrases, Confusables: v.Confusables}
		var hit, near int
		for i, k := range s.valKind {
			switch k {
			case valPos:
				if peakAfter(scores[i], clips[i], s.valEnd[i]) >= th {
					hit++
				}
			case valNear:
				if slicesMax(scores[i]) >= th {
					near++
				}
			case valSpeech:
				m.FalseAccept += crossings(scores[i], th)
			}
		}
		m.Recall = float64(hit) / float64(max(1, v.Phrases))
		m.NearFire = float64(near) / float64(max(1, v.Confusables))
		return m
	}
	for t := 30; t <= 99; t++ {
		m := measure(float64(t) / 100)
		if m.FalseAccept <= allowed && m.NearFire <= cfg.MaxNear {
			return m
		}
	}
	return measure(0.99)
}

// peakAfter is the highest score of the windows that end within posAfter
// after end (the phrase's own windows).
func peakAfter(sc []float64, em embedded, end int) float64 {
	best := 0.0
	for j, t := range em.end {
		if int(t) >= end && int(t) <= end+posAfter {
			best = max(best, sc[j])
		}
	}
	return best
}

func slicesMax(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// crossings counts detections: runs at or above th, refractory apart.
func crossings(sc []float64, th float64) int {
	n, quiet := 0, -1
	for j, v := range sc {
		if j > quiet && v >= th {
			n++
			quiet = j + refractEmbeds
		}
	}
	return n
}
