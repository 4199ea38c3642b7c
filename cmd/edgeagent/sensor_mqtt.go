package main

import _ "github.com/edgeagent/edgeagent/sensors/mqttsub" // mqtt (topics on a broker as sensors)
