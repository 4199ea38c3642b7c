package wyoming

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReadEvent: whatever a Wyoming peer sends, events are read without a
// panic, errors stay short (they quote at most a bit of the header), and
// an event read survives being written and read again.
func FuzzReadEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"detection","data":{"name":"ok_nabu","timestamp":1200}}` + "\n",
		`{"type":"audio-chunk","data":{"rate":16000,"width":2,"channels":1},"payload_length":4}` + "\n\x01\x02\x03\x04",
		`{"type":"info","data_length":14}` + "\n" + `{"asr":[],"x":1}`,
		`{"type":"x","payload_length":-1}` + "\n",
		`{"type":"","data":{}}` + "\n",
		"\n\n" + `{"type":"ping"}` + "\n",
		`{"type":"a","data_length":5}` + "\n[1,2]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 8 {
			e, err := ReadEvent(r)
			if err != nil {
				if len(err.Error()) > 512 {
					t.Fatalf("error of %d bytes", len(err.Error()))
				}
				return
			}
			enc, err := AppendEvent(nil, e)
			if err != nil {
				t.Fatalf("event %+v read but not writable: %v", e, err)
			}
			back, err := ReadEvent(bufio.NewReader(bytes.NewReader(enc)))
			if err != nil || back.Type != e.Type || !bytes.Equal(back.Payload, e.Payload) {
				t.Fatalf("%q re-read as %+v: %v", enc, back, err)
			}
			a, _ := json.Marshal(e.Data)
			b, _ := json.Marshal(back.Data)
			if !bytes.Equal(a, b) {
				t.Fatalf("data %s re-read as %s", a, b)
			}
		}
	})
}
