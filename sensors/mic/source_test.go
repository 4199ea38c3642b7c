package mic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// The test binary doubles as the capture command of the exec source: with
// MIC_HELPER set it writes raw PCM to stdout instead of running tests.
func TestMain(m *testing.M) {
	switch os.Getenv("MIC_HELPER") {
	case "":
		// Every sensor, stream, Wyoming client and capture goroutine must
		// be gone when the tests are.
		goleak.VerifyTestMain(m)
		return
	case "tone48k":
		// 0.5 s of a 1 kHz tone at 48 kHz stereo s16le (left 8000, right
		// 4000 peak), written in odd-sized pieces, then a clean exit.
		var b []byte
		for i := 0; i < 24000; i++ {
			v := math.Sin(2 * math.Pi * 1000 * float64(i) / 48000)
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(8000*v)))
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(4000*v)))
		}
		for len(b) > 0 {
			n := min(len(b), 777)
			os.Stdout.Write(b[:n])
			b = b[n:]
		}
		os.Exit(0)
	case "fail":
		os.Stdout.Write(make([]byte, 3200))
		fmt.Fprintln(os.Stderr, "arecord: main:828: audio open error: No such file or directory")
		os.Exit(3)
	case "forever":
		b := make([]byte, 3200)
		for {
			if _, err := os.Stdout.Write(b); err != nil {
				os.Exit(1)
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "short":
		// 0.2 s of quiet noise, then exit: a device that keeps failing.
		s := make([]int16, 3200)
		audio.NewNoise("white", -50, 1).Fill(s)
		binary.Write(os.Stdout, binary.LittleEndian, s)
		os.Exit(0)
	}
	os.Exit(2)
}

func helper(mode string) []string {
	return []string{"/usr/bin/env", "MIC_HELPER=" + mode, os.Args[0]}
}

func readAll(t *testing.T, st Stream) ([]int16, error) {
	t.Helper()
	var out []int16
	buf := make([]int16, 1000)
	for {
		n, _, err := st.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

func amplitudeAt(s []int16, freq float64) float64 {
	var re, im float64
	for i, v := range s {
		ph := 2 * math.Pi * freq * float64(i) / audio.Rate
		re += float64(v) * math.Cos(ph)
		im += float64(v) * math.Sin(ph)
	}
	return 2 * math.Hypot(re, im) / float64(len(s))
}

func TestExecSourceConverts(t *testing.T) {
	src := &ExecSource{Command: helper("tone48k"), Format: audio.Format{Rate: 48000, Channels: 2, Encoding: audio.S16LE}}
	st, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := readAll(t, st)
	if err == nil || !strings.Contains(err.Error(), "ended its output") {
		t.Fatalf("end of output: %v", err)
	}
	if len(s) < 7900 || len(s) > 8000 {
		t.Fatalf("%d samples at 16 kHz from 0.5 s", len(s))
	}
	// Mono is the average of the channels: 6000 peak.
	if a := amplitudeAt(s[1000:7000], 1000); math.Abs(a-6000) > 60 {
		t.Fatalf("tone amplitude %.0f, want 6000", a)
	}
}

func TestExecSourceReportsFailure(t *testing.T) {
	src := &ExecSource{Command: helper("fail"), Format: audio.Mono16k}
	st, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := readAll(t, st)
	if len(s) != 1600 {
		t.Errorf("got %d samples before the failure, want 1600", len(s))
	}
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "audio open error") {
		t.Fatalf("error %v: want the exit status and the command's stderr", err)
	}
	if _, err := (&ExecSource{Command: []string{"/nonexistent/arecord"}, Format: audio.Mono16k}).Open(context.Background()); err == nil {
		t.Fatal("a missing command opened")
	}
}

// Close stops the capture command, after which reads end. A shell that
// runs the command as its child leaves the grandchild holding stdout and
// stderr when it is killed: Close must still return (and the grandchild
// end), or the sensor never stops.
func TestExecSourceCloseStopsCommand(t *testing.T) {
	for _, c := range []struct {
		name    string
		command []string
		within  time.Duration
	}{
		{"child", helper("forever"), 3 * time.Second},
		{"grandchild", []string{"/bin/sh", "-c", "MIC_HELPER=forever " + os.Args[0] + "; exit 0"}, 5 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := (&ExecSource{Command: c.command, Format: audio.Mono16k}).Open(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]int16, 100)
			if _, _, err := st.Read(buf); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { st.Close(); close(done) }()
			select {
			case <-done:
			case <-time.After(c.within):
				t.Fatalf("Close did not stop the command within %v", c.within)
			}
			if _, err := readAll(t, st); err == nil {
				t.Fatal("read after close succeeded forever")
			}
		})
	}
}

