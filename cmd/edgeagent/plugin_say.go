package main

import _ "github.com/edgeagent/edgeagent/plugin/say" // speaker.say, spoken replies (boards with plugins.say)
