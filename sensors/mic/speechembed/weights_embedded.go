//go:build !robot

package speechembed

import (
	_ "embed" // the weights
	"unsafe"
)

// builtin is the model file, embedded: as a string its bytes stay in the
// executable's read-only data.
//
//go:embed weights/speech_embedding.bin
var builtin string

// builtinWeights is a view of the string's bytes, not a copy: nothing
// writes to it (writing would fault: the pages are read-only).
func builtinWeights() ([]byte, error) {
	return unsafe.Slice(unsafe.StringData(builtin), len(builtin)), nil
}
