//go:build !robot

package main

// profile is the build profile of this binary: full (the default build)
// holds everything, the workstation's tools too.
const profile = "full"
