package wyoming_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/wyoming"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
)

func read(t *testing.T, wire string) (wyoming.Event, error) {
	t.Helper()
	// One byte per Read: every header, data block and payload arrives split.
	return wyoming.ReadEvent(bufio.NewReaderSize(iotest.OneByteReader(strings.NewReader(wire)), 16))
}

func TestReadEventFraming(t *testing.T) {
	// Data inline only (old servers).
	e, err := read(t, `{"type":"detection","data":{"name":"ok_nabu","timestamp":1230}}`+"\n")
	if err != nil || e.Type != "detection" || e.String("name") != "ok_nabu" {
		t.Fatalf("inline: %+v %v", e, err)
	}
	if ts, ok := e.Int("timestamp"); !ok || ts != 1230 {
		t.Fatalf("timestamp %v %v", ts, ok)
	}
	// Data block only, then payload, with the header longer than the
	// reader's buffer.
	block := `{"rate":16000,"width":2,"channels":1,"pad":"` + strings.Repeat("x", 40) + `"}`
	wire := fmt.Sprintf(`{"type":"audio-chunk","data_length":%d,"payload_length":4,"version":"1.5.2"}`+"\n%s\x01\x02\x03\x04", len(block), block)
	e, err = read(t, wire)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := e.Int("rate"); r != 16000 || !bytes.Equal(e.Payload, []byte{1, 2, 3, 4}) {
		t.Fatalf("data block + payload: %+v", e)
	}
	// Both: the block is merged over the inline data and wins.
	block = `{"text":"from block","extra":true}`
	wire = fmt.Sprintf(`{"type":"transcript","data":{"text":"inline","language":"en"},"data_length":%d}`+"\n%s", len(block), block)
	e, err = read(t, wire)
	if err != nil {
		t.Fatal(err)
	}
	if e.String("text") != "from block" || e.String("language") != "en" || e.Data["extra"] != true {
		t.Fatalf("merge: %+v", e.Data)
	}
	// Two events back to back, with a blank line between (tolerated).
	r := bufio.NewReader(strings.NewReader(`{"type":"a"}` + "\n\n" + `{"type":"b","payload_length":1}` + "\nZ"))
	if a, err := wyoming.ReadEvent(r); err != nil || a.Type != "a" {
		t.Fatalf("first: %+v %v", a, err)
	}
	if b, err := wyoming.ReadEvent(r); err != nil || b.Type != "b" || string(b.Payload) != "Z" {
		t.Fatalf("second: %+v %v", b, err)
	}
	if _, err := wyoming.ReadEvent(r); err != io.EOF {
		t.Fatalf("at end: %v, want io.EOF", err)
	}
}

