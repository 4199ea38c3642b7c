package fleet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/internal/suggest"
)

// Exit codes of `edgeagent fleet call` and `fleet estop`, so a script (or
// an operator's shell) can tell a fleet that did what it was told from one
// that did not, and a typo from a robot that failed.
const (
	// ExitIncomplete: some robot known in the target refused, is offline,
	// or did not answer in time. The message names them.
	ExitIncomplete = 1
	// ExitNoTarget: no robot announces itself in the group or fleet: a
	// typo, or a fleet that never came up.
	ExitNoTarget = 2
)

// ExitError is a failed fleet command and the exit code it maps to.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ExitCode is the process exit code.
func (e *ExitError) ExitCode() int { return e.Code }

// Outcome is what became of one command sent to a target.
type Outcome struct {
	Target Target
	// Known are the robots whose retained announcements put them in the
	// target, whatever their status; Online those of them online, whom
	// the command was expected to reach.
	Known, Online []string
	Answers       []Answer
	Duplicates    int
	// Targets are the groups (or fleets, for a fleet target) the listing
	// saw, for the "did you mean" of a target nobody is in.
	Targets []string
}

// NewOutcome sorts a listing into the robots of to: those known and those
// online.
func NewOutcome(robots []Robot, to Target) Outcome {
	o := Outcome{Target: to}
	seen := map[string]bool{}
	for _, r := range robots {
		in := to.Fleet != "" && r.Fleet == to.Fleet || to.Group != "" && slices.Contains(r.Groups, to.Group)
		if in {
			o.Known = append(o.Known, r.ID)
			if r.Status == "online" {
				o.Online = append(o.Online, r.ID)
			}
		}
		names := r.Groups
		if to.Fleet != "" {
			names = []string{r.Fleet}
		}
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				o.Targets = append(o.Targets, n)
			}
		}
	}
	slices.Sort(o.Targets)
	return o
}

// Offline are the known robots that are not online (offline by their last
// will, or stopped): the command cannot reach them now.
func (o Outcome) Offline() []string {
	var out []string
	for _, id := range o.Known {
		if !slices.Contains(o.Online, id) {
			out = append(out, id)
		}
	}
	return out
}

// Silent are the online robots that did not answer.
func (o Outcome) Silent() []string {
	var out []string
	for _, id := range o.Online {
		if !slices.ContainsFunc(o.Answers, func(a Answer) bool { return a.Robot == id }) {
			out = append(out, id)
		}
	}
	return out
}

// Refused are the robots that answered with an error.
func (o Outcome) Refused() []string {
	var out []string
	for _, a := range o.Answers {
		if !a.Reply.OK {
			out = append(out, a.Robot)
		}
	}
	slices.Sort(out)
	return out
}

func (t Target) String() string {
	if t.Fleet != "" {
		return "fleet " + t.Fleet
	}
	return "group " + t.Group
}

// Err is nil when every robot known in the target answered OK; otherwise
// an *ExitError that names the robots that did not.
func (o Outcome) Err() error {
	if len(o.Known) == 0 {
		name, kind := o.Target.Group, "groups"
		if o.Target.Fleet != "" {
			name, kind = o.Target.Fleet, "fleets"
		}
		msg := fmt.Sprintf("no robot announces itself in %s", o.Target)
		if best, ok := suggest.Closest(name, o.Targets); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		} else if len(o.Targets) > 0 {
			msg += " (" + kind + " seen: " + strings.Join(o.Targets, ", ") + ")"
		} else {
			msg += " (no robot announced itself on this broker and topic root)"
		}
		return &ExitError{Code: ExitNoTarget, Msg: msg}
	}
	var parts []string
	for _, p := range []struct {
		what string
		ids  []string
	}{{"refused", o.Refused()}, {"offline", o.Offline()}, {"did not answer", o.Silent()}} {
		if len(p.ids) > 0 {
			parts = append(parts, p.what+": "+strings.Join(p.ids, ", "))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return &ExitError{Code: ExitIncomplete, Msg: fmt.Sprintf("%d of %d robots of %s did not acknowledge (%s)",
		len(o.Known)-o.acknowledged(), len(o.Known), o.Target, strings.Join(parts, "; "))}
}

func (o Outcome) acknowledged() int {
	n := 0
	for _, a := range o.Answers {
		if a.Reply.OK && slices.Contains(o.Known, a.Robot) {
			n++
		}
	}
	return n
}
