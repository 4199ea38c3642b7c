package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
)

// The inbound path of commands. paho hands each message to the router in
// a goroutine of its own; the router decodes it, answers duplicates from
// the journal and puts the rest in a bounded queue that max_inflight
// workers take commands from. When the queue is full the command is
// answered busy at once (and counted): nothing waits unbounded, nothing is
// acknowledged and then forgotten. A queued command is acknowledged only
// after its reply is durable in the journal, so the messages the broker
// holds for us unacknowledged stay below queue + max_inflight (well below
// the embedded broker's inflight limit, beyond which it would drop).

// job is one command waiting for a worker.
type job struct {
	cmd     Command
	hash    uint64
	replyTo string
	grants  []string
	via     *tools.Via // a fleet or group command's mark
	msg     paho.Message
	durable <-chan struct{} // closed once the journal holds the id
}

// inboundStats are the command counters of agent.status.
type inboundStats struct {
	commands    atomic.Uint64 // run
	busy        atomic.Uint64 // refused: queue full
	duplicates  atomic.Uint64 // answered from the journal, not run again
	interrupted atomic.Uint64 // redelivered after the agent died running them
}

// onCommand handles one request on the cmd, admin or a fleet topic. It
// reports whether the message was queued: then the worker acknowledges it.
func (p *Plane) onCommand(rs *runState, msg paho.Message, src source) (queued bool) {
	payload := msg.Payload()
	if msg.Retained() {
		p.log.Warn("ignoring a retained command (replayed on subscribe, not sent now)", "topic", msg.Topic())
		return false
	}
	if len(payload) == 0 {
		// What clearing a retained message leaves in a persistent session.
		p.log.Debug("ignoring an empty message (a retained command cleared)", "topic", msg.Topic())
		return false
	}
	cmd, err := DecodeCommand(payload)
	if err != nil {
		p.rejectInput(rs, msg.Topic(), err)
		return false
	}
	replyTo := p.topics.Reply
	if cmd.ReplyTo != "" {
		if err := p.topics.checkReplyTo(cmd.ReplyTo); err != nil {
			p.rejectInput(rs, msg.Topic(), &RequestError{ID: cmd.ID, Code: CodeInvalid, Msg: err.Error()})
			return false
		}
		replyTo = cmd.ReplyTo
	}
	if src.via != nil {
		if err := p.fleetAllows(cmd); err != nil {
			p.rejectInput(rs, msg.Topic(), err)
			return false
		}
	}
	j := &job{cmd: cmd, hash: payloadHash(payload), replyTo: replyTo, via: src.via, msg: msg}
	if src.admin {
		j.grants = []string{"admin"}
	}
	// A duplicate is answered before anything else: it takes no place.
	if v, reply := rs.journal.lookup(cmd.ID, j.hash); v != fresh {
		p.answerKnown(rs, j, v, reply)
		return false
	}
	// A place in the queue is taken before the id is journalled, so that
	// a command refused busy never enters the duplicate window.
	select {
	case rs.slots <- struct{}{}:
	default:
		p.refuseBusy(rs, cmd.ID, replyTo)
		return false
	}
	// The id is journalled here rather than by the worker, so that one
	// store write covers everything that queued meanwhile.
	v, reply, durable := rs.journal.begin(cmd.ID, j.hash)
	if v != fresh { // the same command arrived twice at once
		<-rs.slots
		p.answerKnown(rs, j, v, reply)
		return false
	}
	j.durable = durable
	rs.queue <- j // never blocks: the slot is taken
	return true
}

// refuseBusy answers a command the queue has no place for, and counts it.
func (p *Plane) refuseBusy(rs *runState, id, replyTo string) {
	n := p.in.busy.Add(1)
	if n == 1 || p.busyLog.Allow(p.d.Clock.Now()) {
		p.log.Warn("command queue full: commands answered busy", "queue", cap(rs.queue), "busy_total", n)
	}
	p.sendReply(rs, replyTo, replyFor(id, nil, &RequestError{Code: CodeBusy,
		Msg: fmt.Sprintf("busy: %d commands queued and %d running; send it again later", cap(rs.queue), p.opts.MaxInflight)}))
}

