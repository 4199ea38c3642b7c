package main

import _ "github.com/edgeagent/edgeagent/dashboard" // the web dashboard (boards with a dashboard: section)
