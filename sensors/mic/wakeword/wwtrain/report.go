package wwtrain

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Report is a trained model's evaluation on data it did not train on.
type Report struct {
	Phrase          string  `json:"phrase"`
	TargetFAPerHour float64 `json:"target_fa_per_hour"`
	// RawThreshold is the uncalibrated score chosen on the calibration
	// negatives; the model's calibrated score is 0.5 there.
	RawThreshold float64 `json:"raw_threshold"`
	CalibHours   float64 `json:"calib_hours"`
	CalibFA      int     `json:"calib_false_accepts"`
	// CalibTargetFAPerHour is the rate the threshold aimed at on the
	// calibration speech: the target with the recipe's margin.
	CalibTargetFAPerHour float64 `json:"calib_target_fa_per_hour"`
	// CalibTop are the highest detections in the calibration speech.
	CalibTop []string `json:"calib_top,omitempty"`

	Recall []RecallRow `json:"recall"`

	TestNegHours float64 `json:"test_negative_hours"`
	TestFA       int     `json:"test_false_accepts"`
	FAPerHour    float64 `json:"test_fa_per_hour"`
	// FAByCondition splits TestFA by the streams' noise.
	FAByCondition []FARow `json:"test_fa_by_condition"`

	Confusables     []ConfusableRow `json:"confusables"`
	ConfusableN     int             `json:"confusable_clips"`
	ConfusableFired int             `json:"confusable_fired"`
	ConfusableRate  float64         `json:"confusable_fire_rate"`
	// Of those, the confusables never trained on.
	HeldConfusableN     int `json:"held_out_confusable_clips"`
	HeldConfusableFired int `json:"held_out_confusable_fired"`
	// The confusables said by the held-out engine's voices (festival),
	// counted apart so that the rate above compares with earlier reports.
	EngineConfusableN     int `json:"engine_confusable_clips"`
	EngineConfusableFired int `json:"engine_confusable_fired"`
	// ConfusableSameSound counts the confusable clips whose voice's
	// accent pronounces them exactly like the phrase (espeak-ng phonemes).
	ConfusableSameSound int `json:"confusable_same_sound"`
	// Curve is the trade-off at other thresholds on the same test data.
	Curve []CurvePoint `json:"curve"`
	// FalseAccepts says what was being said at each test false accept.
	FalseAccepts []string `json:"false_accepts"`

	// Validation is the split recipes are chosen on.
	Validation Validation `json:"validation"`

	Params        int     `json:"params"`
	ReceptiveMS   int     `json:"receptive_field_ms"`
	TrainClips    int     `json:"train_clips"`
	TrainPosClips int     `json:"train_positive_clips"`
	FinalLoss     float64 `json:"final_loss"`
	// Mined is what hard-negative mining found (nil: not asked for).
	Mined *mineStats `json:"mined,omitempty"`
	// Verified is what the verifier learnt from (nil: none).
	Verified *verifyStats `json:"verified,omitempty"`
	// Phones is the phone head's check (nil: no head).
	Phones *phoneCheck `json:"phone_check,omitempty"`
	Timing Timing      `json:"timing_s"`
}

// RecallRow is the recall of one voice group in one noise condition.
type RecallRow struct {
	Group           string  `json:"group"`
	Condition       string  `json:"condition"`
	N               int     `json:"n"`
	Hits            int     `json:"hits"`
	Recall          float64 `json:"recall"`
	LatencyMedianMS int     `json:"latency_median_ms"` // detection after the phrase's end
	LatencyP90MS    int     `json:"latency_p90_ms"`
	latencies       []int
}

// add counts one positive clip: at is the hop the detector fired in (-1:
// it did not), end the hop the phrase ended in.
func (r *RecallRow) add(at, end int) {
	r.N++
	if at >= 0 {
		r.Hits++
		r.latencies = append(r.latencies, (at+1-end)*10)
	}
}

