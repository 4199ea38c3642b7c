package main

import _ "github.com/edgeagent/edgeagent/record" // recorder (MCAP), record.start/stop
