package main

import _ "github.com/edgeagent/edgeagent/plugin/adminsock" // local admin socket (the CLI on the robot)
