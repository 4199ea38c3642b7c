package hooks

import (
	"fmt"
	"strings"
)

// link is one ordering constraint: plugin from runs before plugin to.
// why is kept for cycle messages, because "a -> b -> a" alone does not tell
// the user which of the three kinds of constraint to fix.
type link struct {
	from, to int
	why      string
}

// executionOrder sorts plugins (given by their Info) into execution order and
// returns their indexes.
//
// Hard dependencies, run_after and run_before all become edges of one graph
// (soft ones only when the other plugin is present), and Kahn's algorithm
// emits it, always choosing among the ready plugins the one with the highest
// Priority, then the smallest name. Choosing at each step, rather than sorting
// by priority afterwards as the reference sketch does, is what lets priority
// decide only where the constraints leave freedom: a low-priority plugin that
// a high-priority one depends on still runs first. Taking ties by name makes
// the order independent of the order plugins were added in.
func executionOrder(infos []Info) ([]int, error) {
	n := len(infos)
	idx := make(map[string]int, n)
	for i, in := range infos {
		idx[in.Name] = i
	}
	preds := make([][]link, n) // preds[v]: links u -> v
	succs := make([][]int, n)
	indeg := make([]int, n)
	add := func(from, to int, why string) {
		preds[to] = append(preds[to], link{from, to, why})
		succs[from] = append(succs[from], to)
		indeg[to]++
	}
	for i, in := range infos {
		for _, d := range in.DependsOn {
			j, ok := idx[d]
			if !ok {
				return nil, fmt.Errorf("plugin %q depends on %q, which is not loaded", in.Name, d)
			}
			add(j, i, in.Name+" depends_on "+d)
		}
		for _, a := range in.RunAfter {
			if j, ok := idx[a]; ok {
				add(j, i, in.Name+" run_after "+a)
			}
		}
		for _, b := range in.RunBefore {
			if j, ok := idx[b]; ok {
				add(i, j, in.Name+" run_before "+b)
			}
		}
	}

	before := func(a, b int) bool { // a should be emitted before b
		if infos[a].Priority != infos[b].Priority {
			return infos[a].Priority > infos[b].Priority
		}
		return infos[a].Name < infos[b].Name
	}
	var ready []int
	for i := range n {
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	out := make([]int, 0, n)
	for len(ready) > 0 {
		best := 0
		for k := 1; k < len(ready); k++ {
			if before(ready[k], ready[best]) {
				best = k
			}
		}
		v := ready[best]
		ready[best] = ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		out = append(out, v)
		for _, w := range succs[v] {
			if indeg[w]--; indeg[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	if len(out) < n {
		return nil, cycleError(infos, preds, indeg)
	}
	return out, nil
}

// cycleError names one cycle among the plugins Kahn's algorithm could not
// emit. Every such plugin still has a predecessor that was not emitted either,
// so walking predecessors from any of them must come back to a plugin already
// on the path. The walk goes against execution order, which reads naturally:
// "a -> b" means a waits for b.
func cycleError(infos []Info, preds [][]link, indeg []int) error {
	stuck := func(i int) bool { return indeg[i] > 0 }
	start := -1
	for i := range infos {
		if stuck(i) && (start < 0 || infos[i].Name < infos[start].Name) {
			start = i
		}
	}
	pos := map[int]int{}
	var path []int
	var whys []string // whys[k] links path[k] to path[k+1]
	cur := start
	for {
		if k, seen := pos[cur]; seen {
			path, whys = path[k:], whys[k:]
			break
		}
		pos[cur] = len(path)
		path = append(path, cur)
		var next *link
		for i := range preds[cur] {
			l := &preds[cur][i]
			if stuck(l.from) && (next == nil || infos[l.from].Name < infos[next.from].Name) {
				next = l
			}
		}
		whys = append(whys, next.why)
		cur = next.from
	}
	// Start the message at the smallest name so it is the same whichever
	// plugin the walk happened to enter the cycle from.
	first := 0
	for k := range path {
		if infos[path[k]].Name < infos[path[first]].Name {
			first = k
		}
	}
	var names []string
	var reasons []string
	for k := range path {
		j := (first + k) % len(path)
		names = append(names, infos[path[j]].Name)
		reasons = append(reasons, whys[j])
	}
	names = append(names, names[0])
	return fmt.Errorf("ordering cycle: %s (%s)", strings.Join(names, " -> "), strings.Join(reasons, "; "))
}
