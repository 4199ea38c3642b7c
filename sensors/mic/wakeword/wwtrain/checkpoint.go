package wwtrain

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// trainStats are what the report needs from training.
type trainStats struct {
	Clips    int `json:"clips"`
	PosClips int `json:"pos_clips"`
	// TowerLoss is each tower's last-epoch loss.
	TowerLoss []float64 `json:"tower_loss,omitempty"`
	// Loss is the one tower's loss in checkpoints from before towers
	// (loadCheckpoint moves it into TowerLoss).
	Loss float64 `json:"loss,omitempty"`
	// Mined is set in the checkpoint of mined towers.
	Mined *mineStats `json:"mined,omitempty"`
	// Verified is set in the checkpoint of a model with a verifier.
	Verified *verifyStats `json:"verified,omitempty"`
	// Phones is the first tower's phone check (phonecheck.go), if it
	// had a phone head.
	Phones *phoneCheck `json:"phone_check,omitempty"`
}

// loss is the towers' mean: what the report gives.
func (s trainStats) loss() float64 {
	var sum float64
	for _, l := range s.TowerLoss {
		sum += l
	}
	return sum / float64(max(1, len(s.TowerLoss)))
}

type checkpoint struct {
	Config Config     `json:"config"`
	Stats  trainStats `json:"stats"`
}

// saveCheckpoint writes the trained, uncalibrated weights in the model
// format, with the configuration that made them as the training record.
func saveCheckpoint(path string, n *wakeword.Net, cfg Config, st trainStats) error {
	b, err := json.Marshal(checkpoint{cfg, st})
	if err != nil {
		return err
	}
	c := *n
	c.Training = string(b)
	return wakeword.SaveNet(path, &c)
}

// loadCheckpoint returns the weights at path if they were trained with
// cfg, as far as part of it says; nil if there are none or they come from
// another configuration.
func loadCheckpoint(path string, cfg Config, part func(Config) Config) (*wakeword.Net, trainStats, error) {
	n, err := wakeword.LoadNet(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, trainStats{}, nil
	case err != nil:
		return nil, trainStats{}, fmt.Errorf("training checkpoint (delete it to retrain): %w", err)
	}
	var c checkpoint
	if json.Unmarshal([]byte(n.Training), &c) != nil {
		return nil, trainStats{}, nil
	}
	want, _ := json.Marshal(part(cfg))
	got, _ := json.Marshal(part(c.Config))
	if string(want) != string(got) {
		return nil, trainStats{}, nil
	}
	if len(c.Stats.TowerLoss) == 0 { // one tower, from before towers
		c.Stats.TowerLoss, c.Stats.Loss = []float64{c.Stats.Loss}, 0
	}
	n.Training = ""
	return n, c.Stats, nil
}

// trainingPart is what decides the trained towers: the configuration
// without what only the evaluation uses, without the number of towers (a
// checkpoint holds the first towers of any longer run) and without
// mining (which starts from them): changing those keeps the checkpoint.
func trainingPart(c Config) Config {
	c = minedPart(c)
	c.Towers, c.Mining = 0, Mining{}
	return c
}

// minedPart is what decides the mined towers: all but the evaluation and
// the verifier.
func minedPart(c Config) Config {
	c = verifiedPart(c)
	c.Verify = Verify{}
	return c
}

// verifiedPart is what decides the verifier: all but the evaluation.
func verifiedPart(c Config) Config {
	c.TargetFAPerHour, c.CalibMinutes, c.CalibMargin, c.TestPosPerGroup, c.TestNegMinutes = 0, 0, 0, 0, 0
	c.ValPosUtterances, c.ValNegMinutes, c.ValConfusableReps, c.TestConfusableReps = 0, 0, 0, 0
	return c
}
