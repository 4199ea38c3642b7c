package wakeword

// picker turns a head's scores into detections. Scores come with
// increasing 10 ms hop numbers (a head scores every EmbedHop). The first
// score at or above the threshold fires, and then nothing fires until the
// refractory period has passed (its own detection's, or another
// detector's through Quiet): one utterance, one detection.
type picker struct {
	Threshold float64
	Refract   int64 // hops of silence after a detection
	quietTill int64
}

// Step consumes the score of hop and reports whether it fires.
func (p *picker) Step(hop int64, score float64) bool {
	if hop < p.quietTill || score < p.Threshold {
		return false
	}
	p.Quiet(hop + p.Refract)
	return true
}

// Quiet ignores scores before hop until.
func (p *picker) Quiet(until int64) { p.quietTill = max(p.quietTill, until) }
