package toolstest

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/edgeagent/edgeagent/tools"
)

// The specs register (valid names and schemas, no duplicates) and are the
// same on every call.
func TestSyntheticRegisters(t *testing.T) {
	specs := Synthetic(200)
	reg, err := tools.NewRegistry(tools.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if err := reg.Register("test", tools.Func(s, func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(specs, Synthetic(200)) {
		t.Fatal("two calls made different specs")
	}
	if specs[1].Name != "valve1.set_angle" || specs[4].Name != "fan4.set" || !json.Valid(specs[3].Params) {
		t.Fatalf("specs %+v %+v", specs[1], specs[4])
	}
}
