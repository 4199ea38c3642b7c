// Package mqtt is the robot's control plane (DESIGN.md §7): commands and
// their replies, the e-stop topic, events, telemetry, decisions (read from
// the world model's stream by package pump) and availability, Home
// Assistant device discovery (worded by package hass),
// administration, the mqtt.publish skill, and an embedded broker for boards
// without one (package broker, which the plane starts and stops).
//
// Plane is a plugin of the node: it reaches the node through the small Host
// interface (this package may not import node), calls skills through the
// tool registry with caller "mqtt" (the fast path), hands text to the agent
// loop, and raises e-stops through Host.Raise so the node's critical
// handlers stop the actuators before anything else happens. See README.md
// for the topics and payloads.
package mqtt
