package wyoming_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/wyoming"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
)

// tone is what the fake voice says: one sample per character, so the test
// can tell which text and voice arrived.
func tone(text, voice string) []int16 {
	out := make([]int16, 0, 3000*len(text))
	for i := range 3000 * len(text) {
		out = append(out, int16(text[i%len(text)])*int16(len(voice)+1))
	}
	return out
}

func TestSynthesize(t *testing.T) {
	t.Parallel()
	for _, split := range []int{0, 7} {
		srv, err := wyomingtest.Start(&wyomingtest.Server{Speak: tone, TTSRate: 22050, Split: split})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var got []int16
		chunks := 0
		err = wyoming.Synthesize(context.Background(), srv.Addr(), "hi", "en_US-amy-low", func(f wyoming.AudioFormat, pcm []byte) error {
			if f != (wyoming.AudioFormat{Rate: 22050, Width: 2, Channels: 1}) {
				t.Errorf("format %+v", f)
			}
			chunks++
			for i := 0; i < len(pcm); i += 2 {
				got = append(got, int16(binary.LittleEndian.Uint16(pcm[i:])))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := tone("hi", "en_US-amy-low")
		if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] || chunks != (len(want)+1023)/1024 {
			t.Fatalf("split %d: %d samples in %d chunks, want %d", split, len(got), chunks, len(want))
		}
		ev := srv.Received()
		if len(ev) != 1 || ev[0].Type != "synthesize" || ev[0].String("text") != "hi" {
			t.Fatalf("server received %+v", ev)
		}
	}
}

func TestSynthesizeFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	noVoice, _ := wyomingtest.Start(&wyomingtest.Server{})
	defer noVoice.Close()
	if err := wyoming.Synthesize(ctx, noVoice.Addr(), "hi", "", func(wyoming.AudioFormat, []byte) error { return nil }); !errors.Is(err, wyoming.ErrServer) {
		t.Errorf("server error: %v", err)
	}
	if err := wyoming.Synthesize(ctx, noVoice.Addr(), "  ", "", nil); err == nil {
		t.Error("empty text accepted")
	}
	addr := noVoice.Addr()
	dead, _ := wyomingtest.Start(&wyomingtest.Server{})
	deadAddr := dead.Addr()
	dead.Close()
	if err := wyoming.Synthesize(ctx, deadAddr, "hi", "", nil); err == nil {
		t.Errorf("dead server %s: no error", addr)
	}
	// The player refusing ends the synthesis with its error.
	srv, _ := wyomingtest.Start(&wyomingtest.Server{Speak: tone})
	defer srv.Close()
	stop := errors.New("barge-in")
	if err := wyoming.Synthesize(ctx, srv.Addr(), "hello", "", func(wyoming.AudioFormat, []byte) error { return stop }); err != stop {
		t.Errorf("player error: %v", err)
	}
	// A server that stalls mid-answer: ctx ends it at once.
	stall := make(chan struct{})
	slow, _ := wyomingtest.Start(&wyomingtest.Server{Speak: tone, Stall: stall})
	defer slow.Close()
	defer close(stall)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := wyoming.Synthesize(cctx, slow.Addr(), "hello", "", func(wyoming.AudioFormat, []byte) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("stalled server: %v", err)
	}
	if strings.Contains(addr, " ") {
		t.Fatal(addr)
	}
}
