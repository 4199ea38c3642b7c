package mqtt

import (
	"runtime/debug"

	"github.com/edgeagent/edgeagent/mqtt/hass"
)

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// publishDiscovery announces the device to Home Assistant (package hass
// words it), unless discovery is off or was withdrawn on request. It runs
// on connect, when Home Assistant comes online, and when the set of
// entities changes.
func (p *Plane) publishDiscovery(rs *runState) {
	if p.topics.Discovery == "" {
		return
	}
	rs.discMu.Lock()
	defer rs.discMu.Unlock()
	if rs.discRemoved {
		return
	}
	t := p.topics
	numeric, motion := rs.pump.Entities()
	data, err := hass.Payload(hass.Input{
		Device: p.cfg.Device, Version: version(), QoS: int(p.cfg.QoS), Tools: p.d.Tools.List(),
		Topics:  hass.Topics{Cmd: t.Cmd, Estop: t.Estop, Status: t.Status, State: t.State, Telemetry: t.Telemetry},
		Numeric: numeric, Motion: motion,
	})
	if err != nil {
		p.log.Error("discovery payload", "err", err)
		return
	}
	rs.conn.publish(message{topic: p.topics.DiscoveryConfig, payload: data, qos: 1, retain: true})
}
