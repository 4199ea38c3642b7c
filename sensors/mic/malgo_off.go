//go:build !cgo

package mic

import (
	"errors"

	"github.com/edgeagent/edgeagent/clock"
)

// Without cgo there is no miniaudio: capture through source exec (e.g.
// arecord) instead.
func newMalgoSource(Opts, clock.Clock) (Source, error) {
	return nil, errors.New("source malgo needs a binary built with cgo; use source: exec with arecord, or rebuild with CGO_ENABLED=1")
}

// CaptureDevice is one capture device as miniaudio lists it.
type CaptureDevice struct {
	ID, Name  string
	IsDefault bool
	Formats   string
}

// ListCaptureDevices needs cgo.
func ListCaptureDevices([]string) ([]CaptureDevice, error) {
	return nil, errors.New("listing audio devices needs a binary built with cgo (try: arecord -l)")
}

const malgoAvailable = false
