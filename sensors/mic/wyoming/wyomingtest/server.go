// Package wyomingtest is a Wyoming server for tests: it speaks the real
// framing over TCP and answers describe, wake-word detection and
// transcription with behaviour the test chooses. It deliberately exercises
// the parts of the protocol clients get wrong: data both inline and in the
// data block, and events written in small pieces so that headers and
// payloads arrive split across reads.
package wyomingtest

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/wyoming"
)

// Server is a fake Wyoming service.
type Server struct {
	// Wake decides on a detection after each audio chunk, given all the
	// audio of the stream so far; it returns the wake word's name or "".
	Wake func(audio []int16) string
	// Transcribe turns an utterance into text.
	Transcribe func(audio []int16) string
	// Fail, when set, answers every transcription with an error event.
	Fail string
	// Speak is the text-to-speech voice: the samples (at TTSRate, mono
	// s16le) for a text and voice name. Nil answers synthesize with an
	// error event.
	Speak func(text, voice string) []int16
	// TTSRate is the rate of Speak's samples (default 22050, Piper's).
	TTSRate int
	// TTSChunk is the samples per audio-chunk (default 1024).
	TTSChunk int
	// Stall, when set, is waited on after the first TTS chunk (a server
	// that hangs in the middle of an answer).
	Stall chan struct{}
	// Split makes the server write every event in pieces of at most this
	// many bytes, flushing (and pausing briefly) between them.
	Split int

	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
	closing bool

	Connections atomic.Int64
	Chunks      atomic.Int64 // audio-chunk events received
	Streams     atomic.Int64 // detect or transcribe requests
	received    []wyoming.Event
}

// Received lists the events received so far, audio chunks excepted.
func (s *Server) Received() []wyoming.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wyoming.Event(nil), s.received...)
}

// Start listens on a free loopback port.
func Start(s *Server) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ln = ln
	s.conns = map[net.Conn]bool{}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the server's address in the tcp:// form.
func (s *Server) Addr() string { return "tcp://" + s.ln.Addr().String() }

// Close stops the server and drops every connection (a server crash, as
// far as clients can tell).
func (s *Server) Close() {
	s.mu.Lock()
	s.closing = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

// DropConnections closes the open connections but keeps listening.
func (s *Server) DropConnections() {
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.Connections.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		}()
	}
}

func (s *Server) write(c net.Conn, e wyoming.Event, inline bool) error {
	var b []byte
	if inline {
		// Old servers put data in the header and send no data block.
		b = appendInline(e)
	} else {
		var err error
		if b, err = wyoming.AppendEvent(nil, e); err != nil {
			return err
		}
	}
	if s.Split <= 0 {
		_, err := c.Write(b)
		return err
	}
	for len(b) > 0 {
		n := min(s.Split, len(b))
		if _, err := c.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		time.Sleep(200 * time.Microsecond) // let the client read a partial event
	}
	return nil
}

