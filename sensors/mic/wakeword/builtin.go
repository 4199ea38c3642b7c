package wakeword

import (
	_ "embed"
	"fmt"
	"sync"
	"unsafe"
)

// builtinHead is the shipped "hey robot" head over the speech frontend,
// trained with `edgeagent wakeword train --phrase "hey robot" --seed 1`
// (its recipe and validation are in the file's header; how it does on
// voices it never heard: docs/bench/wake-word.md).
//
// A string, not a []byte: its bytes lie in the binary's read-only data,
// where the head's weights are read in place.
//
//go:embed models/hey_robot.eawh
var builtinHead string

var builtin = sync.OnceValues(func() (*Head, error) {
	h, err := decodeHead(unsafe.Slice(unsafe.StringData(builtinHead), len(builtinHead)))
	if err != nil {
		return nil, fmt.Errorf("the built-in wake word head: %w", err)
	}
	return h, nil
})

// Builtin is the shipped "hey robot" head. It is parsed once; the Head is
// shared and read-only.
func Builtin() (*Head, error) { return builtin() }
