package main

import _ "github.com/edgeagent/edgeagent/plugin/mqttplane" // MQTT control plane
