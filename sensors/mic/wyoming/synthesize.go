package wyoming

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// AudioFormat is the PCM format a server announces for its audio.
type AudioFormat struct {
	Rate     int // Hz
	Width    int // bytes per sample: 2 for the s16le every Wyoming TTS sends
	Channels int
}

func (f AudioFormat) valid() bool {
	return f.Rate >= 4000 && f.Rate <= 192000 && f.Width >= 1 && f.Width <= 4 && f.Channels >= 1 && f.Channels <= 8
}

func formatOf(e Event) AudioFormat {
	r, _ := e.Int("rate")
	w, _ := e.Int("width")
	c, _ := e.Int("channels")
	return AudioFormat{Rate: int(r), Width: int(w), Channels: int(c)}
}

// Synthesize asks a text-to-speech server (wyoming-piper on port 10200)
// to speak text, in voice when not empty (the server's default
// otherwise), and hands each audio chunk to play as it arrives, so
// playback starts with the first sentence, not after the last. It returns
// when the server says audio-stop, play fails, or ctx ends (the connection
// is closed then, so a stalled server cannot hold the speaker).
func Synthesize(ctx context.Context, addr, text, voice string, play func(f AudioFormat, pcm []byte) error) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("wyoming: nothing to say")
	}
	c, err := Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	defer c.watch(ctx)()
	data := map[string]any{"text": text}
	if voice != "" {
		data["voice"] = map[string]any{"name": voice}
	}
	if err := c.Write(Event{Type: "synthesize", Data: data}); err != nil {
		return ctxErr(ctx, err)
	}
	var f AudioFormat
	started := false
	for {
		e, err := c.Read()
		if err != nil {
			return ctxErr(ctx, err)
		}
		switch e.Type {
		case "audio-start":
			f, started = formatOf(e), true
			if !f.valid() {
				return fmt.Errorf("wyoming: audio-start with an unusable format %+v", f)
			}
		case "audio-chunk":
			if cf := formatOf(e); cf.valid() {
				f = cf // chunks carry their format too; it wins
			} else if !started {
				return errors.New("wyoming: audio-chunk without a format")
			}
			if len(e.Payload)%(f.Width*f.Channels) != 0 {
				return fmt.Errorf("wyoming: audio-chunk of %d bytes is not whole frames", len(e.Payload))
			}
			if err := play(f, e.Payload); err != nil {
				return err
			}
		case "audio-stop":
			return nil
		case "error":
			return serverError(e)
		}
	}
}
