package main

import (
	"fmt"
	"os"

	"github.com/edgeagent/edgeagent/node"
)

// recordTo makes the node's recorder record the whole run into path
// (`run --record FILE`). The file must not exist: a recording is never
// overwritten.
func recordTo(n *node.Node, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("--record %s: the file exists; a recording is never overwritten", path)
	}
	rec, ok := node.Find[interface{ RecordFile(path string) }](n)
	if !ok {
		return fmt.Errorf("--record: the recorder plugin is not loaded")
	}
	rec.RecordFile(path)
	return nil
}
