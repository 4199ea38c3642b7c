package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
)

// Administration is tools, like everything else the agent does: one
// command language, one permission model (the tool's permission against
// the caller's grants: the admin topic adds admin), one audit path. The
// plane carries {"id","tool":"tools.disable","params":{"tool":"pump.set"}}
// like any skill call. The ops of earlier versions are names for those
// tools, kept so that existing controllers keep working:
//
//	{"id":"1","op":"skills"}                                  tools.list
//	{"id":"2","op":"disable","params":{"tool":"pump.set"}}    tools.disable (also enable)
//	{"id":"3","op":"plugins"}                                 plugins.list
//	{"id":"4","op":"unload","params":{"plugin":"llm"}}        plugins.unload (also load)
//	{"id":"5","op":"stats","params":{"tool":"pan.set_angle"}} tools.stats
//	{"id":"6","op":"audit","params":{"limit":20}}             audit.query
//	{"id":"7","op":"reload","params":{"path":"rpi4.yaml"}}    config.reload
//	{"id":"8","op":"discovery","params":{"remove":true}}      mqtt.discovery
//	{"id":"9","op":"status"}                                  agent.status
var opTools = map[string]string{
	"skills": "tools.list", "enable": "tools.enable", "disable": "tools.disable",
	"plugins": "plugins.list", "load": "plugins.load", "unload": "plugins.unload",
	"stats": "tools.stats", "audit": "audit.query", "reload": "config.reload",
	"discovery": "mqtt.discovery", "status": "agent.status",
}

// opTool names the tool an op stands for.
func opTool(op string) (string, error) {
	if t, ok := opTools[op]; ok {
		return t, nil
	}
	ops := make([]string, 0, len(opTools))
	for o := range opTools {
		ops = append(ops, o)
	}
	slices.Sort(ops)
	return "", &RequestError{Code: CodeNotFound, Msg: fmt.Sprintf("unknown op %q (%s; or call any tool by name)", op, strings.Join(ops, ", "))}
}

// Tools are the plane's tools: mqtt.publish (a skill) and mqtt.discovery
// (administration).
func (p *Plane) Tools() []tools.Tool { return []tools.Tool{p.publishTool(), p.discoveryTool()} }

func (p *Plane) discoveryTool() tools.Tool {
	type args struct {
		Remove bool `json:"remove"`
	}
	return tools.Typed(tools.Spec{Name: "mqtt.discovery",
		Description: "Withdraw the robot from Home Assistant (remove: true) or announce it again (remove: false).",
		Permission:  "admin",
		Params:      json.RawMessage(`{"type":"object","properties":{"remove":{"type":"boolean","default":false}},"additionalProperties":false}`)},
		func(_ context.Context, a args) (tools.Result, error) {
			if p.topics.Discovery == "" {
				return tools.Result{}, &tools.Error{Code: tools.CodeNotFound, Msg: "Home Assistant discovery is disabled (mqtt.discovery.enabled)"}
			}
			rs := p.current()
			if rs == nil {
				return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: "MQTT is not running"}
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
			return tools.Result{Value: map[string]any{"topic": p.topics.DiscoveryConfig, "announced": !a.Remove}}, nil
		})
}

// AfterAct announces the device again when a plugin was loaded or
// unloaded, whoever asked: its skills may have come or gone.
func (p *Plane) AfterAct(_ context.Context, r hooks.ActionResult) {
	if r.Err != nil || (r.Action.Tool != "plugins.load" && r.Action.Tool != "plugins.unload") {
		return
	}
	if rs := p.current(); rs != nil {
		p.publishDiscovery(rs)
	}
}

// adminPolicy says whether requests on the admin topic are accepted, and
// in words who can make them: the start log says so, since whoever has
// admin can reload the config and reset an e-stop.
func (p *Plane) adminPolicy(embedded bool) (bool, string) {
	onCmd := ""
	if p.d.Tools.Permitted("mqtt", nil, "admin") {
		onCmd = "; and anyone who may publish to " + p.topics.Cmd + ", since permissions.mqtt grants admin"
	}
	switch {
	case embedded && len(p.cfg.Users) > 0:
		var admins []string
		for _, u := range p.cfg.Users {
			if u.Admin {
				admins = append(admins, u.Username)
			}
		}
		if len(admins) == 0 {
			return true, "nobody (no user in mqtt.users has admin: true)" + onCmd
		}
		return true, "the embedded broker's users with admin: true (" + strings.Join(admins, ", ") + ")" + onCmd
	case embedded && p.cfg.LocalAdmin:
		return true, "every process on this machine (embedded broker without users, mqtt.local_admin: true)" + onCmd
	case embedded:
		return false, "nobody: the admin topic is refused (the embedded broker has no users; set mqtt.local_admin: true to let every local process administer, or add mqtt.users with admin: true)" + onCmd
	case p.opts.TrustBrokerACL:
		return true, "whoever the external broker's ACL lets publish to " + p.topics.Admin + " (plugins.mqtt.trust_broker_acl)" + onCmd
	}
	return false, "nobody: the admin topic is refused, this broker's ACL is not ours to trust (set plugins.mqtt.trust_broker_acl if it restricts " + p.topics.Admin + ")" + onCmd
}

// refuseAdmin answers a request on the admin topic of a broker whose ACL
// we do not know: anyone may be able to publish there.
func (p *Plane) refuseAdmin(rs *runState, topic string, payload []byte) {
	id, replyTo := peekIDs(payload[:min(len(payload), MaxPayload)])
	_, who := p.adminPolicy(rs.broker != nil)
	p.rejectInput(rs, topic, &RequestError{ID: id, ReplyTo: replyTo, Code: CodeForbidden, Msg: "admin topic refused: " + who})
}