// answerKnown answers a command whose id the journal knows.
func (p *Plane) answerKnown(rs *runState, j *job, v verdict, reply []byte) {
	switch v {
	case replay:
		p.in.duplicates.Add(1)
		if reply == nil { // too long to keep, or the store failed to read it
			r := replyFor(j.cmd.ID, map[string]any{"duplicate": true,
				"note": "this command ran once already; its result was not kept (too long, or the store could not read it)"}, nil)
			p.sendReply(rs, j.replyTo, r)
			return
		}
		rs.conn.publish(message{topic: j.replyTo, payload: reply, qos: byte(p.cfg.QoS)})
	case running:
		p.in.duplicates.Add(1) // its reply is on the way
	case interrupted:
		p.in.interrupted.Add(1)
		p.sendReply(rs, j.replyTo, replyFor(j.cmd.ID, nil, &RequestError{Code: tools.CodeFailed,
			Msg: "interrupted: the agent stopped while running this command, which may or may not have taken effect; it is not run again (check the state, then send it with a new id)"}))
	case reused:
		p.rejectInput(rs, j.msg.Topic(), &RequestError{ID: j.cmd.ID, ReplyTo: j.cmd.ReplyTo, Code: CodeInvalid,
			Msg: fmt.Sprintf("id %q was used recently for a different command: ids must be unique", j.cmd.ID)})
	}
}

// startWorkers starts the workers of a run; they end with rs.ctx.
func (p *Plane) startWorkers(rs *runState) {
	rs.workers.Add(p.opts.MaxInflight)
	for range p.opts.MaxInflight {
		go func() {
			defer rs.workers.Done()
			for {
				select {
				case j := <-rs.queue:
					<-rs.slots
					p.runJob(rs, j)
				case <-rs.ctx.Done():
					return
				}
			}
		}()
	}
}

// runJob runs one queued command once its id is durably in the journal,
// answers it, and has the journal acknowledge it once the reply is kept.
// A command left in the queue when the plane stops is neither run nor
// acknowledged, and its id is forgotten: the broker hands it to the next
// session, which runs it.
func (p *Plane) runJob(rs *runState, j *job) {
	if rs.ctx.Err() != nil {
		rs.journal.forget(j.cmd.ID, j.hash)
		return
	}
	select {
	case <-j.durable: // the writer flushes until every worker has returned
	case <-rs.ctx.Done():
		// The plane stops before the id is durable: the command has not
		// run and now will not, as if still queued. Waiting on would hold
		// the stop for a store write (1.4-4.4 s with -race at load 20,
		// past the node's 2 s) only to run it with a cancelled context.
		rs.journal.forget(j.cmd.ID, j.hash)
		return
	}
	p.in.commands.Add(1)
	r := p.execute(rs.ctx, j)
	data := p.sendReply(rs, j.replyTo, r)
	// Refused before it ran (its params, a busy agent): not kept, so a
	// resend runs and refusals never push out the ids of commands that ran.
	ran := r.Code != CodeInvalid && r.Code != CodeBusy
	rs.journal.finish(j.cmd.ID, j.hash, data, ran, func() { rs.ack(j.msg) })
}

// execute runs a decoded command.
func (p *Plane) execute(ctx context.Context, j *job) Reply {
	ctx, cancel := clock.WithTimeout(ctx, p.d.Clock, p.opts.CommandTimeout)
	defer cancel()
	cmd := j.cmd
	if cmd.Text != "" {
		return p.textCommand(ctx, j)
	}
	tool := cmd.Tool
	if cmd.Op != "" {
		var err error
		if tool, err = opTool(cmd.Op); err != nil {
			return replyFor(cmd.ID, nil, err)
		}
	}
	res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: j.grants, Tool: tool, Params: cmd.Params, Via: j.via})
	return replyFor(cmd.ID, res, err)
}

