// Package mqtt is the robot's control plane (DESIGN.md §7): commands and
// their replies (with the journal that runs each at most once), the e-stop
// topic, administration, the mqtt.publish skill, availability, and the
// CLI's Call. Its neighbours are packages of their own, which the plane
// wires together: events, telemetry and decisions are read from the world
// model's stream by package pump, Home Assistant discovery is worded by
// package hass, the embedded broker for boards without one is package
// broker, and what robots and their requesters agree on (fleet topics,
// info, resync, the Resender) is package fleetproto.
//
// Plane is a plugin of the node: it reaches the node through the small Host
// interface (this package may not import node), calls skills through the
// tool registry with caller "mqtt" (the fast path), hands text to the agent
// loop, and raises e-stops through Host.Raise so the node's critical
// handlers stop the actuators before anything else happens. See README.md
// for the topics and payloads.
package mqtt
