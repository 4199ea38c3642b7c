package mqtt

import (
	"unicode/utf8"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// estopAction is what a message on the e-stop topic asks for.
type estopAction int

const (
	estopIgnore  estopAction = iota // empty (a retained e-stop cleared) or retained
	estopTrigger                    // anything else that is not a reset
	estopReset                      // {"reset":true}, strictly decoded
)

// estopRequest is a message on the e-stop topic, read.
type estopRequest struct {
	action      estopAction
	id, replyTo string // of a reset
}

// readEstop decides what a message on the e-stop topic means. Any
// non-empty payload triggers, so that a panicking controller needs no
// syntax; {"reset":true} asks for estop.reset. An empty payload never
// triggers: it is how a retained e-stop is cleared, and a clear published
// while the agent was away reaches its persistent session as a plain (not
// retained) empty message. A retained message is history replayed on
// subscribe, not a request: acting on it would re-latch after every
// reconnect. A payload with a duplicate key is not a reset: it triggers,
// as anything that is not a well-formed reset does.
func readEstop(payload []byte, retained bool) estopRequest {
	if len(payload) == 0 || retained {
		return estopRequest{action: estopIgnore}
	}
	var req struct {
		Reset   bool   `json:"reset"`
		ID      string `json:"id"`
		ReplyTo string `json:"reply_to"`
	}
	if len(payload) <= MaxPayload && strictjson.Unmarshal(payload, &req) == nil && req.Reset {
		return estopRequest{action: estopReset, id: req.ID, replyTo: req.ReplyTo}
	}
	return estopRequest{action: estopTrigger}
}

// onEstop triggers the e-stop at once and synchronously (the node's
// critical handlers stop the actuators before it returns), or runs a reset
// with the mqtt caller's permissions.
func (p *Plane) onEstop(rs *runState, msg paho.Message) {
	payload := msg.Payload()
	req := readEstop(payload, msg.Retained())
	switch req.action {
	case estopIgnore:
		if len(payload) == 0 {
			p.log.Info("empty message on the e-stop topic: a retained e-stop cleared; nothing triggered", "topic", msg.Topic(), "retained", msg.Retained())
		} else {
			p.log.Warn("ignoring a retained message on the e-stop topic (clear it: publish an empty retained message)", "topic", msg.Topic())
		}
	case estopReset:
		replyTo := p.topics.Reply
		if req.replyTo != "" && p.topics.checkReplyTo(req.replyTo) == nil {
			replyTo = req.replyTo
		}
		ctx, cancel := clock.WithTimeout(rs.ctx, p.d.Clock, p.opts.CommandTimeout)
		defer cancel()
		res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "estop.reset"})
		if err != nil {
			p.log.Warn("e-stop reset over MQTT refused", "err", err)
		}
		p.sendReply(rs, replyTo, replyFor(req.id, res, err))
	default:
		p.triggerEstop(payload, len(payload))
	}
}

// triggerEstop raises the critical e-stop event for a message of size
// bytes (the packet's, for one the broker refused) whose payload, or the
// head of it, is payload; a short text one is quoted, for the operator
// who typed it.
func (p *Plane) triggerEstop(payload []byte, size int) {
	data := map[string]any{"bytes": size}
	if size <= 64 && utf8.Valid(payload) {
		data["payload"] = string(payload)
	}
	p.d.Host.Raise(worldmodel.Event{Kind: "estop", Source: "mqtt", Priority: worldmodel.Critical,
		Message: "e-stop requested over MQTT", Data: data})
}
