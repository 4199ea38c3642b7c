package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestInvokeRefusesDuplicateKeysAndCodesRefusals: params with a key twice
// never reach a tool, whoever calls; a tool error matching ErrRefused is
// a refusal, not a failure.
func TestInvokeRefusesDuplicateKeysAndCodesRefusals(t *testing.T) {
	r, _ := NewRegistry(Options{Grants: map[string][]string{"cli": {"*"}}})
	ran := 0
	spec := Spec{Name: "lamp.set", Description: "d", Permission: "actuate",
		Params: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)}
	if err := r.Register("t", Func(spec, func(_ context.Context, p json.RawMessage) (Result, error) {
		ran++
		if strings.Contains(string(p), "true") {
			return Result{}, fmt.Errorf("latched: %w", ErrRefused)
		}
		return Result{}, nil
	})); err != nil {
		t.Fatal(err)
	}
	_, err := r.Invoke(context.Background(), Call{Caller: "cli", Tool: "lamp.set", Params: json.RawMessage(`{"on":false,"on":true}`)})
	if CodeOf(err) != CodeInvalidParams || !strings.Contains(err.Error(), `duplicate key "on"`) || ran != 0 {
		t.Fatalf("duplicate key: %v (ran %d)", err, ran)
	}
	_, err = r.Invoke(context.Background(), Call{Caller: "cli", Tool: "lamp.set", Params: json.RawMessage(`{"on":true}`)})
	if CodeOf(err) != CodeRefused {
		t.Fatalf("refusal coded %s: %v", CodeOf(err), err)
	}
}
