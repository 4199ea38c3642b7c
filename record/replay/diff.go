package replay

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// Action is something the agent did that a replay must do again: a
// decision, a tool call with its parameters and result, an actuator write,
// an e-stop or an LLM exchange. What is the part compared: no times,
// durations or cycle numbers.
type Action struct {
	Kind   string // decision | tool_call | actuator | estop | llm
	Source string // the tool or actuator; "agent" for decisions
	What   string
	// Steps are a decision's steps with their parameters; recordings made
	// before decisions carried them have none, and then they are not
	// compared.
	Steps string
	Time  time.Time
	cycle uint64 // a decision's cycle, a tool call's from the loop
	// group is a tool call's group of its cycle's plan steps that ran at
	// once (0: it ran alone, or was recorded before calls carried it).
	group int
}

func (a Action) String() string {
	if a.Steps != "" {
		return a.Kind + " " + a.Source + ": " + a.What + " [" + a.Steps + "]"
	}
	return a.Kind + " " + a.Source + ": " + a.What
}

// same: b does what a did.
func (a *Action) same(b *Action) bool {
	return a.Source == b.Source && a.What == b.What && (a.Steps == "" || a.Steps == b.Steps)
}

// Kinds of actions, in the order the report lists them.
var kinds = []string{"decision", "tool_call", "actuator", "estop", "llm"}

// kindNames are the kinds as the report names them.
var kindNames = map[string]string{"decision": "decisions", "tool_call": "tool calls", "actuator": "actuator writes",
	"estop": "e-stops", "llm": "llm exchanges"}

var cyclePrefix = regexp.MustCompile(`^cycle \d+ `)

