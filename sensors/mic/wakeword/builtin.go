package wakeword

import (
	"fmt"
	"sync"
)

// The shipped "hey robot" head over the speech frontend, trained with
// `edgeagent wakeword train --phrase "hey robot" --seed 1` (its recipe and
// validation are in the file's header; how it does on voices it never
// heard: docs/bench/wake-word.md). Its weights are read where they lie:
// in the full build's read-only data (head_embedded.go), or mapped from
// beside a robot-profile binary (head_beside.go, which keeps 0.39 MB out
// of the binary its size budget counts).
const (
	// HeadFile is the head file's name, in models/ and beside a
	// robot-profile binary (internal/datafile).
	HeadFile = "hey_robot.eawh"
	// HeadSHA256 is its digest, which a robot-profile binary checks
	// before it uses the file beside it (TestHeadDigest keeps it current).
	HeadSHA256 = "07f5d1021270218be1af3b260308a7b36f405dce654d422908adc71b6e41ec12"
)

var builtin = sync.OnceValues(func() (*Head, error) {
	b, err := builtinHeadBytes()
	if err != nil {
		return nil, fmt.Errorf("the built-in wake word head: %w", err)
	}
	h, err := decodeHead(b)
	if err != nil {
		return nil, fmt.Errorf("the built-in wake word head: %w", err)
	}
	return h, nil
})

// Builtin is the shipped "hey robot" head. It is parsed once; the Head is
// shared and read-only.
func Builtin() (*Head, error) { return builtin() }
