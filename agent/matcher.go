package agent

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// The local matcher is the fast path for plain commands ("turn on the
// headlight", "pan to 90 degrees", "stop"): it finds the tool and fills its
// parameters from the words of the command and the tools' specs alone,
// with no LLM. It only answers when every word of the command is accounted
// for and exactly one tool fits; anything else (two clauses, a negation, a
// question, a word it does not know, two tools that fit equally) makes it
// decline, and the command goes to the LLM.

// matchTokenRE finds numbers (with sign and decimals), words, % and °.
var matchTokenRE = regexp.MustCompile(`-?\d+(?:\.\d+)?|[\pL][\pL\d_']*|%|°`)

var (
	// Words that carry no meaning for the match.
	fillerWords = set("the", "a", "an", "to", "please", "now", "at", "of", "your", "my", "robot",
		"can", "could", "would", "will", "you", "by", "with", "for")
	// Verbs that say "do it" without saying what.
	genericVerbs = set("turn", "switch", "set", "put", "make", "move", "go", "rotate", "point", "change", "adjust", "bring")
	onWords      = set("on", "enable", "activate", "start")
	offWords     = set("off", "disable", "deactivate", "extinguish", "stop")
	// Words after which the command is more than one plain action.
	clauseWords = set("and", "then", "if", "when", "unless", "while", "after", "before", "because", "but", "or", "until", "also")
	negations   = set("not", "don't", "dont", "never", "no", "without", "cannot", "can't")
	questions   = set("what", "why", "how", "where", "who", "which", "is", "are", "does", "should", "whether")
	unitWords   = map[string]string{
		"degrees": "angle", "degree": "angle", "deg": "angle", "°": "angle",
		"%": "percent", "percent": "percent",
		"seconds": "seconds", "second": "seconds", "secs": "seconds", "sec": "seconds", "s": "seconds",
		"times": "count",
	}
	// Property name or description words that a unit points to.
	unitHints = map[string][]string{
		"angle":   {"angle", "degree", "degrees"},
		"percent": {"speed", "duty", "percent", "level", "brightness", "volume", "fraction"},
		"seconds": {"second", "seconds", "duration", "for"},
		"count":   {"count", "times", "repeat", "repeats"},
	}
	// Function-name words that carry meaning a command must repeat:
	// servo.move_by is relative, so "pan to 90" is not a move_by.
	markerWords = set("by", "from", "to", "towards", "relative", "until")
)

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// prop is one top-level parameter of a tool's schema.
type prop struct {
	name, typ, desc string
	enum            []string
	max             *float64
	hasDefault      bool
	required        bool
}

type paramSchema struct {
	props []prop
}

