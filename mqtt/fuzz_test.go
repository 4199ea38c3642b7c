package mqtt

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/edgeagent/edgeagent/internal/strictjson"
)

// FuzzAdminRequest: a request on the admin topic as the plane reads it —
// decoded, its op resolved to a tool, its error reply encoded. It never
// panics; a payload with a duplicate key never decodes; an error reply
// carries the id whenever one could be read; a decoded command survives
// being encoded and decoded again.
func FuzzAdminRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"1","op":"skills"}`,
		`{"id":"2","op":"disable","params":{"tool":"pump.set"}}`,
		`{"id":"3","tool":"plugins.unload","params":{"plugin":"llm"}}`,
		`{"id":"4","op":"reload","params":{"yaml":"device: {id: x}"}}`,
		`{"id":"5","op":"reboot"}`,
		`{"id":"6","tool":"agent.status","tool":"estop.trigger"}`,
		`{"id":"7","op":"enable","params":{"tool":"a","tool":"b"}}`,
		`{"id":"8","reply_to":"edgeagent/x/reply/me","op":"status"}`,
		`{"id":"\u0000","op":"stats"}`,
		`{"id":"9","op":"audit","params":{"limit":20}} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		cmd, err := DecodeCommand(payload)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || re.Code != CodeInvalid {
				t.Fatalf("decode error %v is not an invalid RequestError", err)
			}
			if id, _ := peekIDs(payload[:min(len(payload), MaxPayload)]); id != "" && re.ID == "" && len(payload) <= MaxPayload && !errors.Is(strictjson.CheckKeys(payload), strictjson.ErrDuplicateKey) {
				t.Fatalf("the id %q could be read but the error has none: %v", id, err)
			}
			if _, err := json.Marshal(replyFor(re.ID, nil, err)); err != nil {
				t.Fatalf("error reply not encodable: %v", err)
			}
			return
		}
		if errors.Is(strictjson.CheckKeys(payload), strictjson.ErrDuplicateKey) {
			t.Fatalf("%q has a duplicate key and decoded", payload)
		}
		if cmd.Op != "" {
			if tool, err := opTool(cmd.Op); err == nil && tool == "" {
				t.Fatal("an op resolved to no tool")
			}
		}
		again, err := json.Marshal(cmd)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeCommand(again)
		if err != nil || back.ID != cmd.ID || back.Tool != cmd.Tool || back.Op != cmd.Op || back.Text != cmd.Text ||
			!bytes.Equal(compact(back.Params), compact(cmd.Params)) {
			t.Fatalf("%s re-encoded as %s: %+v %v", payload, again, back, err)
		}
	})
}

// compact is b without spaces and with <, > and & escaped, as json.Marshal
// writes a RawMessage: params {"&":1} come back as {"\u0026":1}, the
// same JSON.
func compact(b []byte) []byte {
	var c, out bytes.Buffer
	_ = json.Compact(&c, b)
	json.HTMLEscape(&out, c.Bytes())
	return out.Bytes()
}

// FuzzEstopPayload: whatever arrives on the e-stop topic, an empty or
// retained message never triggers, a reset is only a strictly well-formed
// {"reset":true}, and everything else triggers.
func FuzzEstopPayload(f *testing.F) {
	for _, s := range []string{"", "STOP", `{"reset":true}`, `{"reset":true,"reset":false}`, `{"reset":false}`,
		`{"reset":true,"id":"r1","reply_to":"a/b"}`, "\x00", `{"reset":"yes"}`} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("STOP"), true)
	f.Fuzz(func(t *testing.T, payload []byte, retained bool) {
		req := readEstop(payload, retained)
		switch {
		case len(payload) == 0 || retained:
			if req.action != estopIgnore {
				t.Fatalf("%q (retained %v) acted on", payload, retained)
			}
		case req.action == estopReset:
			var v struct {
				Reset bool `json:"reset"`
			}
			if strictjson.Unmarshal(payload, &v) != nil || !v.Reset {
				t.Fatalf("%q taken as a reset", payload)
			}
		case req.action != estopTrigger:
			t.Fatalf("%q neither triggers nor resets", payload)
		}
	})
}
