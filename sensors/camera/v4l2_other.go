//go:build !linux

package camera

import "errors"

func defaultV4L2(Opts) (Source, error) {
	return nil, asConfigError(errors.New("source v4l2 needs Linux"))
}
