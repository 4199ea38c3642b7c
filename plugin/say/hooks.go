package say

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// wakeWordKind is the mic's wake-word event, spelled out (no driver import).
const wakeWordKind = "wake_word"

// OnAgentStart starts the barge-in watch: a wake word stops the speech.
func (p *Plugin) OnAgentStart(context.Context) error {
	p.workers.Start()
	cur := p.world.NewCursor(false)
	p.workers.Go(func(ctx context.Context) { p.watch(ctx, cur) })
	return nil
}

// OnAgentStop stops speaking and waits for the plugin's goroutines.
func (p *Plugin) OnAgentStop(context.Context) error {
	p.workers.Stop() // ends the watch and the spoken replies
	p.speaker.Stop("the agent stops")
	return nil
}

// watch reads the stream for wake words: barge-in.
func (p *Plugin) watch(ctx context.Context, cur *worldmodel.Cursor) {
	cur.Follow(ctx, func(it worldmodel.Item) {
		if it.Kind == worldmodel.ItemEvent && it.Event.Kind == wakeWordKind {
			p.speaker.Stop("wake word")
		}
	})
}

// HandleCritical cuts speech off on an e-stop, before the agent loop sees
// the event, without waiting for the player to wind down.
func (p *Plugin) HandleCritical(e worldmodel.Event) { p.speaker.Cut(e.Kind) }

// AfterSense notes the cycles that answer out loud: a voice command's, and
// a text command's that asks to ("speak": true over MQTT).
func (p *Plugin) AfterSense(_ context.Context, s hooks.Sense) error {
	voice := strings.HasPrefix(s.Trigger, "event ") && strings.HasSuffix(s.Trigger, "/voice_command")
	if !p.replies || !voice && !s.Speak {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.cycles) >= maxCycles {
		oldest := slices.Min(slices.Collect(maps.Keys(p.cycles)))
		delete(p.cycles, oldest)
	}
	p.cycles[s.Cycle] = &voiceCycle{}
	return nil
}

// AfterAct collects the results of a voice cycle's tool calls.
func (p *Plugin) AfterAct(_ context.Context, r hooks.ActionResult) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if vc := p.cycles[r.Action.Cycle]; vc != nil && r.Action.Cycle != 0 {
		vc.results = append(vc.results, r)
	}
	return nil
}

// AfterReflect speaks the outcome of a voice cycle. The speech runs on the
// plugin's goroutine: the next cycle must not wait for it.
func (p *Plugin) AfterReflect(_ context.Context, r hooks.Reflection) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	vc := p.cycles[r.Cycle]
	delete(p.cycles, r.Cycle)
	if vc == nil || r.Preempted {
		return nil // a preempted cycle answers nothing: something more urgent happened
	}
	text := reply(vc.results, r.Err)
	if text == "" {
		return nil
	}
	// Outside the agent's run (stopping) Go speaks nothing.
	p.workers.Go(func(ctx context.Context) {
		if _, err := p.speaker.Say(ctx, text, p.voice, p.volume); err != nil && !errors.Is(err, ErrInterrupted) && ctx.Err() == nil {
			p.log.Warn("spoken reply failed", "err", err)
		}
	})
	return nil
}
