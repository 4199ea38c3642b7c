package main

import _ "github.com/edgeagent/edgeagent/plugin/snapshot" // camera.snapshot (boards with a camera)
