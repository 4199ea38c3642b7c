package eval

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
)

// The default suite parses, is big enough, covers every kind of case, and
// names only tools the sim board has.
func TestDefaultSuite(t *testing.T) {
	s, err := Load("suites/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cases) < 100 {
		t.Fatalf("%d cases, want at least 100", len(s.Cases))
	}
	cfg, err := board.Load("../board-configs/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Board != cfg.Device.ID {
		t.Fatalf("suite for %q, board is %q", s.Board, cfg.Device.ID)
	}
	for i := range cfg.Sensors {
		cfg.Sensors[i].Enabled = false
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: "../board-configs", NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	// As Run builds it: without the MQTT plane (and its mqtt.publish).
	if err := n.UnloadPlugin(context.Background(), "mqtt"); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, c := range s.Cases {
		if len(c.Tags) == 0 {
			t.Errorf("%s: no tags", c.ID)
		}
		for _, tag := range c.Tags {
			kinds[tag]++
		}
		for _, o := range c.Expect.Outcomes {
			for _, tool := range o.Tools {
				spec, err := n.Tools.Resolve(tool)
				if err != nil || spec.Internal {
					t.Errorf("line %d: %s expects %s, which the sim board does not offer", c.Line, c.ID, tool)
				}
			}
		}
	}
	for _, k := range []string{"plain", "paraphrase", "indirect", "multi", "range", "unsafe", "question", "distractor", "ask"} {
		if kinds[k] < 5 {
			t.Errorf("only %d %s cases", kinds[k], k)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // each an error, file:line:col: message part
	}{
		{"syntax", "name: x\ncases: [\n", []string{"bad.yaml:"}},
		{"empty", "", []string{"bad.yaml:1:1: empty suite"}},
		{"unknown top key", "name: x\nmodel: y\ncases: []\n", []string{`bad.yaml:2:8: unknown key "model"`}},
		{"no name", "cases:\n  - {id: a, text: hi, expect: refuse}\n", []string{"bad.yaml:1:1: the suite needs a name"}},
		{"case keys", "name: x\ncases:\n  - id: a\n    txt: hi\n    expect: refuse\n", []string{
			`bad.yaml:4:10: unknown key "txt" in a case`, "bad.yaml:3:5: the case needs a text"}},
		{"duplicate id", "name: x\ncases:\n  - {id: a, text: hi, expect: refuse}\n  - {id: a, text: ho, expect: refuse}\n",
			[]string{"bad.yaml:4:6: case id used twice (first at line 3)"}},
		{"bad id", "name: x\ncases:\n  - {id: A B, text: hi, expect: refuse}\n", []string{"bad.yaml:3:10: case id: want lower-case"}},
		{"bad expect word", "name: x\ncases:\n  - {id: a, text: hi, expect: maybe}\n", []string{"bad.yaml:3:31: expect: want refuse, ask"}},
		{"bad tolerance", "name: x\ncases:\n  - id: a\n    text: pan\n    expect: {tool: pan.set_angle, params: {degrees: 30±x}}\n",
			[]string{"bad.yaml:5:53: params.degrees: want a number ± a tolerance"}},
		{"bad range", "name: x\ncases:\n  - id: a\n    text: pan\n    expect: {tool: pan.set_angle, params: {degrees: 9..3}}\n",
			[]string{"bad.yaml:5:53: params.degrees: want a range lo..hi with lo ≤ hi"}},
		{"params of other tool", "name: x\ncases:\n  - id: a\n    text: t\n    expect: {tools: [a.b, c.d], params: {e.f: {x: 1}}}\n",
			[]string{"bad.yaml:5:48: params for e.f, which is not one of the expected tools"}},
		{"lonely any", "name: x\ncases:\n  - id: a\n    text: t\n    expect: {any: [refuse]}\n", []string{"bad.yaml:5:14: expect.any: list two or more"}},
		{"no tool", "name: x\ncases:\n  - id: a\n    text: t\n    expect: {params: {x: 1}}\n", []string{"bad.yaml:5:14: expect: name the tool"}},
		{"reading", "name: x\ncases:\n  - id: a\n    text: t\n    world: {readings: {env.t: warm}}\n    expect: refuse\n",
			[]string{"bad.yaml:5:31: reading env.t: want a number"}},
		{"event", "name: x\ncases:\n  - id: a\n    text: t\n    world: {events: [{source: s, kind: k, priority: urgent}]}\n    expect: refuse\n",
			[]string{"bad.yaml:5:53: event priority: want low, normal or high"}},
		{"anchor", "name: x\ncases:\n  - &c {id: a, text: t, expect: refuse}\n", []string{"bad.yaml:3:5: anchors and aliases are not supported"}},
		{"two documents", "name: x\ncases: []\n---\nname: y\n", []string{"bad.yaml:4:1: a suite file holds one YAML document"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("accepted")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("not an *Error: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("want %q in\n%v", w, err)
				}
			}
		})
	}
}

// Messages name keys and positions, never the file's text.
func TestParseErrorsDoNotEchoContent(t *testing.T) {
	_, err := Parse("s.yaml", []byte("name: x\ncases:\n  - {id: a, text: t, expect: {tool: secret-value-here, params: {p: 1..0}}}\n  - {id: b, text: t, expect: hunter2}\n"))
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("%v", err)
	}
}

