package mqtt

import (
	"context"
	"fmt"

	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/tools"
)

// Administration over MQTT. An op needs the admin permission: requests on
// the admin topic have it (the embedded broker lets only admin users
// publish there), requests on cmd have it when permissions.mqtt grants it.
//
//	{"id":"1","op":"skills"}                                  skills with their schemas and whether enabled
//	{"id":"2","op":"disable","params":{"tool":"pump.set"}}    also "enable"; remembered in the store
//	{"id":"3","op":"plugins"}                                 compiled-in plugins, loaded or not
//	{"id":"4","op":"unload","params":{"plugin":"llm"}}        also "load"
//	{"id":"5","op":"stats","params":{"tool":"pan.set_angle"}} call statistics (all tools without "tool")
//	{"id":"6","op":"audit","params":{"limit":20}}             the audit log (the actuators' audit.query)
//	{"id":"7","op":"reload","params":{"path":"rpi4.yaml"}}    or {"yaml":"…"}: validate, then rebuild the node (path: in the board's directory)
//	{"id":"8","op":"discovery","params":{"remove":true}}      withdraw (or re-announce) Home Assistant discovery
//	{"id":"9","op":"status"}                                  agent.status
//
// Tool calls on the admin topic run with the admin grant too (estop.reset).
func (p *Plane) adminOp(ctx context.Context, rs *runState, cmd Command, grants []string) (any, error) {
	if !p.d.Tools.Permitted("mqtt", grants, "admin") {
		return nil, &tools.Error{Code: tools.CodeForbidden, Msg: fmt.Sprintf("op %q needs the admin permission: use %s (admin users) or grant admin in permissions.mqtt", cmd.Op, p.topics.Admin)}
	}
	switch cmd.Op {
	case "skills":
		if err := opParams(cmd, &struct{}{}); err != nil {
			return nil, err
		}
		type skill struct {
			tools.Spec
			Enabled bool `json:"enabled"`
		}
		var out []skill
		for _, s := range p.d.Tools.List() {
			if !s.Internal {
				out = append(out, skill{s, p.d.Tools.Enabled(s.Name)})
			}
		}
		return out, nil

	case "enable", "disable":
		var a struct {
			Tool string `json:"tool"`
		}
		if err := opParams(cmd, &a); err != nil {
			return nil, err
		}
		spec, err := p.d.Tools.Resolve(a.Tool)
		if err != nil {
			return nil, err
		}
		on := cmd.Op == "enable"
		if err := p.d.Tools.SetEnabled(spec.Name, on); err != nil {
			return nil, err
		}
		p.log.Info("tool "+cmd.Op+"d over MQTT", "tool", spec.Name)
		return map[string]any{"tool": spec.Name, "enabled": on}, nil

	case "plugins":
		return p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: "plugins.list", Params: cmd.Params})

	case "load", "unload":
		var a struct {
			Plugin string `json:"plugin"`
		}
		if err := opParams(cmd, &a); err != nil {
			return nil, err
		}
		if a.Plugin == "mqtt" {
			return nil, &RequestError{Code: CodeRefused, Msg: "the mqtt plugin cannot be loaded or unloaded over MQTT: this connection is part of it"}
		}
		res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: "plugins." + cmd.Op, Params: cmd.Params})
		if err == nil {
			if rs := p.current(); rs != nil {
				p.publishDiscovery(rs) // its skills may have come or gone
			}
		}
		return res, err

	case "stats":
		return p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: "tools.stats", Params: cmd.Params})

	case "audit":
		res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: "audit.query", Params: cmd.Params})
		if tools.CodeOf(err) == tools.CodeNotFound {
			return nil, &RequestError{Code: CodeNotFound, Msg: "no audit log here: audit.query comes with the actuators plugin, which is not loaded"}
		}
		return res, err

	case "reload":
		return p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: "config.reload", Params: cmd.Params})

	case "discovery":
		var a struct {
			Remove bool `json:"remove"`
		}
		if err := opParams(cmd, &a); err != nil {
			return nil, err
		}
		if p.topics.Discovery == "" {
			return nil, &RequestError{Code: CodeNotFound, Msg: "Home Assistant discovery is disabled (mqtt.discovery.enabled)"}
		}
		rs.discMu.Lock()
		rs.discRemoved = a.Remove
		rs.discMu.Unlock()
		if a.Remove {
			// An empty retained config removes the device from Home Assistant.
			rs.conn.publish(message{topic: p.topics.DiscoveryConfig, qos: 1, retain: true})
		} else {
			p.publishDiscovery(rs)
		}
		return map[string]any{"topic": p.topics.DiscoveryConfig, "announced": !a.Remove}, nil

	case "status":
		if err := opParams(cmd, &struct{}{}); err != nil {
			return nil, err
		}
		return p.d.Agent.Status(), nil
	}
	return nil, &RequestError{Code: CodeNotFound, Msg: fmt.Sprintf("unknown op %q (skills, enable, disable, plugins, load, unload, stats, audit, reload, discovery, status)", cmd.Op)}
}

// opParams decodes an op's params strictly: a typo is an error, not a
// silently ignored setting.
func opParams(cmd Command, v any) error {
	if len(cmd.Params) == 0 {
		return nil
	}
	if err := strictjson.Decode(cmd.Params, v); err != nil {
		return badRequest(cmd.ID, "", "op %s: params: %v", cmd.Op, err)
	}
	return nil
}
