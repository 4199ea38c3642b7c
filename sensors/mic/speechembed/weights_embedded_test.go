//go:build !robot

package speechembed

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"unsafe"
)

// The built-in weights are read where the binary holds them, not copied
// to the heap (issue 32's anonymous-memory budget): every convolution's
// weights lie inside the embedded string.
func TestBuiltinWeightsAreNotCopied(t *testing.T) {
	f := mustNew(t)
	lo := uintptr(unsafe.Pointer(unsafe.StringData(builtin)))
	hi := lo + uintptr(len(builtin))
	for i, l := range f.layers {
		if l.w == nil {
			continue
		}
		if p := uintptr(unsafe.Pointer(&l.w[0])); p < lo || p >= hi {
			t.Fatalf("layer %d's weights were copied out of the binary's data", i)
		}
	}
}

// The digest a robot-profile binary looks for at the end of its weights
// file is the one the embedded file carries, and it is the file's:
// update WeightsSHA256 with the weights.
func TestWeightsDigest(t *testing.T) {
	body, carried := builtin[:len(builtin)-sha256.Size], builtin[len(builtin)-sha256.Size:]
	if got := hex.EncodeToString([]byte(carried)); got != WeightsSHA256 {
		t.Fatalf("%s carries sha256 %s; WeightsSHA256 says %s", modelPath, got, WeightsSHA256)
	}
	if sum := sha256.Sum256([]byte(body)); hex.EncodeToString(sum[:]) != WeightsSHA256 {
		t.Fatalf("%s carries a digest that is not its content's", modelPath)
	}
}
