//go:build robot

package speechembed

import (
	"encoding/hex"

	"github.com/edgeagent/edgeagent/internal/datafile"
)

// builtinWeights maps the model file shipped beside the robot-profile
// binary if it carries the digest this build expects; load then checks
// that the digest is the content's.
func builtinWeights() ([]byte, error) { return datafile.Map(WeightsFile, carriesDigest) }

func carriesDigest(b []byte) bool {
	return len(b) >= 32 && hex.EncodeToString(b[len(b)-32:]) == WeightsSHA256
}
