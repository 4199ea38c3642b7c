package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// publishTool is the mqtt_publish skill ("mqtt.publish"): publish a message
// to a topic the board allows (mqtt.publish_allow, MQTT wildcards allowed;
// empty: nowhere). The agent's own input topics are refused whatever the
// allowlist says, so a skill call cannot become a command, an admin request
// or a fake status.
func (p *Plane) publishTool() tools.Tool {
	spec := tools.Spec{
		Name: "mqtt.publish",
		Description: "Publish a message on MQTT, for example a notification or a note for another system. " +
			"Only topics allowed by the board's mqtt.publish_allow are accepted.",
		Permission: "publish",
		Scenarios:  []string{"interaction", "maintenance"},
		Params: json.RawMessage(`{
  "type": "object",
  "properties": {
    "topic": {"type": "string", "minLength": 1, "maxLength": 256, "description": "topic name, no wildcards; must match mqtt.publish_allow"},
    "payload": {"description": "a string is published as is, anything else as JSON"},
    "retain": {"type": "boolean", "default": false},
    "qos": {"type": "integer", "enum": [0, 1], "default": 0}
  },
  "required": ["topic", "payload"],
  "additionalProperties": false
}`),
	}
	type params struct {
		Topic   string          `json:"topic"`
		Payload json.RawMessage `json:"payload"`
		Retain  bool            `json:"retain"`
		QoS     byte            `json:"qos"`
	}
	return tools.Typed(spec, func(_ context.Context, a params) (tools.Result, error) {
		if err := checkTopicName(a.Topic); err != nil {
			return tools.Result{}, err
		}
		if slices.Contains(p.topics.inputs(), a.Topic) || slices.Contains(p.fleet.Inputs(), a.Topic) {
			return tools.Result{}, fmt.Errorf("%s is one of the agent's own control topics", a.Topic)
		}
		if !slices.ContainsFunc(p.cfg.PublishAllow, func(f string) bool { return matchFilter(f, a.Topic) }) {
			allowed := "none (mqtt.publish_allow is empty)"
			if len(p.cfg.PublishAllow) > 0 {
				allowed = strings.Join(p.cfg.PublishAllow, ", ")
			}
			return tools.Result{}, fmt.Errorf("topic %s is not allowed; allowed: %s", a.Topic, allowed)
		}
		payload := []byte(a.Payload)
		var s string
		if json.Unmarshal(a.Payload, &s) == nil {
			payload = []byte(s)
		}
		if len(payload) > MaxPayload {
			return tools.Result{}, fmt.Errorf("payload is %d bytes; the limit is %d", len(payload), MaxPayload)
		}
		queued, err := p.publish(a.Topic, payload, a.QoS, a.Retain)
		if err != nil {
			return tools.Result{}, err
		}
		res := tools.Result{Value: map[string]any{"topic": a.Topic, "bytes": len(payload), "queued": queued}}
		if queued {
			res.Notes = append(res.Notes, "not connected: queued until the broker is back")
		}
		return res, nil
	})
}
