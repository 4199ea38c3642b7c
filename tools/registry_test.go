package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/store"
)

var servoSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "degrees": {"type": "number", "minimum": 0, "maximum": 180},
    "speed": {"type": "number", "default": 60},
    "opts": {"type": "object", "properties": {"smooth": {"type": "boolean", "default": true}}, "default": {}}
  },
  "required": ["degrees"],
  "additionalProperties": false
}`)

// echo returns the params it got, so tests see what reached the tool.
func echo(name, perm string, schema json.RawMessage) Tool {
	return Func(Spec{Name: name, Description: "test tool " + name, Permission: perm, Params: schema},
		func(ctx context.Context, p json.RawMessage) (Result, error) {
			var v any
			_ = json.Unmarshal(p, &v)
			return Result{Value: v, Notes: []string{"caller=" + CallerOf(ctx)}}, nil
		})
}

func newReg(t *testing.T, o Options) *Registry {
	t.Helper()
	if o.Grants == nil {
		o.Grants = map[string][]string{"cli": {"*"}, "mqtt": {"read", "actuate"}, "llm": {"read"}}
	}
	r, err := NewRegistry(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestRegisterRejectsBadSpecs(t *testing.T) {
	r := newReg(t, Options{})
	for _, tc := range []struct {
		tool Tool
		want string
	}{
		{echo("noplugin", "read", nil), "plugin.func"},
		{echo("Pan.Set", "read", nil), "plugin.func"},
		{Func(Spec{Name: "a.b"}, nil), "description"},
		{echo("a.b", "read", json.RawMessage(`{"type":"string"}`)), "object schema"},
		{echo("a.c", "read", json.RawMessage(`{"type":"object","properties":{"x":{"type":"nope"}}}`)), "does not compile"},
		{echo("a.d", "read", json.RawMessage(`{not json`)), "not JSON"},
	} {
		err := r.Register("p", tc.tool)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Register(%s) = %v, want error containing %q", tc.tool.Spec().Name, err, tc.want)
		}
	}
	if err := r.Register("p", echo("pan.set", "read", nil)); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("q", echo("pan.set", "read", nil)); err == nil || !strings.Contains(err.Error(), "already registered by p") {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestResolveQualifiedUnqualifiedAmbiguous(t *testing.T) {
	r := newReg(t, Options{})
	for _, n := range []string{"pan.set_angle", "headlight.set", "taillight.set"} {
		if err := r.Register("p", echo(n, "read", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := r.Resolve("set_angle"); err != nil || s.Name != "pan.set_angle" {
		t.Fatalf("unique unqualified: %v %v", s.Name, err)
	}
	_, err := r.Resolve("set")
	if CodeOf(err) != CodeAmbiguous || !strings.Contains(err.Error(), "headlight.set, taillight.set") {
		t.Fatalf("ambiguous: %v", err)
	}
	if _, err := r.Resolve("nope"); CodeOf(err) != CodeNotFound {
		t.Fatalf("missing: %v", err)
	}
}

func TestInvokeValidatesAndFillsDefaults(t *testing.T) {
	r := newReg(t, Options{})
	if err := r.Register("pan", echo("pan.set_angle", "actuate", servoSchema)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := r.Invoke(ctx, Call{Caller: "mqtt", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees": 90}`)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.Value)
	if string(got) != `{"degrees":90,"opts":{"smooth":true},"speed":60}` {
		t.Fatalf("defaults not filled: %s", got)
	}
	if res.Notes[0] != "caller=mqtt" {
		t.Fatalf("tool does not see its caller: %v", res.Notes)
	}
	for _, tc := range []struct {
		params string
		paths  []string
	}{
		{`{"degrees": 200}`, []string{"/degrees"}},
		{`{"degrees": "ninety"}`, []string{"/degrees"}},
		{`{}`, []string{"/"}},
		{`{"degrees": 10, "extra": 1}`, []string{"/"}},
		{`{"degrees": 10, "opts": {"smooth": "yes"}}`, []string{"/opts/smooth"}},
		{`[1,2]`, []string{"/"}},
		{`{"degrees": `, nil},
	} {
		_, err := r.Invoke(ctx, Call{Caller: "mqtt", Tool: "pan.set_angle", Params: json.RawMessage(tc.params)})
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidParams {
			t.Errorf("%s: want invalid_params, got %v", tc.params, err)
			continue
		}
		if tc.paths != nil && strings.Join(te.Paths, ",") != strings.Join(tc.paths, ",") {
			t.Errorf("%s: paths %v, want %v (%s)", tc.params, te.Paths, tc.paths, te.Msg)
		}
	}
}

