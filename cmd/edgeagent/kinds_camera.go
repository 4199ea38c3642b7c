package main

// The camera kind registers itself with the sensors registry from its init.
import _ "github.com/edgeagent/edgeagent/sensors/camera" // camera
