package waittest

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceTrue(t *testing.T) {
	var done atomic.Bool
	time.AfterFunc(20*time.Millisecond, func() { done.Store(true) })
	For(t, "the flag", done.Load)
	if !done.Load() {
		t.Fatal("returned before the condition held")
	}
}
