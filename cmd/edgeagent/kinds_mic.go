package main

// The mic kind registers itself with the sensors registry from its init.
import _ "github.com/edgeagent/edgeagent/sensors/mic" // mic
