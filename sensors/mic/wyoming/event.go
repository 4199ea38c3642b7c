// Package wyoming is a client for the Wyoming protocol, the protocol of
// Home Assistant's voice services (wyoming-openwakeword on port 10400,
// wyoming-faster-whisper on port 10300, …).
//
// An event on the wire is one JSON header line, then data_length bytes of
// JSON whose fields are merged over the header's "data", then
// payload_length bytes of payload (PCM audio for audio-chunk). Servers put
// data inline or in the data block depending on their library version;
// both are accepted.
package wyoming

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
)

// Event is one protocol message.
type Event struct {
	Type    string
	Data    map[string]any
	Payload []byte
}

type header struct {
	Type          string         `json:"type"`
	Data          map[string]any `json:"data,omitempty"`
	DataLength    int            `json:"data_length,omitempty"`
	PayloadLength int            `json:"payload_length,omitempty"`
	Version       string         `json:"version,omitempty"`
}

// Limits on what a peer may make us allocate. An audio chunk is a few KB;
// a describe answer with many models is tens of KB.
const (
	maxHeader  = 64 << 10
	maxData    = 1 << 20
	maxPayload = 16 << 20
)

// ProtocolVersion is sent in every header, as the reference library does.
const ProtocolVersion = "1.5.2"

// ReadEvent reads one event.
func ReadEvent(r *bufio.Reader) (Event, error) {
	line, err := readLine(r)
	if err != nil {
		return Event{}, err
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return Event{}, fmt.Errorf("wyoming: bad header %q: %w", truncate(line), err)
	}
	if h.Type == "" {
		return Event{}, fmt.Errorf("wyoming: header without type: %q", truncate(line))
	}
	if h.DataLength < 0 || h.DataLength > maxData || h.PayloadLength < 0 || h.PayloadLength > maxPayload {
		return Event{}, fmt.Errorf("wyoming: %q: data_length %d / payload_length %d out of range", truncate([]byte(h.Type)), h.DataLength, h.PayloadLength)
	}
	e := Event{Type: h.Type, Data: h.Data}
	if h.DataLength > 0 {
		b := make([]byte, h.DataLength)
		if _, err := io.ReadFull(r, b); err != nil {
			return Event{}, fmt.Errorf("wyoming: %q: reading %d bytes of data: %w", truncate([]byte(h.Type)), h.DataLength, noEOF(err))
		}
		var extra map[string]any
		if err := json.Unmarshal(b, &extra); err != nil {
			return Event{}, fmt.Errorf("wyoming: %q: bad data block: %w", truncate([]byte(h.Type)), err)
		}
		if e.Data == nil {
			e.Data = extra
		} else {
			maps.Copy(e.Data, extra)
		}
	}
	if h.PayloadLength > 0 {
		e.Payload = make([]byte, h.PayloadLength)
		if _, err := io.ReadFull(r, e.Payload); err != nil {
			return Event{}, fmt.Errorf("wyoming: %q: reading %d bytes of payload: %w", truncate([]byte(h.Type)), h.PayloadLength, noEOF(err))
		}
	}
	if e.Data == nil {
		e.Data = map[string]any{}
	}
	return e, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		frag, err := r.ReadSlice('\n')
		buf = append(buf, frag...)
		if len(buf) > maxHeader {
			return nil, fmt.Errorf("wyoming: header line longer than %d bytes", maxHeader)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF && len(buf) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line := bytes.TrimRight(buf, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return readLine(r) // tolerate blank lines between events
	}
	return line, nil
}

// truncate keeps the start of what a peer sent, for an error that helps
// without echoing a whole (possibly hostile) message: quoted, 40 bytes
// stay under 200 characters.
func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// AppendEvent encodes e. Data goes in the data block, as the reference
// implementation writes it; the header carries type, lengths and version.
func AppendEvent(dst []byte, e Event) ([]byte, error) {
	h := header{Type: e.Type, Version: ProtocolVersion, PayloadLength: len(e.Payload)}
	var data []byte
	if len(e.Data) > 0 {
		var err error
		data, err = json.Marshal(e.Data)
		if err != nil {
			return dst, fmt.Errorf("wyoming: %s: %w", e.Type, err)
		}
		h.DataLength = len(data)
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return dst, err
	}
	dst = append(dst, hb...)
	dst = append(dst, '\n')
	dst = append(dst, data...)
	return append(dst, e.Payload...), nil
}

// WriteEvent writes e to w in one Write call (so that concurrent writers
// serialised by a mutex never interleave parts of events).
func WriteEvent(w io.Writer, e Event) error {
	b, err := AppendEvent(nil, e)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// String gets a string field of the event's data.
func (e Event) String(key string) string {
	s, _ := e.Data[key].(string)
	return s
}

// Int gets a numeric field of the event's data (JSON numbers are float64).
func (e Event) Int(key string) (int64, bool) {
	switch v := e.Data[key].(type) {
	case float64:
		return int64(v), true
	case json.Number:
		i, err := v.Int64()
		return i, err == nil
	}
	return 0, false
}
