package say

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming"
)

// Engine turns text into speech: 16 kHz mono samples, handed to out as
// they are synthesised so that playback starts with the first words.
type Engine interface {
	Speak(ctx context.Context, text, voice string, out func([]int16) error) error
	String() string
}

// ExecEngine runs a local synthesiser (espeak-ng, piper …) with the text
// on its stdin and reads the speech from its stdout as it comes: a WAV
// stream (espeak-ng --stdout), or raw s16le mono at RawRate (piper
// --output_raw).
type ExecEngine struct {
	Command   []string
	VoiceFlag string // how the command takes a voice: "-v" for espeak-ng; "" ignores voices
	RawRate   int    // 0: the output is WAV
}

func (e *ExecEngine) String() string { return "exec " + strings.Join(e.Command, " ") }

// Speak runs the command once for text.
func (e *ExecEngine) Speak(ctx context.Context, text, voice string, out func([]int16) error) error {
	args := append([]string(nil), e.Command[1:]...)
	if voice != "" && e.VoiceFlag != "" {
		args = append(args, e.VoiceFlag, voice)
	}
	cmd := exec.CommandContext(ctx, e.Command[0], args...)
	cmd.Stdin = strings.NewReader(text) // never an argument: a text starting with "-" is not a flag
	var stderr sensors.Tail
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", e.Command[0], err)
	}
	err = e.stream(stdout, out)
	if err != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case werr != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return fmt.Errorf("%s: %w%s", e.Command[0], werr, msg)
	}
	return nil
}

func (e *ExecEngine) stream(r io.Reader, out func([]int16) error) error {
	var src audio.SampleReader
	if e.RawRate > 0 {
		src = audio.NewReader(r, audio.Format{Rate: e.RawRate, Channels: 1, Encoding: audio.S16LE})
	} else {
		w, err := audio.NewWAVReader(r)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Command[0], err)
		}
		src = w
	}
	buf := make([]int16, 1024) // 64 ms: the first audio is out within one buffer of synthesis
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if oerr := out(buf[:n]); oerr != nil {
				return oerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// WyomingEngine asks a Wyoming text-to-speech server (wyoming-piper).
type WyomingEngine struct{ Addr string }

func (e *WyomingEngine) String() string { return "wyoming " + e.Addr }

// Speak streams the server's audio, converted to 16 kHz mono.
func (e *WyomingEngine) Speak(ctx context.Context, text, voice string, out func([]int16) error) error {
	var conv *audio.Converter
	var in wyoming.AudioFormat
	var buf []int16
	return wyoming.Synthesize(ctx, e.Addr, text, voice, func(f wyoming.AudioFormat, pcm []byte) error {
		if conv == nil || f != in {
			enc, ok := map[int]audio.Encoding{1: audio.U8, 2: audio.S16LE, 3: audio.S24LE, 4: audio.S32LE}[f.Width]
			af := audio.Format{Rate: f.Rate, Channels: f.Channels, Encoding: enc}
			if err := af.Validate(); !ok || err != nil {
				return errors.New("wyoming: the server's audio format cannot be played")
			}
			conv, in = audio.NewConverter(af), f
		}
		buf = conv.Convert(buf[:0], pcm)
		if len(buf) == 0 {
			return nil
		}
		return out(buf)
	})
}