func parseParams(raw json.RawMessage) (paramSchema, bool) {
	var doc struct {
		Properties map[string]struct {
			Type        any      `json:"type"`
			Description string   `json:"description"`
			Enum        []any    `json:"enum"`
			Maximum     *float64 `json:"maximum"`
			Default     any      `json:"default"`
			Ref         string   `json:"$ref"`
			OneOf       []any    `json:"oneOf"`
			AnyOf       []any    `json:"anyOf"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if len(raw) > 0 && json.Unmarshal(raw, &doc) != nil {
		return paramSchema{}, false
	}
	var ps paramSchema
	for name, p := range doc.Properties {
		typ, _ := p.Type.(string)
		if p.Ref != "" || p.OneOf != nil || p.AnyOf != nil {
			typ = "" // too clever for a deterministic match
		}
		pr := prop{name: name, typ: typ, desc: strings.ToLower(p.Description), max: p.Maximum,
			hasDefault: p.Default != nil, required: slices.Contains(doc.Required, name)}
		for _, e := range p.Enum {
			if s, ok := e.(string); ok {
				pr.enum = append(pr.enum, strings.ToLower(s))
			}
		}
		ps.props = append(ps.props, pr)
	}
	sort.Slice(ps.props, func(i, j int) bool { return ps.props[i].name < ps.props[j].name })
	return ps, true
}

// splitName cuts "front_light.set" into target words [front light] and
// function words [set].
func splitName(name string) (target, fn []string) {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return nil, nil
	}
	sep := func(r rune) bool { return r == '.' || r == '_' }
	return strings.FieldsFunc(name[:i], sep), strings.FieldsFunc(name[i+1:], sep)
}

func containsAll(have map[string]bool, ws []string) bool {
	for _, w := range ws {
		if !have[w] {
			return false
		}
	}
	return len(ws) > 0
}

// matchOutcome is the matcher's answer.
type matchOutcome struct {
	steps   []Step // params validated, defaults filled
	explain string // what matched, for the trace
	decline string // why it did not answer (steps empty)
}

// validator is the registry's Validate: strict check, defaults filled.
type validator func(string, json.RawMessage) (json.RawMessage, error)

// matchCommand runs the local matcher over the skills in specs.
func matchCommand(text string, specs []tools.Spec, validate validator) matchOutcome {
	tokens, have, decline := screen(text)
	if decline != "" {
		return matchOutcome{decline: decline}
	}
	target, targetWords, candidates, decline := namedDevice(have, specs)
	switch {
	case decline != "":
		return matchOutcome{decline: decline}
	case target == "":
		return bareCommand(tokens, specs, validate)
	}
	fits, reasons := fitting(candidates, targetWords, tokens, have)
	if len(fits) == 0 {
		sort.Strings(reasons)
		return matchOutcome{decline: "no tool of " + target + " fits: " + strings.Join(reasons, "; ")}
	}
	return pick(text, fits, validate)
}

// screen splits a command into tokens and declines what is not one plain
// action: a question, nothing, too many words, two clauses, a negation.
func screen(text string) (tokens []string, have map[string]bool, decline string) {
	lower := strings.ToLower(strings.TrimSpace(text))
	lower = strings.TrimRight(lower, ".! ")
	if strings.HasSuffix(lower, "?") {
		return nil, nil, "a question"
	}
	tokens = matchTokenRE.FindAllString(lower, -1)
	switch {
	case len(tokens) == 0:
		return nil, nil, "no words"
	case len(tokens) > 12:
		return nil, nil, "too long for a plain command"
	case questions[tokens[0]]:
		return nil, nil, "a question"
	}
	have = map[string]bool{}
	for _, t := range tokens {
		switch {
		case clauseWords[t]:
			return nil, nil, fmt.Sprintf("%q joins more than one action or a condition", t)
		case negations[t] || strings.HasSuffix(t, "n't"):
			return nil, nil, fmt.Sprintf("a negation (%q)", t)
		}
		have[t] = true
	}
	return tokens, have, ""
}

// namedDevice finds the device the command names and its tools. The
// longest target wins ("front light" over "light"); two unrelated ones are
// too many; none leaves target empty.
func namedDevice(have map[string]bool, specs []tools.Spec) (target string, words []string, candidates []tools.Spec, decline string) {
	targets := map[string][]string{}
	byTarget := map[string][]tools.Spec{}
	for _, s := range specs {
		// Cheap test first: most tools are not named at all.
		if i := strings.IndexAny(s.Name, "._"); i <= 0 || !have[s.Name[:i]] {
			continue
		}
		tw, fw := splitName(s.Name)
		if tw == nil || fw == nil || !containsAll(have, tw) {
			continue
		}
		key := strings.Join(tw, " ")
		byTarget[key] = append(byTarget[key], s)
		targets[key] = tw
	}
	named := slices.Sorted(maps.Keys(targets))
	for _, a := range named {
		for _, b := range named {
			if a != b && containsAll(set(targets[b]...), targets[a]) {
				delete(targets, a) // a's words are part of b's name
			}
		}
	}
	named = slices.Sorted(maps.Keys(targets))
	switch len(named) {
	case 0:
		return "", nil, nil, ""
	case 1:
		return named[0], targets[named[0]], byTarget[named[0]], ""
	}
	return "", nil, nil, "names several devices: " + strings.Join(named, ", ")
}

// viable is a tool of the named device that the command could mean.
type viable struct {
	spec    tools.Spec
	params  map[string]any
	fnNamed bool // every word of the function's name is in the command
	fnHits  int  // how many are
	filled  int  // parameters filled from the command
}

// fitting keeps the device's tools that account for every word of the
// command, and says why each of the others does not.
func fitting(candidates []tools.Spec, targetWords, tokens []string, have map[string]bool) (fits []viable, reasons []string) {
	for _, s := range candidates {
		if s.Internal {
			continue
		}
		_, fw := splitName(s.Name)
		v := viable{spec: s, fnNamed: containsAll(have, fw)}
		missingMarker := ""
		for _, w := range fw {
			switch {
			case have[w]:
				v.fnHits++
			case markerWords[w]:
				missingMarker = w
			}
		}
		if missingMarker != "" {
			reasons = append(reasons, fmt.Sprintf("%s: the command does not say %q", s.Name, missingMarker))
			continue
		}
		explained := map[string]bool{}
		for _, w := range targetWords {
			explained[w] = true
		}
		if v.fnNamed {
			for _, w := range fw {
				explained[w] = true
			}
		}
		params, filled, why := fillParams(s, tokens, explained)
		if why != "" {
			reasons = append(reasons, s.Name+": "+why)
			continue
		}
		v.params, v.filled = params, filled
		var unexplained []string
		for _, t := range tokens {
			if !explained[t] && !fillerWords[t] && !genericVerbs[t] {
				unexplained = append(unexplained, t)
			}
		}
		if len(unexplained) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s: does not know %q", s.Name, strings.Join(unexplained, " ")))
			continue
		}
		if !v.fnNamed && v.filled == 0 {
			reasons = append(reasons, s.Name+": nothing in the command selects it")
			continue
		}
		fits = append(fits, v)
	}
	return fits, reasons
}

// better orders fitting tools: the function named, then more of its name
// said, then more parameters filled from the command.
func better(a, b viable) int {
	switch {
	case a.fnNamed != b.fnNamed:
		if a.fnNamed {
			return -1
		}
		return 1
	case a.fnHits != b.fnHits:
		return b.fnHits - a.fnHits
	}
	return b.filled - a.filled
}

// pick answers with the best fitting tool, or declines a tie.
func pick(text string, fits []viable, validate validator) matchOutcome {
	sort.SliceStable(fits, func(i, j int) bool { return better(fits[i], fits[j]) < 0 })
	if len(fits) > 1 && better(fits[0], fits[1]) == 0 {
		return matchOutcome{decline: fmt.Sprintf("could be %s or %s", fits[0].spec.Name, fits[1].spec.Name)}
	}
	best := fits[0]
	raw, _ := json.Marshal(best.params)
	params, err := validate(best.spec.Name, raw)
	if err != nil {
		return matchOutcome{decline: "parameters do not validate: " + err.Error()}
	}
	return matchOutcome{
		steps:   []Step{{ID: "1", Tool: best.spec.Name, Params: params}},
		explain: fmt.Sprintf("%q names %s; params %s", text, best.spec.Name, raw),
	}
}

// bareCommand handles a command that names no device: a single verb that
// is the function of parameterless tools ("stop" → every *.stop).
func bareCommand(tokens []string, specs []tools.Spec, validate validator) matchOutcome {
	var content []string
	for _, t := range tokens {
		if !fillerWords[t] {
			content = append(content, t)
		}
	}
	if len(content) != 1 {
		return matchOutcome{decline: "names no device"}
	}
	verb := content[0]
	var steps []Step
	var names []string
	for _, s := range specs {
		if s.Internal || s.Name[strings.LastIndex(s.Name, ".")+1:] != verb {
			continue
		}
		params, err := validate(s.Name, json.RawMessage(`{}`))
		if err != nil {
			continue // needs parameters the command does not give
		}
		steps = append(steps, Step{ID: strconv.Itoa(len(steps) + 1), Tool: s.Name, Params: params})
		names = append(names, s.Name)
	}
	if len(steps) == 0 {
		return matchOutcome{decline: fmt.Sprintf("no parameterless %q tool", verb)}
	}
	return matchOutcome{steps: steps, explain: fmt.Sprintf("%q calls every %s tool: %s", verb, verb, strings.Join(names, ", "))}
}

// fillParams fills s's parameters from the command's tokens, marking the
// tokens it used in explained. It fails when a required parameter stays
// empty or a value could go to more than one parameter.
func fillParams(s tools.Spec, tokens []string, explained map[string]bool) (map[string]any, int, string) {
	ps, ok := parseParams(s.Params)
	if !ok {
		return nil, 0, "unreadable schema"
	}
	f := &paramFill{props: ps.props, tokens: tokens, explained: explained, params: map[string]any{}}
	for _, step := range []func() string{f.numbers, f.enums, f.onOff} {
		if why := step(); why != "" {
			return nil, 0, why
		}
	}
	f.nameWords()
	for _, p := range f.props {
		if _, done := f.params[p.name]; !done && p.required && !p.hasDefault {
			return nil, 0, "nothing in the command gives " + p.name
		}
	}
	return f.params, f.filled, ""
}

// paramFill is one command's tokens becoming one tool's parameters: each
// step takes the tokens of one form and says why it fails, or "".
type paramFill struct {
	props     []prop
	tokens    []string
	explained map[string]bool // the tokens used, shared with the caller
	params    map[string]any
	filled    int
}

// open lists the parameters of one of the types not filled yet.
func (f *paramFill) open(types ...string) []prop {
	var out []prop
	for _, p := range f.props {
		if _, done := f.params[p.name]; !done && slices.Contains(types, p.typ) {
			out = append(out, p)
		}
	}
	return out
}

// numbers: each number, with an optional unit right after it, goes to
// the one numeric parameter it fits.
func (f *paramFill) numbers() string {
	for i, t := range f.tokens {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			continue
		}
		unit := ""
		if i+1 < len(f.tokens) {
			unit = unitWords[f.tokens[i+1]]
		}
		var fit []prop
		for _, p := range f.open("number", "integer") {
			if unit == "" || mentions(p, unitHints[unit]) {
				fit = append(fit, p)
			}
		}
		if len(fit) != 1 {
			return fmt.Sprintf("the number %s fits %d parameters", t, len(fit))
		}
		p := fit[0]
		if unit == "percent" && p.max != nil && *p.max <= 1 {
			v /= 100
		}
		if p.typ == "integer" && v != float64(int64(v)) {
			return fmt.Sprintf("%s wants a whole number, not %s", p.name, t)
		}
		f.params[p.name] = v
		f.filled++
		f.explained[t] = true
		if unit != "" {
			f.explained[f.tokens[i+1]] = true
		}
	}
	return ""
}

// enums: enumerated words ("forward", "high") go to the one string
// parameter that lists them.
func (f *paramFill) enums() string {
	for _, t := range f.tokens {
		if f.explained[t] && !onWords[t] && !offWords[t] {
			continue
		}
		var fit []prop
		for _, p := range f.open("string") {
			if slices.Contains(p.enum, t) {
				fit = append(fit, p)
			}
		}
		switch len(fit) {
		case 0:
			continue
		case 1:
			f.params[fit[0].name] = t
			f.filled++
			f.explained[t] = true
		default:
			return fmt.Sprintf("%q fits %d parameters", t, len(fit))
		}
	}
	return ""
}

// onOff: on and off, for a tool with one boolean.
func (f *paramFill) onOff() string {
	var bools []prop
	for _, p := range f.props {
		if p.typ == "boolean" {
			bools = append(bools, p)
		}
	}
	if len(bools) != 1 {
		return ""
	}
	var on, off bool
	for _, t := range f.tokens {
		on = on || onWords[t] && !f.explained[t]
		off = off || offWords[t] && !f.explained[t]
	}
	if on && off {
		return "says both on and off"
	}
	if on || off {
		f.params[bools[0].name] = on
		f.filled++
		for _, t := range f.tokens {
			if onWords[t] || offWords[t] {
				f.explained[t] = true
			}
		}
	}
	return ""
}

// nameWords: parameter names are words of the command too ("set the pan
// angle to 90", "beep 3 times").
func (f *paramFill) nameWords() {
	for _, p := range f.props {
		if containsAll(set(f.tokens...), strings.FieldsFunc(p.name, func(r rune) bool { return r == '_' })) {
			for _, w := range strings.Split(p.name, "_") {
				f.explained[w] = true
			}
		}
	}
}

func mentions(p prop, hints []string) bool {
	for _, h := range hints {
		if strings.Contains(p.name, h) || slices.Contains(words(p.desc), h) {
			return true
		}
	}
	return false
}
