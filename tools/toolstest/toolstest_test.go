package toolstest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Every spec has its own name and a JSON schema, and two calls make the
// same specs.
func TestSynthetic(t *testing.T) {
	specs := Synthetic(200)
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Name] || !json.Valid(s.Params) || s.Description == "" {
			t.Fatalf("spec %+v (name seen before: %v)", s, seen[s.Name])
		}
		seen[s.Name] = true
	}
	if !reflect.DeepEqual(specs, Synthetic(200)) {
		t.Fatal("two calls made different specs")
	}
	if specs[1].Name != "valve1.set_angle" || specs[4].Name != "fan4.set" {
		t.Fatalf("names %q, %q", specs[1].Name, specs[4].Name)
	}
}
