package llmtest

import (
	"slices"
	"testing"
)

func TestPlanTools(t *testing.T) {
	schema := `{"type":"object","properties":{"steps":{"type":"array","items":{"anyOf":[
		{"type":"object","properties":{"tool":{"type":"string","enum":["lamp.set"]},"params":{}}},
		{"type":"object","properties":{"tool":{"type":"string","enum":["wheels.drive"]},"params":{}}}]}}}}`
	got, err := PlanTools([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lamp.set", "wheels.drive"}; !slices.Equal(got, want) {
		t.Fatalf("PlanTools = %q, want %q", got, want)
	}
	if got, err := PlanTools([]byte(`{"type":"object"}`)); err != nil || len(got) != 0 {
		t.Fatalf("a schema without steps: %q, %v", got, err)
	}
	if _, err := PlanTools([]byte(`{"properties":`)); err == nil {
		t.Fatal("a truncated schema was read")
	}
}