// finish computes the recall and the latency percentiles from the clips
// added.
func (r *RecallRow) finish() {
	r.Recall = round3(float64(r.Hits) / float64(r.N))
	if len(r.latencies) > 0 {
		sort.Ints(r.latencies)
		r.LatencyMedianMS = r.latencies[len(r.latencies)/2]
		r.LatencyP90MS = r.latencies[len(r.latencies)*9/10]
	}
}

// CurvePoint is one threshold's rates on the test data: the recall of
// espeak-ng's two held-out groups (not festival's, so the curve compares
// with reports from before it) and espeak-ng's confusables.
type CurvePoint struct {
	RawThreshold      float64 `json:"raw_threshold"`
	FAPerHour         float64 `json:"fa_per_hour"`
	RecallHeldOut10dB float64 `json:"recall_held_out_pink_10db"`
	ConfusableRate    float64 `json:"confusable_fire_rate"`
}

// FARow is the false accepts in one noise condition.
type FARow struct {
	Condition string  `json:"condition"`
	Hours     float64 `json:"hours"`
	FA        int     `json:"false_accepts"`
}

// ConfusableRow is how often one confusable phrase fired.
type ConfusableRow struct {
	Text    string `json:"text"`
	N       int    `json:"n"`
	Fired   int    `json:"fired"`
	HeldOut bool   `json:"held_out,omitempty"` // never trained on
}

// Timing is where a training run spent its time, in seconds.
type Timing struct {
	SynthS float64 `json:"synth"`
	DataS  float64 `json:"data"`
	TrainS float64 `json:"train"`
	EvalS  float64 `json:"eval"`
}

// Summary is the part of the report the model file keeps.
type Summary struct {
	RawThreshold   float64            `json:"raw_threshold"`
	FAPerHour      float64            `json:"test_fa_per_hour"`
	TestNegHours   float64            `json:"test_negative_hours"`
	Recall10dB     map[string]float64 `json:"recall_pink_10db"`
	ConfusableRate float64            `json:"confusable_fire_rate"`
}

// Summary extracts the headline numbers.
func (r Report) Summary() Summary {
	s := Summary{RawThreshold: r.RawThreshold, FAPerHour: r.FAPerHour, TestNegHours: r.TestNegHours,
		ConfusableRate: r.ConfusableRate, Recall10dB: map[string]float64{}}
	for _, row := range r.Recall {
		if row.Condition == "pink 10 dB" {
			s.Recall10dB[row.Group] = row.Recall
		}
	}
	return s
}

// weakRecall is the validation recall in clean speech under which the
// report says the model is weak: one training's luck moves it by up to 20
// points (five seeds of one recipe gave 78–99 %: the experiment log, docs/bench/wake-word.md), so
// such a model is worth training again with another seed before it goes
// on a robot.
const weakRecall = 0.85

// weak reports the validation recall in clean speech and whether it is
// under weakRecall.
func (r Report) weak() (float64, bool) {
	for _, row := range r.Validation.Recall {
		if row.Condition == (condition{}).String() && row.N > 0 {
			return row.Recall, row.Recall < weakRecall
		}
	}
	return 0, false
}