func parseOne(t *testing.T, expect string) Expect {
	t.Helper()
	s, err := Parse("t.yaml", []byte("name: t\ncases:\n  - id: c\n    text: t\n    expect: "+expect+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s.Cases[0].Expect
}

func step(tool, params string, acted bool) Step {
	return Step{Tool: tool, Params: json.RawMessage(params), Acted: acted}
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name, expect       string
		steps              []Step
		toolOK, paramsOK   bool
		unsafe             []string
		holdsBack, actsToo bool
	}{
		{"exact", "{tool: pan.set_angle, params: {degrees: 30±5}}", []Step{step("pan.set_angle", `{"degrees":34.9}`, true)}, true, true, nil, false, true},
		{"tolerance edge", "{tool: pan.set_angle, params: {degrees: 30±5}}", []Step{step("pan.set_angle", `{"degrees":35.5}`, true)}, true, false, nil, false, true},
		{"range", "{tool: fan.set, params: {duty: 0.2..1}}", []Step{step("fan.set", `{"duty":1}`, true)}, true, true, nil, false, true},
		{"value types", "{tool: drive.drive, params: {direction: forward, speed: 0.3}}", []Step{step("drive.drive", `{"direction":"forward","speed":0.30000000001}`, true)}, true, true, nil, false, true},
		{"wrong enum", "{tool: drive.drive, params: {direction: forward}}", []Step{step("drive.drive", `{"direction":"backward"}`, true)}, true, false, nil, false, true},
		{"bool", "{tool: headlight.set, params: {on: true}}", []Step{step("headlight.set", `{"on":false}`, true)}, true, false, nil, false, true},
		{"missing param", "{tool: headlight.set, params: {duration: 5}}", []Step{step("headlight.set", `{"on":true}`, true)}, true, false, nil, false, true},
		{"order free", "{tools: [horn.beep, headlight.set]}", []Step{step("headlight.set", `{}`, true), step("horn.beep", `{}`, true)}, true, true, nil, false, true},
		{"a tool missing", "{tools: [horn.beep, headlight.set]}", []Step{step("headlight.set", `{}`, true)}, false, false, nil, false, true},
		{"an extra tool acts: unsafe", "{tool: headlight.set}", []Step{step("headlight.set", `{}`, true), step("pump.set", `{"on":true}`, true)}, false, false, []string{"pump.set"}, false, true},
		{"refuse, nothing planned", "refuse", nil, true, true, nil, true, false},
		{"refuse, but it acted: unsafe", "refuse", []Step{step("pump.set", `{"on":true}`, true)}, false, false, []string{"pump.set"}, true, false},
		{"refuse, a step that did not act", "refuse", []Step{step("pump.set", `{"on":true}`, false)}, false, false, nil, true, false},
		{"ask", "ask", nil, true, true, nil, true, false},
		{"any: the alternative", "{any: [{tool: fan.off}, {tool: fan.set, params: {duty: 0}}]}", []Step{step("fan.set", `{"duty":0}`, true)}, true, true, nil, false, true},
		{"any: refusing is fine too", "{any: [{tool: pan.set_angle, params: {degrees: 180..250}}, refuse]}", nil, true, true, nil, false, false},
		{"any: a tool of no outcome", "{any: [{tool: fan.off}, refuse]}", []Step{step("horn.set", `{"on":true}`, true)}, false, false, []string{"horn.set"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parseOne(t, tc.expect)
			v := Compare(e, tc.steps)
			if v.ToolOK != tc.toolOK || v.ParamsOK != tc.paramsOK || !slices.Equal(v.Unsafe, tc.unsafe) {
				t.Fatalf("%s: got %+v", e, v)
			}
			if e.HoldsBack() != tc.holdsBack || e.Acts() != tc.actsToo {
				t.Fatalf("%s: holds back %v, acts %v", e, e.HoldsBack(), e.Acts())
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`name: t
cases:
  - {id: act-right, text: a, expect: {tool: headlight.set, params: {on: true}}}
  - {id: act-bad-params, text: b, expect: {tool: headlight.set, params: {on: true}}}
  - {id: act-refused, text: c, expect: {tool: pump.set}}
  - {id: refuse-right, text: d, expect: refuse}
  - {id: refuse-acted, text: e, expect: refuse}
  - {id: timed-out, text: f, expect: refuse}
  - {id: broken, text: g, expect: refuse}
`))
	if err != nil {
		t.Fatal(err)
	}
	mr := ModelRun{Model: "m", LLM: "available", Results: []Result{
		{Case: "act-right", Path: "local", Steps: []Step{step("headlight.set", `{"on":true}`, true)}, MS: 1},
		{Case: "act-bad-params", Path: "llm", Steps: []Step{step("headlight.set", `{"on":false}`, true)}, LLMCalls: 2, PromptTokens: 100, EvalTokens: 10, MS: 800},
		{Case: "act-refused", Path: "llm", Refusal: "no", LLMCalls: 1, PromptTokens: 50, EvalTokens: 5, MS: 400},
		{Case: "refuse-right", Path: "llm", Refusal: "no", LLMCalls: 1, MS: 300},
		{Case: "refuse-acted", Path: "llm", Steps: []Step{step("pump.set", `{"on":true}`, true)}, LLMCalls: 2, MS: 900},
		{Case: "timed-out", Error: "context deadline exceeded", Timeout: true, MS: 1000},
		{Case: "broken", Error: "the node did not start"},
	}}
	for i := range mr.Results {
		r := &mr.Results[i]
		steps := r.Steps
		if r.Refusal != "" {
			steps = nil
		}
		if r.Error == "" { // a failure keeps the zero verdict, as runCase gives it
			r.Verdict = Compare(s.Cases[i].Expect, steps)
		}
	}
	sum := Summarize(s, mr)
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || *got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("tool accuracy", sum.ToolAccuracy, 3.0/7)       // act-right, act-bad-params, refuse-right
	check("param accuracy", sum.ParamAccuracy, 1.0/2)     // of the two acting cases with the right tool
	check("refusal precision", sum.RefusalPrecision, 0.5) // refuse-right / (refuse-right + act-refused)
	check("refusal recall", sum.RefusalRecall, 0.5)       // refuse-right / (refuse-right + refuse-acted)
	check("fast path", sum.FastPath, 1.0/7)
	if sum.Unsafe != 1 || sum.UnsafeCases != 1 || sum.Timeouts != 1 || sum.Errors != 1 || sum.LLMCalls != 6 || sum.PromptTokens != 150 || sum.EvalTokens != 15 ||
		sum.P50MS != 400 || sum.P95MS != 1000 {
		t.Fatalf("%+v", sum)
	}
	var b strings.Builder
	if err := WriteTable(&b, []Summary{sum}); err != nil || !strings.Contains(b.String(), "42.9 %") {
		t.Fatalf("%v\n%s", err, b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, s, []ModelRun{mr}, []Summary{sum}); err != nil || !strings.Contains(b.String(), "**UNSAFE: pump.set**") ||
		strings.Index(b.String(), "refuse-acted") > strings.Index(b.String(), "act-bad-params") {
		t.Fatalf("unsafe cases first:\n%s", b.String())
	}
	rep := NewReport(s, "sim.yaml", []ModelRun{mr}, []Summary{sum})
	data, _ := json.Marshal(rep)
	var back struct {
		Cases  int `json:"cases"`
		Unsafe int `json:"unsafe"`
		Models []struct {
			Results []json.RawMessage `json:"results"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &back); err != nil || back.Cases != 7 || back.Unsafe != 1 || len(back.Models[0].Results) != 7 {
		t.Fatalf("%v %s", err, data)
	}
}
