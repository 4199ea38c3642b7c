//go:build !robot

package wakeword

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// The digest a robot-profile binary checks its head file against is the
// embedded file's: update HeadSHA256 with the head.
func TestHeadDigest(t *testing.T) {
	if sum := sha256.Sum256([]byte(builtinHead)); hex.EncodeToString(sum[:]) != HeadSHA256 {
		t.Fatalf("models/%s has sha256 %x; HeadSHA256 says %s", HeadFile, sum, HeadSHA256)
	}
}
