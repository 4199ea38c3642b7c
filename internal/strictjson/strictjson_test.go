package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckKeys(t *testing.T) {
	for _, tc := range []struct {
		in  string
		dup string // "" = no error
	}{
		{`{"a":1,"b":2}`, ""},
		{`{"tool":"agent.status","tool":"estop.trigger"}`, "tool"},
		{`{"a":{"x":1,"x":2}}`, "x"},
		{`{"a":[{"x":1},{"x":2}]}`, ""}, // the same key in two objects
		{`[{"k":1,"k":1}]`, "k"},
		{`{"a":{"b":1},"b":{"a":1}}`, ""},
		{`{"a":"a","b":"a"}`, ""}, // a value equal to a key
		{`{"a":[1,"a",{"a":1}],"a":0}`, "a"},
		{`{"p":{"on":true,"on":false}}`, "on"},
		{`"just a string"`, ""},
		{`{"a":1,`, ""},             // malformed: left to the decoder
		{`{"\u0061":1,"a":2}`, "a"}, // escapes are decoded before comparing
		// encoding/json matches struct fields ignoring case (Unicode
		// folding: ſ is s, K is k): the last match would win.
		{`{"tool":"agent.status","Tool":"estop.trigger"}`, "Tool"},
		{`{"params":{},"paramſ":{}}`, "paramſ"},
		{`{"K":1,"k":2}`, "k"},
		{"{\"\xb9\":0,\"\x80\":0}", "\ufffd"}, // invalid UTF-8 decodes to U+FFFD (found by the fuzzer)
		{`{"a":1,"ä":2,"Ä0":3}`, ""},
	} {
		err := CheckKeys([]byte(tc.in))
		var de *DuplicateKeyError
		switch {
		case tc.dup == "" && err != nil:
			t.Errorf("%s: %v", tc.in, err)
		case tc.dup != "" && (!errors.As(err, &de) || de.Key != tc.dup || !errors.Is(err, ErrDuplicateKey)):
			t.Errorf("%s: got %v, want duplicate %q", tc.in, err, tc.dup)
		}
	}
}

// Past manyKeys an object's keys go into a map; case folding must hold
// there too.
func TestCheckKeysManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tool":1`)
	for i := range 2 * manyKeys {
		fmt.Fprintf(&b, `,"k%d":%d`, i, i)
	}
	b.WriteString(`,"TOOL":2}`)
	var de *DuplicateKeyError
	if err := CheckKeys([]byte(b.String())); !errors.As(err, &de) || de.Key != "TOOL" {
		t.Fatalf("got %v, want duplicate TOOL", err)
	}
	if err := CheckKeys([]byte(strings.Replace(b.String(), `"TOOL"`, `"tool2"`, 1))); err != nil {
		t.Fatal(err)
	}
}

func TestDecode(t *testing.T) {
	var v struct{ A int }
	if err := Decode([]byte(`{"A":1}`), &v); err != nil || v.A != 1 {
		t.Fatalf("%v %v", err, v)
	}
	for _, bad := range []string{`{"A":1,"A":2}`, `{"A":1,"B":2}`, `{"A":1} {}`, `{"A":"x"}`} {
		if err := Decode([]byte(bad), &v); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := Unmarshal([]byte(`{"A":1,"A":2}`), &v); !errors.Is(err, ErrDuplicateKey) {
		t.Fatal(err)
	}
}

func TestErrorQuotesOnlyTheKey(t *testing.T) {
	secret := strings.Repeat("s", 1000)
	err := CheckKeys([]byte(`{"` + secret + `":"value","` + secret + `":"value"}`))
	if err == nil || len(err.Error()) > 120 || strings.Contains(err.Error(), "value") {
		t.Fatalf("error %q", err)
	}
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	if err := CheckKeys([]byte(deep)); err == nil {
		t.Fatal("300 levels accepted")
	}
}

// hasDuplicate is the oracle of the fuzz target: encoding/json's own
// tokenizer, and the keys of each object compared pairwise with
// bytes.EqualFold, the equivalence encoding/json matches fields with.
func hasDuplicate(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() bool
	walk = func() bool {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'):
			var seen []string
			dup := false
			for dec.More() {
				k, _ := dec.Token()
				for _, s := range seen {
					dup = dup || bytes.EqualFold([]byte(s), []byte(k.(string)))
				}
				seen = append(seen, k.(string))
				dup = walk() || dup
			}
			_, _ = dec.Token()
			return dup
		case json.Delim('['):
			dup := false
			for dec.More() {
				dup = walk() || dup
			}
			_, _ = dec.Token()
			return dup
		}
		return false
	}
	return walk()
}

func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":2,"c":3}]}}`, `[]`, `{"x":"\u0000"}`, `{`,
		`{"\u0061":1,"a":2}`, `[{"k":true},{"k":null}]`, `{"a":"}","b":"{"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckKeys(data)
		var de *DuplicateKeyError
		if errors.As(err, &de) && len(de.Key) > 70 {
			t.Fatalf("key not truncated: %d bytes", len(de.Key))
		}
		if !json.Valid(data) || bytes.Count(data, []byte("["))+bytes.Count(data, []byte("{")) >= maxDepth {
			return
		}
		if got, want := errors.Is(err, ErrDuplicateKey), hasDuplicate(data); got != want {
			t.Fatalf("%q: CheckKeys says duplicate %v (%v), encoding/json %v", data, got, err, want)
		}
	})
}
