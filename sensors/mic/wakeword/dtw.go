package wakeword

import "math"

// Dynamic time warping of feature sequences. Two forms:
//
//   - DTW aligns two whole sequences (both ends anchored). Enrolment uses it
//     to measure how far apart the user's own takes are, which calibrates
//     the score.
//   - matcher is the streaming "subsequence" form used for detection: the
//     template must be matched completely, but the match may start at any
//     input frame, and a result is available at every input frame for a
//     match ending there. Each frame costs one column of the template, so
//     the work is O(template length) per 10 ms, independent of how long we
//     have been listening.
//
// Both keep, for every cell, the accumulated cost and the number of steps of
// the best path into it, and choose predecessors by cost per step. The
// length-normalised distance is what makes a slow and a fast utterance of
// the same phrase comparable, and it is what the score is computed from.
//
// Both are banded: a path may not stray more than band frames off the
// diagonal that starts where it starts (Sakoe–Chiba band). Without the
// band, a short input can match a long template by sitting on one frame,
// or an unrelated long stretch can be squeezed onto the template.

// dist is the Euclidean distance between two feature vectors.
func dist(a, b []float32) float32 {
	var s float32
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return float32(math.Sqrt(float64(s)))
}

// bandFor is the band half-width for a template of n frames: a quarter of
// its length, which admits the phrase spoken 25% faster or slower, and at
// least 5 frames so that short templates are not forced onto the diagonal.
func bandFor(n int) int { return max(5, n/4) }

// DTW returns the length-normalised banded DTW distance between a and b,
// or +Inf when the band makes an alignment impossible (lengths too
// different).
func DTW(a, b [][]float32) float64 {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return math.Inf(1)
	}
	band := max(bandFor(n), bandFor(m))
	if abs(n-m) > band {
		return math.Inf(1)
	}
	inf := float32(math.Inf(1))
	cost := make([]float32, (n+1)*(m+1))
	steps := make([]int32, (n+1)*(m+1))
	for i := range cost {
		cost[i] = inf
	}
	cost[0] = 0
	at := func(i, j int) int { return i*(m+1) + j }
	for i := 1; i <= n; i++ {
		// Band around the diagonal scaled to the two lengths.
		c := float64(i) * float64(m) / float64(n)
		lo := max(1, int(math.Floor(c))-band)
		hi := min(m, int(math.Ceil(c))+band)
		for j := lo; j <= hi; j++ {
			d := dist(a[i-1], b[j-1])
			bc, bs := inf, int32(0)
			best := func(k int) {
				if cost[k] == inf {
					return
				}
				s := steps[k] + 1
				if bc == inf || (cost[k]+d)/float32(s) < bc/float32(bs) {
					bc, bs = cost[k]+d, s
				}
			}
			best(at(i-1, j-1))
			best(at(i-1, j))
			best(at(i, j-1))
			cost[at(i, j)], steps[at(i, j)] = bc, bs
		}
	}
	k := at(n, m)
	if cost[k] == inf {
		return math.Inf(1)
	}
	return float64(cost[k] / float32(steps[k]))
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// matcher runs subsequence DTW of one template against a live stream.
type matcher struct {
	tmpl  [][]float32
	band  int32
	cost  []float32 // column for the previous input frame, per template frame
	steps []int32
	start []int32 // input frame where the best path into the cell began
	nc    []float32
	ns    []int32
	nst   []int32
}

func newMatcher(tmpl [][]float32) *matcher {
	n := len(tmpl)
	m := &matcher{
		tmpl: tmpl, band: int32(bandFor(n)),
		cost: make([]float32, n), steps: make([]int32, n), start: make([]int32, n),
		nc: make([]float32, n), ns: make([]int32, n), nst: make([]int32, n),
	}
	m.reset()
	return m
}

var inf32 = float32(math.Inf(1))

// reset forgets all partial matches (the VAD gate closed).
func (m *matcher) reset() {
	for i := range m.cost {
		m.cost[i] = inf32
		m.steps[i] = 0
		m.start[i] = 0
	}
}

// step consumes input frame x (its index in the stream is j) and returns the
// length-normalised distance of the best match of the whole template
// ending at this frame (+Inf if none), and the input frame it starts at.
func (m *matcher) step(x []float32, j int32) (float64, int32) {
	n := len(m.tmpl)
	band := m.band
	cost, steps, start := m.cost, m.steps, m.start
	nc, ns, nst := m.nc, m.ns, m.nst
	for i := 0; i < n; i++ {
		d := dist(m.tmpl[i], x)
		// Candidates: fresh start (i == 0 only) or continue from the
		// previous column at i (input advances); diagonal from i-1 in the
		// previous column; from i-1 in this column (template advances).
		var cc [3]float32
		var cs, cst [3]int32
		k := 0
		if i == 0 {
			cc[0], cs[0], cst[0] = 0, 0, j
			cc[1], cs[1], cst[1] = cost[0], steps[0], start[0]
			k = 2
		} else {
			cc[0], cs[0], cst[0] = cost[i-1], steps[i-1], start[i-1]
			cc[1], cs[1], cst[1] = cost[i], steps[i], start[i]
			cc[2], cs[2], cst[2] = nc[i-1], ns[i-1], nst[i-1]
			k = 3
		}
		bc, bs, bst := inf32, int32(0), int32(0)
		for c := 0; c < k; c++ {
			if cc[c] == inf32 {
				continue
			}
			// Band: template progress (i+1) vs input progress (j-st+1).
			if di := int32(i+1) - (j - cst[c] + 1); di > band || -di > band {
				continue
			}
			s := cs[c] + 1
			if bc == inf32 || (cc[c]+d)*float32(bs) < bc*float32(s) {
				bc, bs, bst = cc[c]+d, s, cst[c]
			}
		}
		nc[i], ns[i], nst[i] = bc, bs, bst
	}
	m.cost, m.nc = nc, cost
	m.steps, m.ns = ns, steps
	m.start, m.nst = nst, start
	last := n - 1
	if m.cost[last] == inf32 {
		return math.Inf(1), 0
	}
	return float64(m.cost[last] / float32(m.steps[last])), m.start[last]
}
