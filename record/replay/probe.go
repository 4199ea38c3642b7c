package replay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
)

// probe is the replay's plugin in the node: it counts finished cycles (a
// replay waits for the agent to have handled every input before it feeds
// the next), and it holds the cycles that were preempted before their
// steps when recorded, or cut off there by the node's stop for a reload
// (see tape.hold).
//
// A preemption is a race between a cycle and an event that arrives while
// it runs: live, a command's cycle that a sensor event cut off before its
// steps ran skips them ("skipped: preempted by …"). A replay feeds the
// event only once the agent has handled what came before, so the cycle
// would run its steps. Such a cycle is therefore kept after its plan until
// its context ends: the replay goes on feeding (settle lets it, as for an
// LLM call cut off when recorded), the event that preempted it live
// preempts it again, and its steps are skipped as recorded. No wall-clock
// guess is involved; a cycle nothing preempts is let go after settleLimit,
// and the diff shows it.
type probe struct {
	finished atomic.Uint64
	wake     chan struct{}
	// holds are the recorded cycles to keep, by how many reloads came
	// before them (a reload's node counts its cycles from 1); reloads is
	// that count now.
	holds   map[cycleKey]bool
	reloads atomic.Int64
	held    atomic.Uint64 // cycles kept so far
	holding atomic.Bool   // a cycle is kept now
	// stopping, when set, is called as the node stops its plugins, after
	// its loop (see OnAgentStop).
	stopping atomic.Pointer[func()]
}

// cycleKey names a cycle of a recording: the node (the reloads before it)
// and the cycle's number.
type cycleKey struct {
	reloads int
	cycle   uint64
}

func (p *probe) Info() hooks.Info {
	return hooks.Info{Name: "replay_probe", Version: "1", Description: "counts the cycles of a replay and holds those preempted when recorded",
		RunAfter: []string{"recorder", "actuators"}}
}

// OnAgentStop: the node has stopped its loop and now stops its plugins,
// this one before the recorder and the actuators (it runs after them). What
// the loop did as it stopped (a cycle whose LLM call a reload cut off) is
// in the stream, and so it was in the recording, but not yet the actuators'
// stop: what the replay reads now is what the recorder had when it
// stopped.
func (p *probe) OnAgentStop(context.Context) error {
	if f := p.stopping.Load(); f != nil {
		(*f)()
	}
	return nil
}

// AfterPlan keeps a cycle that was preempted before its steps until it is
// preempted again, or one cut off by a reload until the node stops.
func (p *probe) AfterPlan(ctx context.Context, d hooks.Decision) error {
	if len(d.Steps) == 0 || !p.holds[cycleKey{int(p.reloads.Load()), d.Cycle}] {
		return nil
	}
	p.holding.Store(true)
	defer p.holding.Store(false)
	p.held.Add(1)
	p.signal()
	limit := time.NewTimer(settleLimit)
	defer limit.Stop()
	select {
	case <-ctx.Done():
	case <-limit.C:
	}
	return nil
}

func (p *probe) AfterReflect(context.Context, hooks.Reflection) error {
	p.finished.Add(1)
	p.signal()
	return nil
}

func (p *probe) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

var (
	_ hooks.AfterReflecter = (*probe)(nil)
	_ hooks.AfterPlanner   = (*probe)(nil)
	_ hooks.Stopper        = (*probe)(nil)
)