// textCommand hands a sentence to the agent loop (the decision engine when
// there is one) and reports the outcome; a failed step fails the reply.
func (p *Plane) textCommand(ctx context.Context, j *job) Reply {
	cmd := j.cmd
	out, err := p.d.Agent.Submit(ctx, agent.Command{ID: cmd.ID, Caller: "mqtt", Grants: j.grants, Text: cmd.Text, Speak: cmd.Speak, Via: j.via})
	if err != nil {
		r := replyFor(cmd.ID, nil, err)
		if out.Decision != nil || len(out.Steps) > 0 {
			r.Result = out
		}
		return r
	}
	for _, s := range out.Steps {
		if !s.OK() {
			r := replyFor(cmd.ID, nil, &RequestError{Code: s.Code, Msg: fmt.Sprintf("step %s (%s): %s", s.ID, s.Tool, s.Error)})
			r.Result = out
			return r
		}
	}
	return replyFor(cmd.ID, out, nil)
}

func (p *Plane) sendReply(rs *runState, topic string, r Reply) []byte {
	r.Robot = p.cfg.DeviceID
	data, err := json.Marshal(r)
	if err != nil {
		// A tool returned something JSON cannot carry: say so instead.
		data, _ = json.Marshal(replyFor(deref(r.ID), nil, fmt.Errorf("result is not JSON-encodable: %v", err)))
	}
	rs.conn.publish(message{topic: topic, payload: data, qos: byte(p.cfg.QoS)})
	return data
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// rejectInput answers bad input: an error reply carrying the id when one
// could be read (to the default reply topic when reply_to was the problem),
// and a rate-limited log line.
func (p *Plane) rejectInput(rs *runState, topic string, err error) {
	p.badInput.Add(1)
	re := &RequestError{Code: CodeInvalid, Msg: err.Error()}
	errors.As(err, &re)
	if p.logLimit.Allow(p.d.Clock.Now()) {
		p.log.Warn("bad MQTT input", "topic", topic, "id", re.ID, "err", re.Msg)
	}
	replyTo := p.topics.Reply
	if re.ReplyTo != "" && p.topics.checkReplyTo(re.ReplyTo) == nil {
		replyTo = re.ReplyTo
	}
	p.sendReply(rs, replyTo, replyFor(re.ID, nil, re))
}

// onOversized answers a command the embedded broker refused for its size,
// from the head it read of it (sizeTap), as one read whole would be: too
// large, with its id when the head has one, counted and logged. It says
// whether the topic takes commands; the broker logs the others.
//
// One on the e-stop topic triggers it, as any non-empty message there
// does (readEstop): whoever sent it wanted the robot stopped, and a
// refused packet is never stored, so it cannot be a retained one replayed.
func (p *Plane) onOversized(rs *runState, topic string, head []byte, size int) bool {
	if topic == p.topics.Estop {
		p.log.Warn("e-stop over the broker's packet limit: triggered all the same", "topic", topic, "bytes", size)
		p.triggerEstop(head, size)
		return true
	}
	if !p.takesCommands(topic) || !rs.handlers.enter() {
		return false
	}
	defer rs.handlers.leave()
	if topic == p.topics.Admin && !rs.admin {
		p.refuseAdmin(rs, topic, head)
	} else {
		p.rejectInput(rs, topic, tooLarge(head, size))
	}
	return true
}

// stopWorkers waits for the running commands, up to ctx, then writes the
// journal's last batch (their replies, their acknowledgements).
func (rs *runState) stopWorkers(ctx context.Context) error {
	err := rs.workers.Wait(ctx)
	if err != nil {
		err = fmt.Errorf("mqtt: commands still running at stop: %w", err)
	}
	for {
		select {
		case j := <-rs.queue:
			<-rs.slots
			rs.journal.forget(j.cmd.ID, j.hash)
			continue
		default:
		}
		break
	}
	rs.journalStop()
	<-rs.journalDone
	return err
}
