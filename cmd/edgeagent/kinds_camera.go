package main

// The camera kind registers itself with the sensors registry from its init,
// and the camera.snapshot skill as a compiled-in plugin (loaded on boards
// that have a camera).
import (
	_ "github.com/edgeagent/edgeagent/sensors/camera"          // camera
	_ "github.com/edgeagent/edgeagent/sensors/camera/snapshot" // camera.snapshot
)
