// Package periphhost loads periph.io's host drivers once per process, for
// every sensor kind that talks to a bus or a pin through periph (I2C, GPIO).
package periphhost

import (
	"fmt"
	"log/slog"
	"sync"

	"periph.io/x/host/v3"
)

var (
	hostOnce sync.Once
	hostErr  error
)

// Init loads periph's host drivers once per process and logs which
// loaded, which were skipped (not this hardware) and which failed (often a
// permission problem: the user is not in the i2c or gpio group).
func Init() error {
	hostOnce.Do(func() {
		st, err := host.Init()
		if err != nil {
			hostErr = fmt.Errorf("periph host init: %w", err)
			slog.Error("periph host init failed", "err", err)
			return
		}
		for _, d := range st.Loaded {
			slog.Info("periph host driver loaded", "driver", d.String())
		}
		for _, d := range st.Skipped {
			slog.Debug("periph host driver skipped", "driver", d.D.String(), "reason", d.Err)
		}
		for _, d := range st.Failed {
			slog.Warn("periph host driver failed", "driver", d.D.String(), "err", d.Err)
		}
	})
	return hostErr
}
