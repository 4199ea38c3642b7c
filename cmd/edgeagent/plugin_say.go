package main

import _ "github.com/edgeagent/edgeagent/tools/say" // speaker.say, spoken replies (boards with plugins.say)