func TestReadEventErrors(t *testing.T) {
	for name, wire := range map[string]string{
		"truncated payload": `{"type":"audio-chunk","payload_length":10}` + "\nabc",
		"truncated data":    `{"type":"x","data_length":10}` + "\n{}",
		"bad header":        `{"type":` + "\n",
		"no type":           `{"data":{}}` + "\n",
		"bad data block":    `{"type":"x","data_length":3}` + "\nabc",
		"huge payload":      `{"type":"x","payload_length":99999999999}` + "\n",
		"negative length":   `{"type":"x","data_length":-1}` + "\n",
		"header too long":   `{"type":"x","data":"` + strings.Repeat("a", 70<<10) + `"}` + "\n",
		"eof mid header":    `{"type":"x"`,
	} {
		if _, err := read(t, wire); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	in := wyoming.Event{Type: "audio-chunk", Data: map[string]any{"rate": 16000, "timestamp": 40}, Payload: []byte("pcm!")}
	var b bytes.Buffer
	if err := wyoming.WriteEvent(&b, in); err != nil {
		t.Fatal(err)
	}
	// The reference library's layout: data in the block, version in header.
	hdr, _, _ := strings.Cut(b.String(), "\n")
	if !strings.Contains(hdr, `"data_length"`) || strings.Contains(hdr, `"rate"`) || !strings.Contains(hdr, `"version"`) {
		t.Fatalf("header %s", hdr)
	}
	out, err := read(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	if ts, _ := out.Int("timestamp"); out.Type != in.Type || ts != 40 || string(out.Payload) != "pcm!" {
		t.Fatalf("round trip: %+v", out)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestDescribe(t *testing.T) {
	srv, err := wyomingtest.Start(&wyomingtest.Server{Split: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	info, err := wyoming.Describe(ctx(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ASR) != 1 || info.ASR[0].Name != "fake-whisper" || info.ASR[0].Models[0].Name != "tiny" {
		t.Fatalf("asr %+v", info.ASR)
	}
	if len(info.Wake) != 1 || info.Wake[0].Models[0].Phrase != "okay nabu" || !info.Wake[0].Installed {
		t.Fatalf("wake %+v", info.Wake)
	}
}

func TestTranscribe(t *testing.T) {
	srv, err := wyomingtest.Start(&wyomingtest.Server{Split: 5, Transcribe: func(a []int16) string {
		var sum int64
		for _, s := range a {
			sum += int64(s)
		}
		return fmt.Sprintf(" %d samples, sum %d ", len(a), sum)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	audio := make([]int16, 16000+123)
	var sum int64
	for i := range audio {
		audio[i] = int16(i%2000 - 1000)
		sum += int64(audio[i])
	}
	text, err := wyoming.Transcribe(ctx(t), srv.Addr(), "tiny", "en", audio)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d samples, sum %d", len(audio), sum); text != want {
		t.Fatalf("transcript %q, want %q (audio must arrive intact, text trimmed)", text, want)
	}
	got := srv.Received()
	if got[0].Type != "transcribe" || got[0].String("language") != "en" || got[0].String("name") != "tiny" ||
		got[1].Type != "audio-start" || got[len(got)-1].Type != "audio-stop" {
		t.Fatalf("server saw %+v", got)
	}
	if r, _ := got[1].Int("rate"); r != 16000 {
		t.Fatalf("audio-start %+v", got[1].Data)
	}
}

func TestWakeStream(t *testing.T) {
	srv, err := wyomingtest.Start(&wyomingtest.Server{Split: 3, Wake: func(a []int16) string {
		for _, s := range a {
			if s > 20000 {
				return "ok_nabu"
			}
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	w, err := wyoming.StartWake(ctx(t), srv.Addr(), []string{"ok_nabu"})
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]int16, 1600)
	for i := 0; i < 10; i++ { // 1 s of quiet: nothing
		if err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	loud := make([]int16, 1600)
	loud[800] = 30000
	if err := w.Write(loud); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-w.Detections():
		if d.Name != "ok_nabu" || d.Timestamp != time.Second {
			t.Fatalf("detection %+v, want ok_nabu at 1s", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no detection")
	}
	if err := w.Err(); err != nil {
		t.Fatalf("stream ended: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.Detections(); ok {
		t.Fatal("detections channel not closed")
	}
	if n := srv.Chunks.Load(); n != 11 {
		t.Fatalf("server got %d chunks", n)
	}
	// The server going away ends the stream with an error, and writes fail.
	w, err = wyoming.StartWake(ctx(t), srv.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for srv.Streams.Load() < 2 { // the server has the connection
		time.Sleep(time.Millisecond)
	}
	srv.DropConnections()
	deadline := time.Now().Add(5 * time.Second)
	for w.Err() == nil && time.Now().Before(deadline) {
		w.Write(chunk)
		time.Sleep(10 * time.Millisecond)
	}
	if w.Err() == nil {
		t.Fatal("stream still healthy after the server dropped it")
	}
	w.Close()
}

func TestServerErrorAndCancel(t *testing.T) {
	// A server that answers transcribe with an error event.
	srv, err := wyomingtest.Start(&wyomingtest.Server{Fail: "model not loaded"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, err = wyoming.Transcribe(ctx(t), srv.Addr(), "", "", make([]int16, 3200))
	if !errors.Is(err, wyoming.ErrServer) || !strings.Contains(err.Error(), "model not loaded") {
		t.Fatalf("error event: %v", err)
	}
	// Dead address: dial fails quickly.
	if _, err := wyoming.Describe(ctx(t), "tcp://127.0.0.1:1"); err == nil {
		t.Fatal("describe of a closed port succeeded")
	}
	// A cancelled context unblocks a wait for the transcript.
	tr, err := wyoming.StartTranscription(ctx(t), srv.Addr(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(context.Background())
	// The fake answers on audio-stop; hold the answer back by cancelling
	// first, so Finish must return the context's error.
	cancel()
	if _, err := tr.Finish(c); !errors.Is(err, context.Canceled) {
		t.Fatalf("Finish with cancelled ctx: %v", err)
	}
}

// A server that accepts and then never reads: once the socket buffers are
// full a Write blocks. Ending the stream's context must unblock it at once,
// not after the 5 s write deadline (shutdown has 2 s in all).
func TestStalledServerReleasedByContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // read by nobody
		}
	}()
	chunk := make([]int16, 1600)
	for _, tc := range []struct {
		name  string
		start func(ctx context.Context) (func([]int16) error, error)
	}{
		{"transcription", func(ctx context.Context) (func([]int16) error, error) {
			tr, err := wyoming.StartTranscription(ctx, l.Addr().String(), "", "")
			if err != nil {
				return nil, err
			}
			return tr.Write, nil
		}},
		{"wake", func(ctx context.Context) (func([]int16) error, error) {
			ws, err := wyoming.StartWake(ctx, l.Addr().String(), nil)
			if err != nil {
				return nil, err
			}
			return ws.Write, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			write, err := tc.start(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conn := <-accepted
			defer conn.Close()
			done := make(chan error, 1)
			go func() {
				for {
					if err := write(chunk); err != nil {
						done <- err
						return
					}
				}
			}()
			time.Sleep(300 * time.Millisecond) // long enough to fill the buffers and block
			t0 := time.Now()
			cancel()
			select {
			case <-done:
				if took := time.Since(t0); took > time.Second {
					t.Fatalf("write returned %v after the context ended", took)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("a write blocked on a stalled server outlived its context")
			}
		})
	}
}
