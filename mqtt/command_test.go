package mqtt

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeCommand(t *testing.T) {
	big := `{"id":"big","reply_to":"r/big","tool":"headlight.set","params":{"pad":"` + strings.Repeat("x", MaxPayload) + `"}}`
	for _, tc := range []struct {
		name, in string
		want     Command
		code     string // expected error code; "" = success
		id       string // id the error still carries
		replyTo  string
		msg      string // substring of the error
	}{
		{name: "tool", in: `{"id":"1","tool":"headlight.set","params":{"on":true}}`,
			want: Command{ID: "1", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}},
		{name: "text", in: `{"id":"2","text":"turn on the light","reply_to":"me/replies"}`,
			want: Command{ID: "2", Text: "turn on the light", ReplyTo: "me/replies"}},
		{name: "text spoken", in: `{"id":"s","text":"what is the temperature","speak":true}`,
			want: Command{ID: "s", Text: "what is the temperature", Speak: true}},
		{name: "text silent", in: `{"id":"s","text":"hi","speak":false}`, want: Command{ID: "s", Text: "hi"}},
		{name: "speak with tool", in: `{"id":"x","tool":"a.b","speak":true}`, code: CodeInvalid, id: "x", msg: "speak goes with text"},
		{name: "speak string", in: `{"id":"x","text":"hi","speak":"yes"}`, code: CodeInvalid, id: "x", msg: "speak must be true or false, got a string"},
		{name: "op null params", in: ` {"id":"3","op":"skills","params":null} `, want: Command{ID: "3", Op: "skills"}},
		{name: "malformed keeps id", in: `{"id":"m1","reply_to":"a/b","tool":`, code: CodeInvalid, id: "m1", replyTo: "a/b", msg: "malformed"},
		{name: "garbage", in: `turn on the light`, code: CodeInvalid, msg: "malformed JSON"},
		{name: "empty", in: ``, code: CodeInvalid},
		{name: "array", in: `[{"id":"1"}]`, code: CodeInvalid, msg: "want a JSON object"},
		{name: "null", in: `null`, code: CodeInvalid, msg: "want a JSON object"},
		{name: "trailing data", in: `{"id":"t","tool":"a.b"} {}`, code: CodeInvalid, id: "t", msg: "after the JSON value"},
		{name: "missing id", in: `{"tool":"headlight.set"}`, code: CodeInvalid, msg: "missing id"},
		{name: "empty id", in: `{"id":"","tool":"headlight.set"}`, code: CodeInvalid, msg: "missing id"},
		{name: "numeric id", in: `{"id":5,"tool":"headlight.set"}`, code: CodeInvalid, msg: "id must be a string, got a number"},
		{name: "long id", in: `{"id":"` + strings.Repeat("i", maxID+1) + `","tool":"a.b"}`, code: CodeInvalid, msg: "limit"},
		{name: "tool number", in: `{"id":"x","tool":3}`, code: CodeInvalid, id: "x", msg: "tool must be a string"},
		{name: "params array", in: `{"id":"x","tool":"a.b","params":[1]}`, code: CodeInvalid, id: "x", msg: "params must be a JSON object, got an array"},
		{name: "params string", in: `{"id":"x","tool":"a.b","params":"on"}`, code: CodeInvalid, id: "x", msg: "got a string"},
		{name: "nothing to do", in: `{"id":"x"}`, code: CodeInvalid, id: "x", msg: "nothing to do"},
		{name: "tool and text", in: `{"id":"x","tool":"a.b","text":"hi"}`, code: CodeInvalid, id: "x", msg: "only one"},
		{name: "blank text", in: `{"id":"x","text":"  "}`, code: CodeInvalid, id: "x", msg: "blank"},
		{name: "text with params", in: `{"id":"x","text":"hi","params":{}}`, code: CodeInvalid, id: "x", msg: "params go with tool or op"},
		{name: "unknown field", in: `{"id":"x","tool":"a.b","prams":{}}`, code: CodeInvalid, id: "x", msg: `unknown field "prams"`},
		{name: "wildcard reply_to", in: `{"id":"x","tool":"a.b","reply_to":"a/#"}`, code: CodeInvalid, id: "x", msg: "wildcards"},
		{name: "reply_to number", in: `{"id":"x","tool":"a.b","reply_to":1}`, code: CodeInvalid, id: "x"},
		{name: "too large", in: big, code: CodeInvalid, id: "big", replyTo: "r/big", msg: "limit is 65536"},
		// encoding/json turns invalid UTF-8 into U+FFFD: echoed, not rejected.
		{name: "invalid utf8 id", in: "{\"id\":\"\xff\",\"tool\":\"a.b\"}", want: Command{ID: "\ufffd", Tool: "a.b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeCommand([]byte(tc.in))
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != tc.want.ID || got.Tool != tc.want.Tool || got.Text != tc.want.Text || got.Op != tc.want.Op ||
					got.Speak != tc.want.Speak || got.ReplyTo != tc.want.ReplyTo || !bytes.Equal(got.Params, tc.want.Params) {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
				return
			}
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v (%T), want a RequestError", err, err)
			}
			if re.Code != tc.code || re.ID != tc.id || re.ReplyTo != tc.replyTo || !strings.Contains(re.Msg, tc.msg) {
				t.Fatalf("got code=%s id=%q reply_to=%q msg=%q; want code=%s id=%q reply_to=%q msg~%q",
					re.Code, re.ID, re.ReplyTo, re.Msg, tc.code, tc.id, tc.replyTo, tc.msg)
			}
		})
	}
}