// Markdown renders the report as tables.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Wake word %q\n\n", r.Phrase)
	fmt.Fprintf(&b, "%d parameters, receptive field %d ms; %d training clips (%d with the phrase); final loss %.4f.\n\n",
		r.Params, r.ReceptiveMS, r.TrainClips, r.TrainPosClips, r.FinalLoss)
	if m := r.Mined; m != nil {
		for i, rd := range m.Rounds {
			fmt.Fprintf(&b, "Hard negatives, round %d: %d moments of %.2f h of training voices' speech scored %.4f–%.4f (uncalibrated) and were trained on as negatives.\n\n",
				i+1, rd.Clips, m.Hours, rd.Bottom, rd.Top)
		}
	}
	if v := r.Verified; v != nil {
		fmt.Fprintf(&b, "Verifier: %d tower(s) fine-tuned for %d epochs on %d clips of the phrase against %d of near misses; its probability multiplies the model's.\n\n",
			v.Towers, v.Epochs, v.PosClips, v.NearClips)
	}
	if p := r.Phones; p != nil {
		fmt.Fprintf(&b, "Phone head (training only), on the validation clips' utterances: the phrase's spelling beats %d confusable spellings in %d of %d clips of the phrase (%d of %d in pink 10 dB), a confusable's wins in %d of %d confusable clips.\n\n",
			p.Rivals, p.PosKept, p.Pos, p.PosKeptNoisy, p.PosNoisy, p.NearVetoed, p.Near)
	}
	fmt.Fprintf(&b, "Threshold: uncalibrated score %.4f (calibrated 0.5), chosen for ≤ %.2g false accepts/h (target %.2g with margin) on %.2f h of held-out speech (%d there).\n\n",
		r.RawThreshold, r.CalibTargetFAPerHour, r.TargetFAPerHour, r.CalibHours, r.CalibFA)
	if rec, weak := r.weak(); weak {
		fmt.Fprintf(&b, "**A weak model:** validation recall in clean speech %.1f %% (under %.0f %%). One training's luck moves it by up to 20 points: train again with another `--seed` (into another --out) and keep the better model.\n\n",
			100*rec, 100*weakRecall)
	}
	fmt.Fprintf(&b, "Time: synthesis %.0f s, mixing %.0f s, training %.0f s, evaluation %.0f s.\n\n",
		r.Timing.SynthS, r.Timing.DataS, r.Timing.TrainS, r.Timing.EvalS)
	if len(r.CalibTop) > 0 {
		b.WriteString("Highest scores in the calibration speech (uncalibrated):\n\n")
		for _, t := range r.CalibTop {
			fmt.Fprintf(&b, "- %s\n", t)
		}
		b.WriteString("\n")
	}
	r.Validation.markdown(&b)
	if len(r.Recall) == 0 {
		b.WriteString("Test groups not evaluated (validation only).\n")
		return b.String()
	}
	b.WriteString("## Test\n\n")
	fmt.Fprintf(&b, "False accepts on %.2f h of other speech (a separate draw, all voices, mixed noise): %d = **%.2f per hour**.\n\n",
		r.TestNegHours, r.TestFA, r.FAPerHour)
	b.WriteString("| condition | hours | false accepts |\n|---|---:|---:|\n")
	for _, f := range r.FAByCondition {
		fmt.Fprintf(&b, "| %s | %.2f | %d |\n", f.Condition, f.Hours, f.FA)
	}
	if len(r.FalseAccepts) > 0 {
		b.WriteString("\nWhat was said at each false accept:\n\n")
		for _, f := range r.FalseAccepts {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	b.WriteString("\n")
	b.WriteString("## Recall by voice group and noise\n\n| voices | condition | n | recall | latency median | p90 |\n|---|---|---:|---:|---:|---:|\n")
	for _, row := range r.Recall {
		fmt.Fprintf(&b, "| %s | %s | %d | %.1f %% | %d ms | %d ms |\n", row.Group, row.Condition, row.N, 100*row.Recall,
			row.LatencyMedianMS, row.LatencyP90MS)
	}
	fmt.Fprintf(&b, "\n## Confusable phrases\n\n%d of %d clips fired (**%.1f %%**), clean and in pink noise at 10 dB, half in held-out voices; of the phrases never trained on (*), %d of %d. %d of the clips are, in their voice's accent, the phrase's own phonemes (espeak-ng).\n\n| phrase | clips | fired |\n|---|---:|---:|\n",
		r.ConfusableFired, r.ConfusableN, 100*r.ConfusableRate, r.HeldConfusableFired, r.HeldConfusableN, r.ConfusableSameSound)
	for _, c := range r.Confusables {
		mark := ""
		if c.HeldOut {
			mark = " *"
		}
		fmt.Fprintf(&b, "| %s%s | %d | %d |\n", c.Text, mark, c.N, c.Fired)
	}
	fmt.Fprintf(&b, "\nThe same confusables by the held-out engine's voices (%s): %d of %d clips fired.\n",
		GroupNewEngine, r.EngineConfusableFired, r.EngineConfusableN)
	b.WriteString("\n## Other thresholds (same test data)\n\n| uncalibrated threshold | FA/h | recall, espeak-ng's held-out voices, pink 10 dB | confusables fired |\n|---:|---:|---:|---:|\n")
	for _, p := range r.Curve {
		fmt.Fprintf(&b, "| %.4f | %.2f | %.1f %% | %.1f %% |\n", p.RawThreshold, p.FAPerHour, 100*p.RecallHeldOut10dB, 100*p.ConfusableRate)
	}
	return b.String()
}

func (r Report) write(dir string, cfg Config) error {
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.Markdown()), 0o644); err != nil {
		return err
	}
	return saveJSON(filepath.Join(dir, "report.json"), struct {
		Config Config `json:"config"`
		Report Report `json:"report"`
	}{cfg, r})
}

