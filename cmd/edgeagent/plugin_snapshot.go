package main

import _ "github.com/edgeagent/edgeagent/tools/snapshot" // camera.snapshot (boards with a camera)
