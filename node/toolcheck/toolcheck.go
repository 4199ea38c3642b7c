// Package toolcheck finds the tools a board names that no loaded plugin
// provides, on a node built from that board: `edgeagent check` fails on
// them and `run` warns once. It lives beside the node rather than in it,
// which only assembles and runs the parts.
package toolcheck

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/suggest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/plugin"
)

// Check reports the tools the board names that no loaded plugin
// provides: a reflex's tool (at run time every firing would fail), the
// fleet's allow-list (a pattern that matches nothing allows nothing) and
// what plugins name in their options (plugin.ToolNamer: the engine's
// features and skills). Each
// problem is a board error at the key's file:line:col, with a "did you
// mean" for a typo, or the reason when the tool's plugin did not start.
// `edgeagent check` fails on them; `run` warns once.
func Check(n *node.Node) error {
	var names []string
	prefixes := map[string]bool{}
	for _, s := range n.Tools.List() {
		names = append(names, s.Name)
		if i := strings.LastIndex(s.Name, "."); i > 0 {
			prefixes[s.Name[:i+1]+"*"] = true
		}
	}
	var errs []error
	missing := func(path, name string, known []string) {
		if why, ok := n.Tools.Absent(name); ok {
			errs = append(errs, n.Board.KeyError(path, "the tool is not available: %s", why))
			return
		}
		msg := "no loaded plugin provides this tool"
		if best, ok := suggest.Closest(name, known); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		errs = append(errs, n.Board.KeyError(path, "%s", msg))
	}
	for i, r := range n.Board.Reflexes {
		if _, err := n.Tools.Resolve(r.Do.Tool); err != nil {
			missing(fmt.Sprintf("reflexes[%d].do.tool", i), r.Do.Tool, names)
		}
	}
	patterns := names
	for p := range prefixes {
		patterns = append(patterns, p)
	}
	for i, p := range n.Board.Fleet.Tools {
		// The allow-list takes full names and "prefix.*" (board checks the
		// form), never the short names a reflex may use.
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if !hasPrefix(names, prefix) {
				missing(fmt.Sprintf("fleet.tools[%d]", i), p, patterns)
			}
			continue
		}
		if spec, err := n.Tools.Resolve(p); err != nil || spec.Name != p {
			missing(fmt.Sprintf("fleet.tools[%d]", i), p, patterns)
		}
	}
	// Plugins that name tools in their options (the engine's features and
	// skills: patterns such as "drive.*", matched as the engine does).
	globMissing := func(p string) (string, bool) {
		for _, name := range names {
			if ok, _ := path.Match(p, name); ok {
				return "", false
			}
		}
		if why, ok := n.Tools.Absent(p); ok {
			return "the tool is not available: " + why, true
		}
		msg := "no loaded tool matches this name or pattern"
		if best, ok := suggest.Closest(p, patterns); ok {
			msg += fmt.Sprintf(" (did you mean %q?)", best)
		}
		return msg, true
	}
	for _, p := range n.Hooks.Plugins() {
		if tn, ok := p.(plugin.ToolNamer); ok {
			err := tn.CheckToolNames(globMissing)
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = append(errs, j.Unwrap()...)
			} else if err != nil {
				errs = append(errs, err)
			}
		}
	}
	slices.SortStableFunc(errs, func(a, b error) int { // in file order, like board's own
		var ea, eb *board.Error
		if !errors.As(a, &ea) || !errors.As(b, &eb) {
			return 0
		}
		return cmp.Or(cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Col, eb.Col))
	})
	return errors.Join(errs...)
}

func hasPrefix(names []string, prefix string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
