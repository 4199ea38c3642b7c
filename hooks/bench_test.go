package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// permCheck is the shape of a real BeforeAct plugin: look at the caller and
// tool, refuse or pass.
type permCheck struct {
	name  string
	deny  string
	calls int
}

var errDenied = errors.New("denied")

func (p *permCheck) Info() Info { return Info{Name: p.name} }
func (p *permCheck) BeforeAct(_ context.Context, a *Action) error {
	p.calls++
	if a.Tool == p.deny {
		return errDenied
	}
	return nil
}

// BenchmarkBeforeAct measures the per-action cost of the BeforeAct chain,
// which runs before every tool call. Expect 0 allocs/op.
func BenchmarkBeforeAct(b *testing.B) {
	for _, n := range []int{0, 1, 3} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			m := NewManager(quiet())
			for i := range n {
				if err := m.Add(&permCheck{name: fmt.Sprint("perm", i), deny: "forbidden"}); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background()) // like an agent cycle's
			defer cancel()
			a := &Action{Caller: "llm", Tool: "servo.set", Params: json.RawMessage(`{"angle":30}`)}
			b.ReportAllocs()
			for b.Loop() {
				if err := m.BeforeAct(ctx, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAfterAct measures the parallel path, for comparison: it pays for
// goroutines, which is why the hot per-action checks are chains.
func BenchmarkAfterAct(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			m := NewManager(quiet())
			for i := range n {
				p := &afterActOnly{info: Info{Name: fmt.Sprint("p", i)}, fn: func() error { return nil }}
				if err := m.Add(p); err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b.ReportAllocs()
			for b.Loop() {
				m.AfterAct(ctx, ActionResult{})
			}
		})
	}
}