func (v Validation) markdown(b *strings.Builder) {
	b.WriteString("## Validation (validation speakers, training sentences and confusables)\n\n")
	fmt.Fprintf(b, "False accepts: %d in %.2f h (%.2f/h); confusables fired: %d of %d (%.1f %%).\n\n",
		v.FA, v.NegHours, v.FAPerHour, v.ConfusableFired, v.ConfusableN, 100*v.ConfusableRate)
	b.WriteString("| voices | condition | n | recall | latency median | p90 |\n|---|---|---:|---:|---:|---:|\n")
	for _, row := range v.Recall {
		fmt.Fprintf(b, "| %s | %s | %d | %.1f %% | %d ms | %d ms |\n", row.Group, row.Condition, row.N, 100*row.Recall, row.LatencyMedianMS, row.LatencyP90MS)
	}
	b.WriteString("\nThe curve and the rates above are espeak-ng's validation speakers' alone.\n")
	b.WriteString("\n| uncalibrated threshold | calibration FA | FA/h | recall clean | recall pink 10 dB | confusables fired |\n|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range v.Curve {
		fmt.Fprintf(b, "| %.4f | %d | %.2f | %.1f %% | %.1f %% | %.1f %% |\n", p.RawThreshold, p.CalibFA, p.FAPerHour,
			100*p.RecallClean, 100*p.Recall10dB, 100*p.ConfusableRate)
	}
	b.WriteString("\nOther score smoothings, each at its calibrated threshold:\n\n| smoothing (hops) | uncalibrated threshold | calibration FA | FA/h | recall clean | recall pink 10 dB | confusables fired |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range v.Smoothing {
		fmt.Fprintf(b, "| %d | %.4f | %d | %.2f | %.1f %% | %.1f %% | %.1f %% |\n", p.SmoothHops, p.RawThreshold, p.CalibFA, p.FAPerHour,
			100*p.RecallClean, 100*p.Recall10dB, 100*p.ConfusableRate)
	}
	if len(v.FalseAccepts) > 0 {
		b.WriteString("\nFalse accepts:\n\n")
		for _, f := range v.FalseAccepts {
			fmt.Fprintf(b, "- %s\n", f)
		}
	}
	if v.FliteConfusableN > 0 {
		fmt.Fprintf(b, "\nThe trained confusables by flite's validation speaker: %d of %d clips fired.\n", v.FliteConfusableFired, v.FliteConfusableN)
	}
	if len(v.Fired) > 0 {
		fmt.Fprintf(b, "\nConfusables that fired: %s (%d of the %d clips that their accent says as the phrase)\n",
			strings.Join(v.Fired, ", "), v.SameSoundFired, v.SameSoundN)
	}
	b.WriteString("\n")
}
