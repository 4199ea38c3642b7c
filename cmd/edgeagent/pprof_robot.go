//go:build robot

package main

import (
	"context"
	"fmt"
	"log/slog"
)

// servePprof refuses: the robot profile leaves Go's profiler out
// (runtime/pprof, net/http/pprof and their profile encoder, 0.2 MB of the
// binary). A board whose memory must be profiled runs the full build.
func servePprof(context.Context, string, *slog.Logger) (func(), error) {
	return nil, fmt.Errorf("%s: the robot profile has no Go profiles; run the full build (scripts/cross-compile.sh --profile full)", pprofEnv)
}