// FuzzDecodeCommand: whatever arrives on the cmd topic, the decoder does not
// panic, and what it accepts satisfies the command's invariants and
// survives an encode/decode round trip unchanged.
func FuzzDecodeCommand(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","tool":"headlight.set","params":{"on":true}}`,
		`{"id":"2","text":"turn on the light","reply_to":"me/r"}`,
		`{"id":"3","op":"disable","params":{"tool":"pump.set"}}`,
		`{"id":"m1","tool":`, `{"id":5}`, `[]`, `null`, `{"id":"x","params":[]}`,
		`{"id":"\u0000","tool":"a"}`, `{"id":"x","tool":"a","tool":"b"}`, "{\"id\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := DecodeCommand(in)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Code == "" || re.Msg == "" {
				t.Fatalf("error without code/message: %#v", err)
			}
			if re.ReplyTo != "" && checkTopicName(re.ReplyTo) != nil {
				t.Fatalf("error carries an invalid reply_to %q", re.ReplyTo)
			}
			return
		}
		n := 0
		for _, s := range []string{c.Tool, c.Text, c.Op} {
			if s != "" {
				n++
			}
		}
		switch {
		case c.ID == "" || len(c.ID) > maxID:
			t.Fatalf("accepted id %q", c.ID)
		case n != 1:
			t.Fatalf("accepted %d of tool/text/op: %+v", n, c)
		case len(c.Params) > 0 && c.Params[0] != '{':
			t.Fatalf("accepted params %s", c.Params)
		case c.ReplyTo != "" && checkTopicName(c.ReplyTo) != nil:
			t.Fatalf("accepted reply_to %q", c.ReplyTo)
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := DecodeCommand(again)
		if err != nil {
			t.Fatalf("re-encoded command rejected: %s: %v", again, err)
		}
		if c2.ID != c.ID || c2.Tool != c.Tool || c2.Text != c.Text || c2.Op != c.Op || c2.ReplyTo != c.ReplyTo {
			t.Fatalf("round trip changed %+v into %+v", c, c2)
		}
		var a, b any
		if len(c.Params) > 0 && (json.Unmarshal(c.Params, &a) != nil || json.Unmarshal(c2.Params, &b) != nil) {
			t.Fatalf("params not JSON: %s / %s", c.Params, c2.Params)
		}
	})
}

