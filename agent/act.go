package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
)

// StepResult is the outcome of one step.
type StepResult struct {
	ID       string          `json:"id"`
	Tool     string          `json:"tool"`
	Params   json.RawMessage `json:"params,omitempty"`
	Result   *tools.Result   `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Code     string          `json:"code,omitempty"`
	Skipped  bool            `json:"skipped,omitempty"` // a dependency failed
	Duration time.Duration   `json:"duration_ns"`
}

// OK reports whether the step ran and succeeded.
func (r StepResult) OK() bool { return !r.Skipped && r.Error == "" }

// CheckPlan rejects a step graph with duplicate or empty ids, unknown
// dependencies or a cycle, before anything runs.
func CheckPlan(steps []Step) error {
	idx := make(map[string]int, len(steps))
	for i, s := range steps {
		if s.ID == "" {
			return fmt.Errorf("step %d has no id", i)
		}
		if _, dup := idx[s.ID]; dup {
			return fmt.Errorf("step id %q used twice", s.ID)
		}
		idx[s.ID] = i
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(steps))
	var path []string
	var visit func(i int) error
	visit = func(i int) error {
		color[i] = grey
		path = append(path, steps[i].ID)
		for _, d := range steps[i].DependsOn {
			j, ok := idx[d]
			if !ok {
				return fmt.Errorf("step %q depends on unknown step %q", steps[i].ID, d)
			}
			switch color[j] {
			case grey:
				return fmt.Errorf("plan has a cycle: %s -> %s", strings.Join(path, " -> "), d)
			case white:
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		color[i] = black
		return nil
	}
	for i := range steps {
		if color[i] == white {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// invoker calls tools: the registry, for the loop and the engine.
type invoker interface {
	Invoke(context.Context, tools.Call) (tools.Result, error)
}

// runSteps executes a checked DAG: each step starts when its dependencies
// have succeeded, independent steps run in parallel, and a failed step skips
// everything that depends on it. All goroutines end before it returns.
func runSteps(ctx context.Context, clk clock.Clock, reg invoker, dec Decision, cycle uint64) []StepResult {
	results := make([]StepResult, len(dec.Steps))
	done := make(map[string]chan struct{}, len(dec.Steps))
	index := make(map[string]int, len(dec.Steps))
	for i, s := range dec.Steps {
		done[s.ID] = make(chan struct{})
		index[s.ID] = i
	}
	var groups []int
	if cycle != 0 {
		groups = stepGroups(dec.Steps)
	}
	var wg sync.WaitGroup
	for i, s := range dec.Steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[s.ID])
			res := StepResult{ID: s.ID, Tool: s.Tool, Params: s.Params}
			for _, d := range s.DependsOn {
				<-done[d]
				if !results[index[d]].OK() {
					res.Skipped = true
					res.Error = "skipped: step " + d + " did not succeed"
					results[i] = res
					return
				}
			}
			if err := ctx.Err(); err != nil {
				res.Skipped, res.Error, res.Code = true, "skipped: "+context.Cause(ctx).Error(), tools.CodeCancelled
				results[i] = res
				return
			}
			start := clk.Now()
			call := tools.Call{Caller: dec.Caller, Grants: dec.Grants, Tool: s.Tool, Params: s.Params, Cycle: cycle}
			if groups != nil {
				call.StepGroup = groups[i]
			}
			out, err := reg.Invoke(ctx, call)
			res.Duration = clk.Since(start)
			if err != nil {
				res.Error, res.Code = err.Error(), tools.CodeOf(err)
			} else {
				res.Result = &out
			}
			results[i] = res
		}()
	}
	wg.Wait()
	return results
}

// stepGroups numbers the groups of a checked plan's steps whose calls may
// come in any order: two steps are in one group when neither waits for the
// other, even through others, and groups join through a shared step. Every
// step of one group waits for every step of an earlier one, so the groups'
// calls come in order, and within a group in whichever order they ended (a
// race, live as in a replay). A step alone in its group gets 0 (its call is
// recorded as before), the others 1, 2 … by their first step.
func stepGroups(steps []Step) []int {
	index := make(map[string]int, len(steps))
	for i, s := range steps {
		index[s.ID] = i
	}
	// after[i][j]: step i starts only once step j has ended.
	after := make([][]bool, len(steps))
	var reach func(i int)
	reach = func(i int) {
		if after[i] != nil {
			return
		}
		after[i] = make([]bool, len(steps))
		for _, d := range steps[i].DependsOn {
			j := index[d]
			reach(j)
			after[i][j] = true
			for k, b := range after[j] {
				after[i][k] = after[i][k] || b
			}
		}
	}
	root := make([]int, len(steps))
	for i := range steps {
		reach(i)
		root[i] = i
	}
	find := func(i int) int {
		for root[i] != i {
			i = root[i]
		}
		return i
	}
	size := make([]int, len(steps))
	for i := range steps {
		for j := range i {
			if !after[i][j] && !after[j][i] {
				root[find(i)] = find(j)
			}
		}
	}
	for i := range steps {
		size[find(i)]++
	}
	groups, ids := make([]int, len(steps)), map[int]int{}
	for i := range steps {
		r := find(i)
		if size[r] < 2 {
			continue
		}
		if ids[r] == 0 {
			ids[r] = len(ids) + 1
		}
		groups[i] = ids[r]
	}
	return groups
}
