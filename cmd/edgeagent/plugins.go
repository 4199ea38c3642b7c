package main

// Compiled-in plugins register themselves with the plugin registry from
// their init; the node builds those that apply to the board.
import (
	_ "github.com/edgeagent/edgeagent/dashboard"        // the web dashboard (boards with a dashboard: section)
	_ "github.com/edgeagent/edgeagent/plugin/actuators" // actuator skills, e-stop, audit
	_ "github.com/edgeagent/edgeagent/plugin/engine"    // llm / matcher decision engine
	_ "github.com/edgeagent/edgeagent/plugin/mqttplane" // MQTT control plane
	_ "github.com/edgeagent/edgeagent/record"           // recorder (MCAP), record.start/stop
	_ "github.com/edgeagent/edgeagent/tools/say"        // speaker.say, spoken replies (boards with plugins.say)
	_ "github.com/edgeagent/edgeagent/tools/snapshot"   // camera.snapshot (boards with a camera)
	_ "github.com/edgeagent/edgeagent/tools/vision"     // camera.describe (a camera and llm.vision_model)
)
