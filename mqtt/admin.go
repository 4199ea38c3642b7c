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