// Tools with the same schema text share its compiled schema (compiled once
// per registry): each still fills its defaults and refuses bad parameters
// in its own name, and a schema that failed to compile fails again.
func TestToolsSharingASchemaAnswerAlike(t *testing.T) {
	r := newReg(t, Options{})
	for _, n := range []string{"pan.set_angle", "tilt.set_angle"} {
		if err := r.Register("p", echo(n, "actuate", servoSchema)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, n := range []string{"tilt.set_angle", "pan.set_angle"} {
		res, err := r.Invoke(ctx, Call{Caller: "cli", Tool: n, Params: json.RawMessage(`{"degrees": 90}`)})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(res.Value); string(got) != `{"degrees":90,"opts":{"smooth":true},"speed":60}` {
			t.Errorf("%s: defaults not filled: %s", n, got)
		}
		_, err = r.Invoke(ctx, Call{Caller: "cli", Tool: n, Params: json.RawMessage(`{"degrees": 200}`)})
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeInvalidParams || strings.Join(te.Paths, ",") != "/degrees" {
			t.Errorf("%s: %v, want invalid_params at /degrees", n, err)
		} else if other := map[string]string{"pan.set_angle": "tilt", "tilt.set_angle": "pan"}[n]; strings.Contains(te.Msg, other) {
			t.Errorf("%s: the error names the other tool: %s", n, te.Msg)
		}
	}
	bad := json.RawMessage(`{"type":"object","properties":{"x":{"type":"nope"}}}`)
	for _, n := range []string{"a.c", "a.d"} {
		if err := r.Register("p", echo(n, "read", bad)); err == nil || !strings.Contains(err.Error(), "tool "+n+": schema does not compile") {
			t.Errorf("Register(%s) = %v, want its schema refused", n, err)
		}
	}
}

func TestPermissionsAndInternal(t *testing.T) {
	r := newReg(t, Options{})
	_ = r.Register("pan", echo("pan.set_angle", "actuate", servoSchema))
	internal := echo("world.peek", "read", nil)
	spec := internal.Spec()
	spec.Internal = true
	_ = r.Register("world", Func(spec, internal.Invoke))
	ctx := context.Background()
	_, err := r.Invoke(ctx, Call{Caller: "llm", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":1}`)})
	if CodeOf(err) != CodeForbidden || !strings.Contains(err.Error(), `"actuate"`) {
		t.Fatalf("llm without actuate: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "llm", Grants: []string{"actuate"}, Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":1}`)}); err != nil {
		t.Fatalf("extra grant: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "stranger", Tool: "world.peek"}); CodeOf(err) != CodeForbidden {
		t.Fatalf("unknown caller: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "mqtt", Tool: "world.peek"}); CodeOf(err) != CodeNotFound {
		t.Fatalf("internal tool over mqtt: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "world.peek"}); err != nil {
		t.Fatalf("cli internal: %v", err)
	}
}

// refuser is a before_act filter that refuses large angles and rewrites
// params of another tool, as a safety plugin would.
type refuser struct {
	after []hooks.ActionResult
}

func (f *refuser) BeforeAct(_ context.Context, a *hooks.Action) error {
	if strings.Contains(string(a.Params), "170") {
		return errors.New("too far")
	}
	if strings.Contains(string(a.Params), "160") {
		a.Params = json.RawMessage(`{"degrees": 999}`) // a broken rewrite must not slip through
	}
	return nil
}
func (f *refuser) AfterAct(_ context.Context, r hooks.ActionResult) { f.after = append(f.after, r) }

func TestFiltersRefuseAndRevalidate(t *testing.T) {
	f := &refuser{}
	r := newReg(t, Options{Filters: f})
	calls := 0
	_ = r.Register("pan", Func(Spec{Name: "pan.set_angle", Description: "d", Permission: "actuate", Params: servoSchema},
		func(context.Context, json.RawMessage) (Result, error) { calls++; return Result{}, nil }))
	ctx := context.Background()
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":170}`)}); CodeOf(err) != CodeRefused {
		t.Fatalf("refusal: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":160}`)}); CodeOf(err) != CodeInvalidParams {
		t.Fatalf("rewritten params not revalidated: %v", err)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "pan.set_angle", Params: json.RawMessage(`{"degrees":10}`)}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(f.after) != 1 || f.after[0].Err != nil || !strings.Contains(string(f.after[0].Action.Params), `"speed":60`) {
		t.Fatalf("calls=%d after=%+v", calls, f.after)
	}
}

func TestHistoryPersistsAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	fail := false
	tool := Func(Spec{Name: "relay.set", Description: "d", Permission: "actuate"}, func(context.Context, json.RawMessage) (Result, error) {
		if fail {
			return Result{}, errors.New("relay stuck")
		}
		return Result{}, nil
	})
	r, _ := NewRegistry(Options{Store: st, Grants: map[string][]string{"cli": {"*"}}})
	_ = r.Register("relay", tool)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, _ = r.Invoke(ctx, Call{Caller: "cli", Tool: "relay.set"})
	}
	fail = true
	_, _ = r.Invoke(ctx, Call{Caller: "cli", Tool: "relay.set"})
	if err := r.SetEnabled("relay.set", false); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()

	st, _ = store.Open(path)
	defer st.Close()
	r, err = NewRegistry(Options{Store: st, Grants: map[string][]string{"cli": {"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Register("relay", tool)
	h := r.Stats()["relay.set"]
	if h.Calls != 4 || h.Successes != 3 || h.Failures != 1 || h.LastError != "relay.set: relay stuck" {
		t.Fatalf("history after restart: %+v", h)
	}
	if got := h.SuccessRate(); got < 0.66 || got > 0.67 {
		t.Fatalf("success rate %v, want (3+1)/(4+2)", got)
	}
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "relay.set"}); CodeOf(err) != CodeDisabled {
		t.Fatalf("disabled tool not remembered: %v", err)
	}
}

func TestCancelledCallsDoNotCountAsFailures(t *testing.T) {
	r := newReg(t, Options{})
	_ = r.Register("slow", Func(Spec{Name: "slow.wait", Description: "d"}, func(ctx context.Context, _ json.RawMessage) (Result, error) {
		<-ctx.Done()
		return Result{}, ctx.Err()
	}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Invoke(ctx, Call{Caller: "cli", Tool: "slow.wait"}); CodeOf(err) != CodeCancelled {
		t.Fatalf("want cancelled: %v", err)
	}
	if h := r.Stats()["slow.wait"]; h.Cancelled != 1 || h.Failures != 0 {
		t.Fatalf("%+v", h)
	}
	// A preemption cancels with a cause, which the tool returns.
	_ = r.Register("slow", Func(Spec{Name: "slow.cause", Description: "d"}, func(ctx context.Context, _ json.RawMessage) (Result, error) {
		<-ctx.Done()
		return Result{}, fmt.Errorf("stopped: %w", context.Cause(ctx))
	}))
	pctx, pcancel := context.WithCancelCause(context.Background())
	pcancel(errors.New("preempted by high cam/motion_start"))
	if _, err := r.Invoke(pctx, Call{Caller: "cli", Tool: "slow.cause"}); CodeOf(err) != CodeCancelled {
		t.Fatalf("want cancelled: %v", err)
	}
	if h := r.Stats()["slow.cause"]; h.Cancelled != 1 || h.Failures != 0 {
		t.Fatalf("%+v", h)
	}
}

func TestDisableByUnqualifiedName(t *testing.T) {
	r := newReg(t, Options{})
	_ = r.Register("relay", echo("relay.pulse", "actuate", nil))
	if err := r.SetEnabled("pulse", false); err != nil {
		t.Fatal(err)
	}
	if r.Enabled("relay.pulse") {
		t.Fatal("relay.pulse still enabled")
	}
	if _, err := r.Invoke(context.Background(), Call{Caller: "cli", Tool: "relay.pulse"}); CodeOf(err) != CodeDisabled {
		t.Fatalf("want disabled: %v", err)
	}
}

func TestPanickingToolIsAFailure(t *testing.T) {
	r := newReg(t, Options{})
	_ = r.Register("bad", Func(Spec{Name: "bad.tool", Description: "d"}, func(context.Context, json.RawMessage) (Result, error) {
		panic("boom")
	}))
	_, err := r.Invoke(context.Background(), Call{Caller: "cli", Tool: "bad.tool"})
	if CodeOf(err) != CodeFailed || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("%v", err)
	}
}

func TestUnregisterOwnerAndOllamaExport(t *testing.T) {
	r := newReg(t, Options{})
	_ = r.Register("pan", echo("pan.set_angle", "actuate", servoSchema))
	_ = r.Register("pan", echo("pan.center", "actuate", nil))
	_ = r.Register("light", echo("light.set", "actuate", nil))
	out, _ := json.Marshal(OllamaTools(r.List()))
	if !strings.Contains(string(out), `{"function":{"description":"test tool light.set","name":"light.set","parameters":{"type":"object","additionalProperties":false}},"type":"function"}`) {
		t.Fatalf("export: %s", out)
	}
	if got := r.UnregisterOwner("pan"); strings.Join(got, ",") != "pan.center,pan.set_angle" {
		t.Fatalf("unregistered %v", got)
	}
	if len(r.List()) != 1 {
		t.Fatalf("left: %v", r.List())
	}
}

func BenchmarkInvokeWithValidation(b *testing.B) {
	r, _ := NewRegistry(Options{Grants: map[string][]string{"mqtt": {"*"}}})
	_ = r.Register("pan", Func(Spec{Name: "pan.set_angle", Description: "d", Permission: "actuate", Params: servoSchema},
		func(context.Context, json.RawMessage) (Result, error) { return Result{}, nil }))
	params := json.RawMessage(`{"degrees": 90, "speed": 30}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Invoke(ctx, Call{Caller: "mqtt", Tool: "pan.set_angle", Params: params}); err != nil {
			b.Fatal(err)
		}
	}
}
