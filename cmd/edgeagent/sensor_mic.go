package main

import _ "github.com/edgeagent/edgeagent/sensors/mic" // mic