// clockTimes are times of day and timestamps inside messages ("e-stop
// latched since 06:39:39"): a replay runs at another time, so they are
// masked before comparing.
var clockTimes = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?|\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`)

// unavailableWhy is why the LLM client found the model server down, inside
// a refusal: the address and the error of the server it dialled, which a
// replay's is not (it says "unavailable when recorded"). That it was down
// is compared; why is masked.
var unavailableWhy = regexp.MustCompile(`llm unavailable: [^()]*`)

func decisionAction(t time.Time, msg string, data map[string]any) Action {
	what := cyclePrefix.ReplaceAllString(msg, "")
	// What it chose to do (a reflex's or a command's steps have no trace).
	var steps []string
	if ss, ok := data["steps"].([]any); ok {
		for _, s := range ss {
			if m, ok := s.(map[string]any); ok {
				steps = append(steps, canonical(m["tool"])+" params="+canonical(m["params"]))
			}
		}
	}
	if tr, ok := data["trace"].(map[string]any); ok {
		for _, k := range []string{"scenario", "tool", "params", "refusal"} {
			if v, ok := tr[k]; ok && v != nil && v != "" {
				what += " " + k + "=" + canonical(v)
			}
		}
	}
	cycle, _ := data["cycle"].(float64) // JSON's number, as recorded and round-tripped
	return Action{Kind: "decision", Source: "agent", What: unavailableWhy.ReplaceAllString(clockTimes.ReplaceAllString(what, "<time>"), "llm unavailable: <why>"), Steps: strings.Join(steps, "; "), Time: t, cycle: uint64(cycle)}
}

// aboutTheRun are tools whose result describes the run itself, not the
// robot: record.status the recording being made (a replay makes none, or
// its own with --out), tools.stats the calls made so far, counting those of
// the same plan's other steps, which run at once, in whichever order they
// ran (a race, live as replayed). Comparing a step group in any order does
// not make its result comparable: which siblings it counted is the race
// itself, and two that run together may count the same ones, so even the
// group's results taken together differ from run to run. That the call was
// made and how it ended is compared, not what it said.
var aboutTheRun = map[string]bool{"record.status": true, "tools.stats": true}

func recordAction(t time.Time, kind, source string, data json.RawMessage) Action {
	var d map[string]any
	_ = json.Unmarshal(data, &d) // a record's data is an object; a broken one compares as empty
	var parts []string
	keys := []string{"state"}
	if kind == "tool_call" {
		// via: a fleet's or a group's command is one again (a recording
		// made before calls were marked has none on either side).
		keys = []string{"caller", "via", "params", "ok", "code", "error", "result"}
		if aboutTheRun[source] {
			keys = keys[:len(keys)-1]
		}
	}
	for _, k := range keys {
		if v, ok := d[k]; ok {
			parts = append(parts, k+"="+canonical(timeless(v)))
		}
	}
	cycle, _ := d["cycle"].(float64)
	group, _ := d["step_group"].(float64)
	return Action{Kind: kind, Source: source, What: clockTimes.ReplaceAllString(strings.Join(parts, " "), "<time>"), Time: t,
		cycle: uint64(cycle), group: int(group)}
}

// llmAction is an LLM exchange as compared: its purpose, how it ended
// (answered, unavailable, cut off, timed out, failed) and a digest of its prompt
// without the world summary (see prompt).
func llmAction(t time.Time, source string, x exchange) Action {
	outcome := "answered"
	switch {
	case unavailable(x.Error):
		outcome = "unavailable"
	case cutOff(x.Error):
		outcome = "cut off"
	case timedOut(x.Error):
		outcome = "timed out"
	case x.Error != "":
		outcome = "failed"
	}
	sum := sha256.Sum256([]byte(prompt(x.System, x.Messages)))
	return Action{Kind: "llm", Source: source, What: fmt.Sprintf("%s %s prompt %x", x.Purpose, outcome, sum[:6]), Time: t}
}

// estopAction is an e-stop as the actuators reported it (their
// actuators_stopped event): what caused it and whether every actuator
// stopped, not how long it took.
func estopAction(t time.Time, prio worldmodel.Priority, data map[string]any) Action {
	what := fmt.Sprintf("from %v", data["cause"])
	if prio == worldmodel.Critical {
		what += ", FAILED to stop every actuator"
	}
	return Action{Kind: "estop", Source: "actuators", What: what, Time: t}
}

// durationKey names the fields of a tool's result that measure time
// (took_ns, duration_ms, age_s, latency …): a replay takes its own.
var durationKey = regexp.MustCompile(`(^|_)(took|duration|elapsed|latency|age|uptime|running_for|retry_in)(_|$)`)

// timeless is v without its durations.
func timeless(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !durationKey.MatchString(k) {
				out[k] = timeless(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = timeless(e)
		}
		return out
	}
	return v
}

// canonical is v as JSON with sorted keys (encoding/json sorts map keys).
func canonical(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Divergence is the first place a replay did something else.
type Divergence struct {
	Kind   string
	Index  int      // among the actions of Kind
	Want   *Action  // nil: the replay did more than the recording
	Got    *Action  // nil: the replay did not do it
	Before []Action // the same on both sides, just before
	// After are what each side did next.
	WantAfter, GotAfter []Action
}

// compare finds the first divergence: per kind, the actions must be the
// same in the same order (kinds are compared apart because a dead-man stop
// and the next decision may interleave differently without either being
// wrong), but the tool calls of one step group in any order (see
// alongside); the earliest mismatch in recorded time is reported.
func compare(want, got []Action) (first, decision *Divergence, counts map[string][2]int) {
	counts = map[string][2]int{}
	for _, k := range kinds {
		w, g := ofKind(want, k), ofKind(got, k)
		if k == "tool_call" {
			alongside(w, g)
		}
		counts[k] = [2]int{len(w), len(g)}
		for i := 0; i < max(len(w), len(g)); i++ {
			var wa, ga *Action
			if i < len(w) {
				wa = &w[i]
			}
			if i < len(g) {
				ga = &g[i]
			}
			if wa != nil && ga != nil && wa.same(ga) {
				continue
			}
			d := &Divergence{Kind: k, Index: i, Want: wa, Got: ga, Before: w[max(0, i-3):min(i, len(w))],
				WantAfter: w[min(i+1, len(w)):min(i+4, len(w))], GotAfter: g[min(i+1, len(g)):min(i+4, len(g))]}
			if first == nil || at(d).Before(at(first)) {
				first = d
			}
			if k == "decision" {
				decision = d
			}
			break
		}
	}
	return first, decision, counts
}

// alongside puts the replay's tool calls of one step group (consecutive
// calls of one cycle and group) in the recorded order, where the recording
// has the same calls at their places: the steps of a group ran at once, and
// which call came first was a race, live as replayed. Only calls within a
// group move, so groups still compare in order, and a call the recording
// does not have there stays, to be reported with what was recorded.
func alongside(want, got []Action) {
	for s := 0; s < len(got); {
		e := s + 1
		for e < len(got) && got[s].group != 0 && got[e].group == got[s].group && got[e].cycle == got[s].cycle {
			e++
		}
		run := got[s:e]
		for i := 0; i < len(run)-1 && s+i < len(want); i++ {
			for j := i; j < len(run); j++ {
				if want[s+i].same(&run[j]) {
					m := run[j]
					copy(run[i+1:j+1], run[i:j])
					run[i] = m
					break
				}
			}
		}
		s = e
	}
}

func at(d *Divergence) time.Time {
	if d.Want != nil {
		return d.Want.Time
	}
	return d.Got.Time
}

func ofKind(as []Action, kind string) []Action {
	var out []Action
	for _, a := range as {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

// Print writes the report: what was fed, what matched, and the first
// divergence with its context.
func (r *Report) Print(w io.Writer) {
	reloads := ""
	if r.Reloads > 0 {
		reloads = fmt.Sprintf(", %d board reloads", r.Reloads)
	}
	fmt.Fprintf(w, "replayed %s of recording (%d inputs, %d frames, %d heartbeats%s) in %s",
		r.Span.Round(time.Millisecond), r.Inputs, r.Frames, r.Heartbeats, reloads, r.Took.Round(time.Millisecond))
	if r.LLM != "" {
		fmt.Fprintf(w, "; llm %s", r.LLM)
		if r.LLM == "recorded" {
			fmt.Fprintf(w, " (%d of %d recorded answers served", r.LLMServed, r.LLMRecorded)
			if r.EmbedServed > 0 {
				fmt.Fprintf(w, ", %d embedding calls", r.EmbedServed)
			}
			fmt.Fprint(w, ")")
		}
	}
	fmt.Fprintln(w)
	if r.Damage != "" {
		fmt.Fprintf(w, "the recording was cut short: %s\n", r.Damage)
	}
	for _, k := range kinds {
		c := r.Counts[k]
		fmt.Fprintf(w, "  %-16s recorded %4d  replayed %4d\n", kindNames[k], c[0], c[1])
	}
	if r.Missed > 0 {
		fmt.Fprintf(w, "  warning: %d items of the replay's stream were overwritten before they were compared\n", r.Missed)
	}
	r.printDetections(w)
	d := r.Divergence
	if d == nil {
		fmt.Fprintln(w, "identical: every decision, tool call, actuator write, e-stop and LLM exchange as recorded")
		return
	}
	fmt.Fprintf(w, "DIVERGED at %s #%d", kindNames[d.Kind], d.Index+1)
	if !r.Start.IsZero() {
		fmt.Fprintf(w, " (+%s into the recording)", at(d).Sub(r.Start).Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	for _, b := range d.Before {
		fmt.Fprintf(w, "    same      %s\n", b)
	}
	show := func(a *Action) string {
		if a == nil {
			return "(nothing)"
		}
		return a.String()
	}
	fmt.Fprintf(w, "  - recorded  %s\n", show(d.Want))
	fmt.Fprintf(w, "  + replayed  %s\n", show(d.Got))
	if dd := r.Decision; dd != nil && dd != d {
		// An actuator write or a tool call comes before the decision
		// record that made it: name the decision too.
		fmt.Fprintf(w, "  first differing decision, #%d:\n", dd.Index+1)
		fmt.Fprintf(w, "  - recorded  %s\n", show(dd.Want))
		fmt.Fprintf(w, "  + replayed  %s\n", show(dd.Got))
	}
	for _, a := range d.WantAfter {
		fmt.Fprintf(w, "    then recorded  %s\n", a)
	}
	for _, a := range d.GotAfter {
		fmt.Fprintf(w, "    then replayed  %s\n", a)
	}
	if d.Kind == "llm" && r.LLMNote != "" {
		fmt.Fprintf(w, "  %s\n", r.LLMNote)
	}
}
