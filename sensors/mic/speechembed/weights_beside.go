//go:build robot

package speechembed

import "github.com/edgeagent/edgeagent/internal/datafile"

// builtinWeights maps the model file shipped beside the robot-profile
// binary, once its digest is the one this build expects.
func builtinWeights() ([]byte, error) { return datafile.Map(WeightsFile, WeightsSHA256) }
