package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/edgeagent/edgeagent/hooks"
)

// A permission plugin: it implements only BeforeAct, and a refusal stops the
// chain so the action is never performed.
type llmGuard struct{}

func (llmGuard) Info() hooks.Info {
	return hooks.Info{Name: "llm_guard", Version: "1.0.0", Priority: 100}
}

func (llmGuard) BeforeAct(_ context.Context, a *hooks.Action) error {
	if a.Caller == "llm" && a.Tool == "motor.drive" {
		return errors.New("the LLM may not drive the motors")
	}
	return nil
}

// An audit plugin that must see actions only after the guard let them
// through: it implements only AfterAct, which runs concurrently with other
// observers.
type audit struct{}

func (audit) Info() hooks.Info {
	return hooks.Info{Name: "audit", RunAfter: []string{"llm_guard"}}
}

func (audit) AfterAct(_ context.Context, r hooks.ActionResult) error {
	fmt.Printf("audit: %s by %s\n", r.Action.Tool, r.Action.Caller)
	return nil
}

// newLidar declines to load when its device is absent; the loader logs the
// reason and carries on.
func newLidar(port string) (hooks.Plugin, error) {
	if _, err := os.Stat(port); err != nil {
		return nil, hooks.Decline("no lidar on " + port)
	}
	return nil, nil
}

func Example() {
	m := hooks.NewManager(slog.New(slog.DiscardHandler))
	if err := m.AddAll(audit{}, llmGuard{}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := newLidar("/dev/does-not-exist"); err != nil {
		if reason, ok := hooks.IsDeclined(err); ok {
			fmt.Println("skipped lidar:", reason)
		}
	}
	ctx := context.Background()
	if err := m.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer m.Stop(ctx)

	for _, a := range []hooks.Action{
		{Caller: "llm", Tool: "motor.drive"},
		{Caller: "mqtt", Tool: "motor.drive"},
	} {
		if err := m.BeforeAct(ctx, &a); err != nil {
			fmt.Println("refused:", err)
			continue
		}
		m.AfterAct(ctx, hooks.ActionResult{Action: a})
	}
	// Output:
	// skipped lidar: no lidar on /dev/does-not-exist
	// refused: plugin "llm_guard": before_act: the LLM may not drive the motors
	// audit: motor.drive by mqtt
}
