// Package lograte lets a log line through at most once a second, so that a
// flood of bad input or a peer that is down cannot fill a Pi's SD card.
package lograte

import (
	"sync/atomic"
	"time"
)

// Limit is one rate-limited log line; the zero value lets the first through.
type Limit struct{ last atomic.Int64 }

// Allow reports whether the line may be logged at t: a second or more
// after the last one let through. Safe for concurrent use.
func (r *Limit) Allow(t time.Time) bool {
	now := t.UnixNano()
	last := r.last.Load()
	return now-last >= int64(time.Second) && r.last.CompareAndSwap(last, now)
}
