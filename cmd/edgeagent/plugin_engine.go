package main

import _ "github.com/edgeagent/edgeagent/plugin/engine" // llm / matcher decision engine
