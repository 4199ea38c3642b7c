//go:build !linux

package browsertest

import (
	"os/exec"
	"testing"
)

// ownGroup and endGroup keep the browser's child processes together on
// Linux (group_linux.go); elsewhere chromedp's own handling stands.
func ownGroup(*exec.Cmd)       {}
func endGroup(testing.TB, int) {}
