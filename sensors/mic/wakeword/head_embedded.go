//go:build !robot

package wakeword

import (
	_ "embed" // the head
	"unsafe"
)

// builtinHead is the head file, embedded. A string, not a []byte: its
// bytes lie in the binary's read-only data, where the weights are read
// in place.
//
//go:embed models/hey_robot.eawh
var builtinHead string

func builtinHeadBytes() ([]byte, error) {
	return unsafe.Slice(unsafe.StringData(builtinHead), len(builtinHead)), nil
}
