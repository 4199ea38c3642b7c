// Package waittest is the tests' wait for a condition that another
// goroutine (a broker, a client, a plane) makes true: poll it briefly, and
// fail the test saying what was awaited when it does not come.
package waittest

import (
	"testing"
	"time"
)

// Limit is how long For waits: generous, since a loaded CI machine is slow.
const Limit = 5 * time.Second

// For waits until cond holds, polling every 2 ms, and fails t with what
// after Limit.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
