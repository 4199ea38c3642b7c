//go:build !linux

package camera

import (
	"errors"

	"github.com/edgeagent/edgeagent/clock"
)

func defaultV4L2(Opts, clock.Clock) (Source, error) {
	return nil, asConfigError(errors.New("source v4l2 needs Linux"))
}
