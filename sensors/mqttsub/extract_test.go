package mqttsub

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"temperature":      "temperature",
		"after.label":      "after label",
		"sensors[0].t":     "sensors [0] t",
		"m[1][2]":          "m [1] [2]",
		"[3].v":            "[3] v",
		"a.b.c.d":          "a b c d",
		"update.installed": "update installed",
	} {
		got, err := splitPath(in)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a..b", ".a", "a[x]", "a[1", "a[1]b", "a[-1]"} {
		if _, err := splitPath(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func mustReading(t *testing.T, r Reading) *reading {
	t.Helper()
	cr, err := compileReading("s", r)
	if err != nil {
		t.Fatal(err)
	}
	return &cr
}

func TestNumberExtractors(t *testing.T) {
	t.Parallel()
	two, half := 2.0, 0.5
	for _, c := range []struct {
		name    string
		r       Reading
		payload string
		want    float64
		err     error // nil: want is the value; errAbsent; errBad: any other error
	}{
		{"json number", Reading{Name: "t", JSON: "temperature"}, `{"temperature":22.4,"humidity":41}`, 22.4, nil},
		{"json nested", Reading{Name: "t", JSON: "after.top_score"}, `{"after":{"top_score":0.87}}`, 0.87, nil},
		{"json array", Reading{Name: "t", JSON: "s[1].v"}, `{"s":[{"v":1},{"v":-3e2}]}`, -300, nil},
		{"json bool true", Reading{Name: "t", JSON: "contact"}, `{"contact":true}`, 1, nil},
		{"json bool false", Reading{Name: "t", JSON: "contact"}, `{"contact":false}`, 0, nil},
		{"json numeric string", Reading{Name: "t", JSON: "v"}, `{"v":"12.5"}`, 12.5, nil},
		{"json scale offset", Reading{Name: "t", JSON: "raw", Scale: &half, Offset: -1}, `{"raw":10}`, 4, nil},
		{"json missing key", Reading{Name: "t", JSON: "temperature"}, `{"linkquality":90}`, 0, errAbsent},
		{"json null", Reading{Name: "t", JSON: "temperature"}, `{"temperature":null}`, 0, errAbsent},
		{"json object", Reading{Name: "t", JSON: "a"}, `{"a":{"b":1}}`, 0, errBad},
		{"json not a number", Reading{Name: "t", JSON: "a"}, `{"a":"warm"}`, 0, errBad},
		{"not json", Reading{Name: "t", JSON: "a"}, `22.4`, 0, errBad},
		{"binary", Reading{Name: "t", JSON: "a"}, "\x00\xff\x89PNG", 0, errBad},
		{"truncated json", Reading{Name: "t", JSON: "a.b"}, `{"a":{"b":`, 0, errBad},
		{"plain number", Reading{Name: "t"}, " 21.5\n", 21.5, nil},
		{"plain number scaled", Reading{Name: "t", Scale: &two}, "3", 6, nil},
		{"plain garbage", Reading{Name: "t"}, "hello", 0, errBad},
		{"plain NaN", Reading{Name: "t"}, "NaN", 0, errBad},
		{"binary number", Reading{Name: "t"}, "\x01\x02", 0, errBad},
		{"on word", Reading{Name: "d", On: []string{"on", "open"}, Off: []string{"off", "closed"}}, "ON", 1, nil},
		{"off word", Reading{Name: "d", On: []string{"on"}, Off: []string{"off"}}, "off\n", 0, nil},
		{"unknown word", Reading{Name: "d", On: []string{"on"}, Off: []string{"off"}}, "unavailable", 0, errBad},
		{"json on/off", Reading{Name: "d", JSON: "state", On: []string{"ON"}, Off: []string{"OFF"}}, `{"state":"OFF"}`, 0, nil},
		{"regexp group", Reading{Name: "t", Regexp: `T=([-0-9.]+)`}, "id=4 T=-3.5 H=40", -3.5, nil},
		{"regexp whole", Reading{Name: "t", Regexp: `[0-9]+`}, "rssi -71 dBm", 71, nil},
		{"regexp no match", Reading{Name: "t", Regexp: `T=([0-9]+)`}, "H=40", 0, errBad},
		{"json then regexp", Reading{Name: "t", JSON: "msg", Regexp: `(\d+)%`}, `{"msg":"battery 87% left"}`, 87, nil},
		{"regexp then on/off", Reading{Name: "m", Regexp: `motion=(\w+)`, On: []string{"yes"}, Off: []string{"no"}}, "motion=yes", 1, nil},
	} {
		r := mustReading(t, c.r)
		got, err := r.number([]byte(c.payload))
		switch {
		case c.err == nil && (err != nil || got != c.want):
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		case c.err == errAbsent && err != errAbsent:
			t.Errorf("%s: %v %v, want absent", c.name, got, err)
		case c.err == errBad && (err == nil || err == errAbsent):
			t.Errorf("%s: %v %v, want a bad-payload error", c.name, got, err)
		}
		if err != nil && strings.Contains(err.Error(), c.payload) && len(c.payload) > 3 {
			t.Errorf("%s: error %q echoes the payload", c.name, err)
		}
	}
}

var errBad = errors.New("bad")

func TestTextExtractor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		r             Reading
		payload, want string
	}{
		{Reading{Name: "l", JSON: "after.label", Text: true}, `{"after":{"label":"person"}}`, "person"},
		{Reading{Name: "l", JSON: "m", Text: true}, `{"m":"a \"quoted\" \u00e9"}`, `a "quoted" é`},
		{Reading{Name: "l", Text: true}, "on", "on"},
		{Reading{Name: "l", JSON: "n", Text: true}, `{"n":42}`, "42"},
		{Reading{Name: "l", Regexp: `state=(\w+)`, Text: true}, "state=armed_away", "armed_away"},
	} {
		got, err := mustReading(t, c.r).textValue([]byte(c.payload))
		if err != nil || got != c.want {
			t.Errorf("%+v: %q %v, want %q", c.r, got, err, c.want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	one := 1.0
	for _, c := range []struct {
		r    Reading
		want string
	}{
		{Reading{Name: "Bad"}, "name"},
		{Reading{Name: "t", JSON: "a..b"}, "empty key"},
		{Reading{Name: "t", Regexp: "("}, "regexp"},
		{Reading{Name: "t", Regexp: "(a)(b)"}, "capture group"},
		{Reading{Name: "t", Text: true, Scale: &one}, "text readings"},
		{Reading{Name: "t", On: []string{"on"}, Off: []string{"ON"}}, "twice"},
	} {
		if _, err := compileReading("s", c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
	if _, err := compileRule(Rule{Event: "x", Data: map[string]string{"k": "a[z]"}}); err == nil {
		t.Error("bad data path accepted")
	}
	for _, f := range []string{"", "a/#/b", "a/b+", "a#"} {
		if validFilter(f) == nil {
			t.Errorf("filter %q accepted", f)
		}
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	person, err := compileRule(Rule{Event: "person",
		Match: []Match{{JSON: "type", Equals: []string{"new"}}, {JSON: "after.label", Equals: []string{"person"}}},
		Data:  map[string]string{"camera": "after.camera", "score": "after.top_score", "stationary": "after.stationary", "zones": "after.current_zones"}})
	if err != nil {
		t.Fatal(err)
	}
	for payload, want := range map[string]bool{
		`{"type":"new","after":{"label":"person","camera":"front"}}`:    true,
		`{"type":"update","after":{"label":"person","camera":"front"}}`: false,
		`{"type":"new","after":{"label":"car","camera":"front"}}`:       false,
		`{"type":"new"}`: false,
	} {
		if got, err := person.fires([]byte(payload)); got != want || err != nil {
			t.Errorf("%s: %v %v, want %v", payload, got, err, want)
		}
	}
	if _, err := person.fires([]byte("\x00binary")); err == nil {
		t.Error("binary payload: no error")
	}
	d := person.eventData([]byte(`{"type":"new","after":{"label":"person","camera":"front","top_score":0.91,"stationary":false,"current_zones":["porch"]}}`))
	if d["camera"] != "front" || d["score"] != 0.91 || d["stationary"] != false || d["zones"] != `["porch"]` {
		t.Errorf("data %v", d)
	}
	re, err := compileRule(Rule{Event: "ring", Match: []Match{{Regexp: `^ring`}}})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := re.fires([]byte("ring ring")); !ok {
		t.Error("regexp rule did not fire")
	}
	if ok, err := re.fires([]byte("idle")); ok || err != nil {
		t.Errorf("regexp rule on a non-matching payload: %v %v", ok, err)
	}
	every, _ := compileRule(Rule{Event: "msg"})
	if ok, _ := every.fires([]byte("x")); !ok {
		t.Error("rule without matches did not fire")
	}
}

// The JSON extractor is the hot path of a busy topic: it must not allocate.
func TestNumberDoesNotAllocate(t *testing.T) {
	r := mustReading(t, Reading{Name: "t", JSON: "temperature"})
	onoff := mustReading(t, Reading{Name: "d", JSON: "contact", On: []string{"false"}, Off: []string{"true"}})
	p := []byte(z2mPayload)
	if n := testing.AllocsPerRun(200, func() {
		if _, err := r.number(p); err != nil {
			t.Fatal(err)
		}
		if _, err := onoff.number(p); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per message", n)
	}
}

// z2mPayload is what a Zigbee2MQTT Aqara temperature sensor publishes.
const z2mPayload = `{"battery":97,"humidity":41.27,"linkquality":123,"power_outage_count":3,"pressure":1012.4,"temperature":22.41,"voltage":3005,"contact":true,"update":{"installed_version":-1,"latest_version":-1,"state":null}}`
