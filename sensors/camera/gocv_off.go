//go:build !gocv

package camera

import (
	"context"
	"errors"

	"github.com/edgeagent/edgeagent/clock"
)

// Built without the gocv tag, the OpenCV backend is absent: that keeps
// CGO_ENABLED=0 builds working.
const gocvBuilt = false

func openGoCV(context.Context, Opts, clock.Clock) (Source, error) {
	return nil, asConfigError(errors.New("source gocv: this binary was built without -tags gocv (OpenCV)"))
}
