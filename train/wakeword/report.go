package wakeword

// Report is what a training run measured, written as report.json.
type Report struct {
	Config     Config     `json:"recipe"`
	Frontend   string     `json:"frontend"`
	Positives  int        `json:"positive_windows"`
	Negatives  int        `json:"negative_windows"`
	Mined      int        `json:"mined_windows"`
	Loss       []float64  `json:"loss_per_epoch"`
	Threshold  float64    `json:"threshold"`
	Validation Validation `json:"validation"`
	Seconds    float64    `json:"seconds"`
}

// summary is what the head file carries of the report: the recipe and the
// validation, not the curve or the time (the head's bytes stay the same
// for a seed, however long the run took).
func (r Report) summary() any {
	return struct {
		Config     Config     `json:"recipe"`
		Validation Validation `json:"validation"`
	}{r.Config, r.Validation}
}