func (s *Server) serve(c net.Conn) {
	r := bufio.NewReader(c)
	var audio []int16
	mode := ""
	detected := false
	for {
		e, err := wyoming.ReadEvent(r)
		if err != nil {
			return
		}
		s.mu.Lock()
		if e.Type != "audio-chunk" {
			s.received = append(s.received, e)
		}
		s.mu.Unlock()
		switch e.Type {
		case "describe":
			info := wyoming.Event{Type: "info", Data: map[string]any{
				"asr": []any{map[string]any{"name": "fake-whisper", "installed": true, "description": "test ASR",
					"attribution": map[string]any{"name": "test", "url": ""},
					"models":      []any{map[string]any{"name": "tiny", "languages": []string{"en"}, "installed": true}}}},
				"wake": []any{map[string]any{"name": "fake-oww", "installed": true,
					"attribution": map[string]any{"name": "test", "url": ""},
					"models":      []any{map[string]any{"name": "ok_nabu", "phrase": "okay nabu", "languages": []string{"en"}, "installed": true}}}},
			}}
			// Half of the info inline, half in the data block.
			b := appendSplitData(info)
			if s.Split > 0 {
				for len(b) > 0 {
					n := min(s.Split, len(b))
					c.Write(b[:n])
					b = b[n:]
					time.Sleep(200 * time.Microsecond)
				}
			} else {
				c.Write(b)
			}
		case "synthesize":
			s.Streams.Add(1)
			if !s.synthesize(c, e) {
				return
			}
		case "detect":
			mode, audio, detected = "wake", audio[:0], false
			s.Streams.Add(1)
		case "transcribe":
			mode, audio = "asr", audio[:0]
			s.Streams.Add(1)
		case "audio-start":
			audio = audio[:0]
		case "audio-chunk":
			s.Chunks.Add(1)
			for i := 0; i+1 < len(e.Payload); i += 2 {
				audio = append(audio, int16(binary.LittleEndian.Uint16(e.Payload[i:])))
			}
			if mode == "wake" && !detected && s.Wake != nil {
				if name := s.Wake(audio); name != "" {
					detected = true
					ts, _ := e.Int("timestamp")
					if s.write(c, wyoming.Event{Type: "detection", Data: map[string]any{"name": name, "timestamp": ts}}, true) != nil {
						return
					}
					// openWakeWord keeps listening after a detection.
					audio, detected = audio[:0], false
				}
			}
		case "audio-stop":
			switch mode {
			case "wake":
				if s.write(c, wyoming.Event{Type: "not-detected"}, false) != nil {
					return
				}
			case "asr":
				if s.Fail != "" {
					if s.write(c, wyoming.Event{Type: "error", Data: map[string]any{"text": s.Fail, "code": "test"}}, false) != nil {
						return
					}
					break
				}
				text := ""
				if s.Transcribe != nil {
					text = s.Transcribe(audio)
				}
				// A streaming server announces the transcript first.
				if s.write(c, wyoming.Event{Type: "transcript-start", Data: map[string]any{"language": "en"}}, false) != nil {
					return
				}
				if s.write(c, wyoming.Event{Type: "transcript", Data: map[string]any{"text": text}}, false) != nil {
					return
				}
			}
			mode = ""
		}
	}
}

// synthesize answers one synthesize event the way wyoming-piper does:
// audio-start, audio-chunks (format in each), audio-stop.
func (s *Server) synthesize(c net.Conn, e wyoming.Event) bool {
	if s.Speak == nil {
		return s.write(c, wyoming.Event{Type: "error", Data: map[string]any{"text": "no voice", "code": "test"}}, false) == nil
	}
	voice := ""
	if v, ok := e.Data["voice"].(map[string]any); ok {
		voice, _ = v["name"].(string)
	}
	text, _ := e.Data["text"].(string)
	samples := s.Speak(text, voice)
	rate, chunk := cmp.Or(s.TTSRate, 22050), cmp.Or(s.TTSChunk, 1024)
	format := map[string]any{"rate": rate, "width": 2, "channels": 1}
	if s.write(c, wyoming.Event{Type: "audio-start", Data: format}, false) != nil {
		return false
	}
	for i := 0; i < len(samples); i += chunk {
		part := samples[i:min(len(samples), i+chunk)]
		p := make([]byte, 2*len(part))
		for j, v := range part {
			binary.LittleEndian.PutUint16(p[2*j:], uint16(v))
		}
		if s.write(c, wyoming.Event{Type: "audio-chunk", Data: maps.Clone(format), Payload: p}, i == 0) != nil {
			return false
		}
		if i == 0 && s.Stall != nil {
			<-s.Stall
		}
	}
	return s.write(c, wyoming.Event{Type: "audio-stop"}, false) == nil
}

// appendInline encodes e with its data inside the header line.
func appendInline(e wyoming.Event) []byte {
	h := map[string]any{"type": e.Type, "data": e.Data}
	if len(e.Payload) > 0 {
		h["payload_length"] = len(e.Payload)
	}
	b, _ := json.Marshal(h)
	b = append(b, '\n')
	return append(b, e.Payload...)
}

// appendSplitData puts the first data key (in sorted order) inline and the
// rest in the data block, which the reader must merge.
func appendSplitData(e wyoming.Event) []byte {
	keys := slices.Sorted(maps.Keys(e.Data))
	inline, block := map[string]any{}, map[string]any{}
	for i, k := range keys {
		if i == 0 {
			inline[k] = e.Data[k]
		} else {
			block[k] = e.Data[k]
		}
	}
	data, _ := json.Marshal(block)
	h := map[string]any{"type": e.Type, "data": inline, "data_length": len(data), "version": "1.5.2"}
	b, _ := json.Marshal(h)
	b = append(b, '\n')
	return append(b, data...)
}
