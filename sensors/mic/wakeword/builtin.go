package wakeword

import (
	"bytes"
	_ "embed"
	"fmt"
	"sync"
)

// builtinModel is the shipped "hey robot" model, trained with
// `edgeagent wakeword train --phrase "hey robot" --seed 1` (its training
// configuration and evaluation summary are in the file's header; the
// full report is docs/bench/wake-word.md).
//
//go:embed models/hey_robot.eaww
var builtinModel []byte

var builtin = sync.OnceValues(func() (*Net, error) {
	n, err := ReadNet(bytes.NewReader(builtinModel))
	if err != nil {
		return nil, fmt.Errorf("the built-in wake word model: %w", err)
	}
	return n, nil
})

// Builtin is the shipped "hey robot" model. It is parsed once; the Net is
// shared and must not be modified.
func Builtin() (*Net, error) { return builtin() }
