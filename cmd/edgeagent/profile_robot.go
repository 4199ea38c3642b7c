//go:build robot

package main

// profile is the build profile of this binary: robot (-tags robot, what
// scripts/cross-compile.sh builds by default) leaves out the files under
// //go:build !robot, the tools that run on a workstation (training, the
// decision benchmark, the motion bench, replays).
const profile = "robot"