func TestReplyEncoding(t *testing.T) {
	for _, tc := range []struct {
		r    Reply
		want string
	}{
		{replyFor("a", map[string]int{"x": 1}, nil), `{"id":"a","ok":true,"result":{"x":1}}`},
		{replyFor("", nil, &RequestError{Code: CodeInvalid, Msg: "missing id"}), `{"id":null,"ok":false,"error":"missing id","code":"invalid"}`},
		{replyFor("b", "ignored", errors.New("boom")), `{"id":"b","ok":false,"error":"boom","code":"failed"}`},
	} {
		got, _ := json.Marshal(tc.r)
		if string(got) != tc.want {
			t.Errorf("got %s\nwant %s", got, tc.want)
		}
	}
}

func TestMatchFilter(t *testing.T) {
	for _, tc := range []struct {
		f, topic string
		want     bool
	}{
		{"a/b", "a/b", true}, {"a/b", "a/c", false}, {"a/+", "a/b", true}, {"a/+", "a/b/c", false},
		{"a/#", "a", true}, {"a/#", "a/b/c", true}, {"#", "x/y", true}, {"a/+/c", "a/b/c", true},
		{"a/+/c", "a/b/d", false}, {"a/b", "a/b/c", false}, {"a/b/c", "a/b", false}, {"+", "a", true},
		{"edgeagent/sim-bot/notes/#", "edgeagent/sim-bot/notes/x", true}, {"edgeagent/sim-bot/notes/#", "edgeagent/sim-bot/cmd", false},
	} {
		if got := matchFilter(tc.f, tc.topic); got != tc.want {
			t.Errorf("matchFilter(%q, %q) = %v", tc.f, tc.topic, got)
		}
	}
}

func TestReplyToPolicy(t *testing.T) {
	tp := NewTopics("edgeagent/bot/", "bot", "homeassistant")
	for topic, ok := range map[string]bool{
		"edgeagent/bot/reply": true, "edgeagent/bot/reply/cli-1": true, "clients/7/replies": true,
		"edgeagent/bot/cmd": false, "edgeagent/bot/estop": false, "edgeagent/bot/admin": false, "edgeagent/bot/status": false,
		"edgeagent/bot/replyx": false, "homeassistant/status": false, "homeassistant/device/bot/config": false,
		"a/+": false, "$SYS/x": false, "": false,
		"edgeagent/other-bot/estop": false, "edgeagent/other-bot/cmd": false, "x/admin": false, "robots/status": false, "robots/estop-log": true,
	} {
		if err := tp.checkReplyTo(topic); (err == nil) != ok {
			t.Errorf("reply_to %q: err=%v, want allowed=%v", topic, err, ok)
		}
	}
}

func TestOutboxDropsOldest(t *testing.T) {
	o := newOutbox(3)
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		o.push(message{topic: s})
	}
	got := o.drain()
	if len(got) != 3 || got[0].topic != "c" || got[2].topic != "e" || o.dropped != 2 {
		t.Fatalf("drain = %v, dropped %d", got, o.dropped)
	}
	if o.n != 0 || len(o.drain()) != 0 {
		t.Fatal("not empty after drain")
	}
	o.push(message{topic: "f"})
	if got := o.drain(); len(got) != 1 || got[0].topic != "f" {
		t.Fatalf("after reuse: %v", got)
	}
	zero := newOutbox(0)
	zero.push(message{topic: "x"})
	if zero.dropped != 1 || len(zero.drain()) != 0 {
		t.Fatal("a zero buffer must drop")
	}
}

// BenchmarkDecodeCommand: the decoding passes one command costs.
func BenchmarkDecodeCommand(b *testing.B) {
	payload := []byte(`{"id":"bench-000123","tool":"headlight.set","params":{"on":true},"reply_to":"edgeagent/test-bot/reply/ctl"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeCommand(payload); err != nil {
			b.Fatal(err)
		}
	}
}
