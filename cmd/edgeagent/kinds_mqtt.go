package main

// The mqtt kind (topics on a broker as sensors) registers itself with the
// sensors registry from its init.
import _ "github.com/edgeagent/edgeagent/sensors/mqttsub" // mqtt