func writeWAV(t *testing.T, name string, s []int16) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := audio.WriteWAVFile(p, s); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWAVSource(t *testing.T) {
	s := make([]int16, audio.Rate*3/10) // 0.3 s ramp
	for i := range s {
		s[i] = int16(i)
	}
	p := writeWAV(t, "ramp.wav", s)

	// Paced: takes the file's duration, and hands out the exact samples.
	st, err := (&WAVSource{Path: p, Pace: true}).Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	got, err := readAll(t, st)
	el := time.Since(t0)
	st.Close()
	if err != io.EOF || len(got) != len(s) || got[4000] != 4000 {
		t.Fatalf("paced read: %d samples, err %v", len(got), err)
	}
	if el < 270*time.Millisecond || el > 2*time.Second {
		t.Fatalf("0.3 s file replayed in %v", el)
	}
	// Unpaced and looping: three times round in much less than real time.
	st, err = (&WAVSource{Path: p, Loop: true}).Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var all []int16
	buf := make([]int16, 999)
	t0 = time.Now()
	for len(all) < 3*len(s) {
		n, _, err := st.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, buf[:n]...)
	}
	if all[len(s)] != 0 || all[len(s)+1] != 1 || all[2*len(s)+123] != 123 {
		t.Fatal("loop does not restart at the beginning")
	}
	if time.Since(t0) > 200*time.Millisecond {
		t.Fatalf("unpaced replay slow: %v", time.Since(t0))
	}
	if _, err := (&WAVSource{Path: filepath.Join(t.TempDir(), "none.wav")}).Open(context.Background()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestSimSource(t *testing.T) {
	clip := make([]int16, audio.Rate/5) // 0.2 s, 1 kHz at -12 dBFS
	for i := range clip {
		clip[i] = int16(8000 * math.Sin(2*math.Pi*1000*float64(i)/audio.Rate))
	}
	p := writeWAV(t, "beep.wav", clip)
	src := &SimSource{Opts: SimOpts{Noise: "pink", NoiseDBFS: -60, Period: time.Second, Seed: 1,
		Utterances: []UtteranceOpts{{File: p, At: 500 * time.Millisecond, GainDB: -6}}}}
	st, err := src.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var s []int16
	buf := make([]int16, 1234)
	for len(s) < 2*audio.Rate {
		n, _, err := st.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		s = append(s, buf[:n]...)
	}
	level := func(from, to float64) float64 {
		return audio.DBFS(audio.RMS(s[int(from*audio.Rate):int(to*audio.Rate)]))
	}
	// The beep (-15.3 dBFS RMS) at 0.5–0.7 s and again one period later,
	// 6 dB down.
	for _, at := range []float64{0.5, 1.5} {
		if l := level(at+0.02, at+0.18); math.Abs(l-(-15.26-6)) > 0.5 {
			t.Errorf("beep at %.1f s: %.1f dBFS, want -21.3", at, l)
		}
	}
	// Background in between.
	if l := level(0.1, 0.45); math.Abs(l+60) > 1.5 {
		t.Errorf("background %.1f dBFS, want -60", l)
	}
	if _, err := (&SimSource{Opts: SimOpts{Noise: "none", Utterances: []UtteranceOpts{{File: "nope.wav"}}}}).Open(context.Background()); err == nil {
		t.Error("a missing utterance file opened")
	}
}

// A paced source stamps its audio with the time it is due, as a device
// stamps what it captured, however late it is read: here the reader comes
// a second late and gets that second's audio at once, each read stamped
// with its last sample's time while the clock stays a second on.
func TestPacedSourcesStampCaptureTime(t *testing.T) {
	wav := writeWAV(t, "quiet.wav", make([]int16, 2*audio.Rate))
	for name, src := range map[string]func(clock.Clock) Source{
		"wav": func(c clock.Clock) Source { return &WAVSource{Path: wav, Pace: true, Clock: c} },
		"sim": func(c clock.Clock) Source {
			return &SimSource{Opts: SimOpts{Noise: "pink", NoiseDBFS: -60, Seed: 1}, Pace: true, Clock: c}
		},
	} {
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		clk := clock.NewFake(t0)
		st, err := src(clk).Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]int16, 1000)
		type read struct {
			n   int
			at  time.Time
			err error
		}
		first := make(chan read, 1)
		go func() {
			n, at, err := st.Read(buf)
			first <- read{n, at, err}
		}()
		clk.BlockUntil(1) // the first read waits for its samples to be due
		clk.Advance(time.Second)
		r := <-first
		total := r.n
		for r.err == nil {
			if want := t0.Add(time.Duration(total) * time.Second / audio.Rate); !r.at.Equal(want) {
				t.Fatalf("%s: read ending at sample %d stamped %v, want %v", name, total, r.at.Sub(t0), want.Sub(t0))
			}
			if total == audio.Rate {
				break
			}
			// No further than the second: later samples are not due.
			r.n, r.at, r.err = st.Read(buf[:min(len(buf), audio.Rate-total)])
			total += r.n
		}
		if r.err != nil || total != audio.Rate || !clk.Now().Equal(t0.Add(time.Second)) {
			t.Fatalf("%s: %d samples, err %v, clock %v", name, total, r.err, clk.Now().Sub(t0))
		}
		st.Close()
	}
}
