//go:build robot

package wakeword

import "github.com/edgeagent/edgeagent/internal/datafile"

// builtinHeadBytes maps the head file shipped beside the robot-profile
// binary, once its digest is the one this build expects.
func builtinHeadBytes() ([]byte, error) { return datafile.Map(HeadFile, datafile.SHA256(HeadSHA256)) }
