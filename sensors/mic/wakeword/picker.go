package wakeword

// Picker turns a score per 10 ms hop into detections. A score at or above
// the threshold arms it; the highest score while armed is the peak; it
// fires Settle hops after the last new peak, so one utterance gives one
// detection at its best moment. After a detection (its own or, through
// Quiet, another detector's) it stays silent until the refractory period
// has passed. The mic's neural path and the trainer's evaluation both use
// it, so the rates the trainer reports are those of the live detector.
type Picker struct {
	Threshold float64
	Settle    int64 // hops a peak must hold before it fires
	Refract   int64 // hops of silence after a detection
	// Smooth averages the score over this many hops (1: off, at most
	// maxSmooth) before the threshold: the phrase holds the score up for
	// tens of hops, a click or a syllable of other speech only for one
	// or two.
	Smooth int

	hist      [maxSmooth]float64
	nhist     int
	armed     bool
	peak      float64
	peakHop   int64
	quietTill int64
}

// NewPicker makes a picker with the detector's timing: settle 50 ms and
// the given refractory period in hops.
func NewPicker(threshold float64, refractHops int64) Picker {
	return Picker{Threshold: threshold, Settle: settleHops, Refract: refractHops, Smooth: smoothHops}
}

// smoothHops is the score smoothing of models that do not give their own
// (Net.Smooth): 50 ms.
const (
	smoothHops = 5
	maxSmooth  = 16
)

// Step consumes the score of hop (hops are numbered from 0 and increase by
// one per call). When it fires it returns true with the peak's score and
// hop.
func (p *Picker) Step(hop int64, score float64) (fired bool, peak float64, peakHop int64) {
	if k := min(max(p.Smooth, 1), maxSmooth); k > 1 {
		p.hist[p.nhist%k] = score
		p.nhist++
		var sum float64
		n := min(p.nhist, k)
		for _, v := range p.hist[:n] {
			sum += v
		}
		score = sum / float64(n)
	}
	if hop < p.quietTill {
		return false, 0, 0
	}
	if score >= p.Threshold && (!p.armed || score > p.peak) {
		p.armed, p.peak, p.peakHop = true, score, hop
		return false, 0, 0
	}
	if p.armed && hop-p.peakHop >= p.Settle {
		p.armed = false
		p.Quiet(hop + p.Refract)
		return true, p.peak, p.peakHop
	}
	return false, 0, 0
}

// Quiet drops any pending peak and ignores scores before hop until.
func (p *Picker) Quiet(until int64) {
	p.armed = false
	p.quietTill = max(p.quietTill, until)
}
