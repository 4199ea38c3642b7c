package wakeword

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randSeq(r *rand.Rand, n int) [][]float32 {
	s := make([][]float32, n)
	for i := range s {
		s[i] = make([]float32, Dims)
		for k := range s[i] {
			s[i][k] = float32(r.NormFloat64() * 3)
		}
	}
	return s
}

// stretch repeats every k-th frame, making a slower utterance of the
// same sounds.
func stretch(s [][]float32, k int) [][]float32 {
	var out [][]float32
	for i, f := range s {
		out = append(out, f)
		if i%k == k/2 {
			out = append(out, f)
		}
	}
	return out
}

func TestDTWProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	a, b := randSeq(r, 60), randSeq(r, 55)
	if d := DTW(a, a); d != 0 {
		t.Fatalf("DTW(a, a) = %v", d)
	}
	if d1, d2 := DTW(a, b), DTW(b, a); math.Abs(d1-d2) > 1e-5 {
		t.Fatalf("not symmetric: %v vs %v", d1, d2)
	}
	// Time warping within the band costs nothing: a 20% slower copy has
	// every frame of the original, in order.
	if d := DTW(a, stretch(a, 5)); d != 0 {
		t.Fatalf("DTW(a, stretched a) = %v, want 0", d)
	}
	// Outside the band, no alignment: a phrase at double length.
	if d := DTW(a, stretch(a, 1)); !math.IsInf(d, 1) {
		t.Fatalf("DTW of a and a twice as long = %v, want +Inf", d)
	}
	// Noise added to a moves it away from a, smoothly.
	noisy := func(sd float64) [][]float32 {
		out := make([][]float32, len(a))
		for i := range a {
			out[i] = make([]float32, Dims)
			for k := range a[i] {
				out[i][k] = a[i][k] + float32(r.NormFloat64()*sd)
			}
		}
		return out
	}
	d1, d2 := DTW(a, noisy(0.5)), DTW(a, noisy(2))
	if !(0 < d1 && d1 < d2 && d2 < DTW(a, b)) {
		t.Fatalf("distances not ordered by noise: %v, %v, unrelated %v", d1, d2, DTW(a, b))
	}
	// Length normalisation: the distance is per step, so a sequence and its
	// noisy copy are as far apart as the same pair repeated twice over.
	n := noisy(1)
	aa := append(append([][]float32{}, a...), a...)
	nn := append(append([][]float32{}, n...), n...)
	if d1, d2 := DTW(a, n), DTW(aa, nn); math.Abs(d1-d2) > 0.05*d1 {
		t.Fatalf("distance depends on length: %v vs %v", d1, d2)
	}
}

func TestMatcherFindsTemplateInStream(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tmpl := randSeq(r, 40)
	for _, warp := range []int{0, 4} { // as is, and 25% slower
		phrase := tmpl
		if warp > 0 {
			phrase = stretch(tmpl, warp)
		}
		stream := append(randSeq(r, 100), phrase...)
		stream = append(stream, randSeq(r, 50)...)
		m := newMatcher(tmpl)
		best, bestAt, bestStart := math.Inf(1), -1, int32(-1)
		for j, x := range stream {
			d, st := m.step(x, int32(j))
			if d < best {
				best, bestAt, bestStart = d, j, st
			}
		}
		end := 100 + len(phrase) - 1
		if best != 0 || bestAt != end || bestStart != 100 {
			t.Fatalf("warp %d: best %v at %d from %d, want 0 at %d from 100", warp, best, bestAt, bestStart, end)
		}
	}
}

func TestMatcherResetForgetsPartialMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tmpl := randSeq(r, 30)
	m := newMatcher(tmpl)
	for j, x := range tmpl[:20] {
		m.step(x, int32(j))
	}
	m.reset()
	var last float64
	for j, x := range tmpl[20:] {
		last, _ = m.step(x, int32(20+j))
	}
	// Only the last 10 frames were seen since the reset: the band forbids
	// matching 30 template frames onto them.
	if !math.IsInf(last, 1) {
		t.Fatalf("after reset, a match of the whole template ending here: %v", last)
	}
}

func BenchmarkMatcherStep(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	m := newMatcher(randSeq(r, 70))
	x := randSeq(r, 1)[0]
	b.ReportAllocs()
	j := int32(0)
	for b.Loop() {
		m.step(x, j)
		j++
	}
}
