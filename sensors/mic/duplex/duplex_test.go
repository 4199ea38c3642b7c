package duplex

import (
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

func TestLine(t *testing.T) {
	t.Parallel()
	l := Get(t.Name())
	if Get(t.Name()) != l {
		t.Fatal("two lines for one name")
	}
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if l.Speaking(c.Now(), time.Second) {
		t.Fatal("speaking before anything played")
	}
	end1, end2 := l.Begin(c), l.Begin(c)
	end1()
	end1() // twice is harmless
	c.Advance(time.Minute)
	if !l.Speaking(c.Now(), 0) {
		t.Fatal("one of two playbacks still runs")
	}
	end2()
	c.Advance(999 * time.Millisecond)
	if !l.Speaking(c.Now(), time.Second) || l.Speaking(c.Now().Add(time.Millisecond), time.Second) || l.Speaking(c.Now(), 0) {
		t.Fatal("tail")
	}
	// The air is bounded and mixes with clipping; a microphone off the
	// clock (a zero time) hears what is there at once.
	pb := l.Play(c.Now())
	pb.Emit(make([]int16, 3*maxAir))
	pb.Emit([]int16{30000, -30000})
	pb.End()
	p := []int16{10000, -10000, 7}
	hear(t, l, c, time.Time{}, p[:0])
	big := make([]int16, maxAir)
	hear(t, l, c, time.Time{}, big)
	if l.Heard() != maxAir {
		t.Fatalf("heard %d", l.Heard())
	}
	if big[maxAir-2] != 30000 || big[maxAir-1] != -30000 {
		t.Fatalf("the newest sound was dropped: %v", big[maxAir-2:])
	}
	pb = l.Play(c.Now())
	pb.Emit([]int16{30000, -30000})
	pb.End()
	hear(t, l, c, time.Time{}, p)
	if p[0] != 32767 || p[1] != -32768 || p[2] != 7 {
		t.Fatalf("mixed %v", p)
	}
}

func hear(t *testing.T, l *Line, c clock.Clock, at time.Time, p []int16) {
	t.Helper()
	if err := l.Hear(c, at, p, nil); err != nil {
		t.Fatal(err)
	}
}

// On the clock, a playback is heard where it plays and whole: a
// microphone that has caught up with a speaker running late waits for the
// rest of the sound instead of hearing a gap, and hears silence after its
// end.
func TestAirOnTheClock(t *testing.T) {
	t.Parallel()
	l := &Line{} // a fresh line each run (-count)
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t0 := c.Now()
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	pb := l.Play(ms(5)) // starts 5 ms (80 samples) into the first window
	pb.Emit(ones(240))
	w := make([]int16, 320) // 20 ms windows
	hear(t, l, c, ms(0), w)
	if w[79] != 0 || count(w[80:]) != 240 {
		t.Fatalf("first window: %v…", w[75:85])
	}
	// The mic reads on while the speaker is late: it waits for the rest.
	heard := make(chan []int16)
	go func() {
		w := make([]int16, 320)
		hear(t, l, c, ms(20), w)
		heard <- w
	}()
	select {
	case <-heard:
		t.Fatal("heard before the speaker wrote the rest")
	case <-time.After(20 * time.Millisecond):
	}
	pb.Emit(ones(200))
	select {
	case <-heard:
		t.Fatal("heard 200 samples of 320 with a gap at the end")
	case <-time.After(20 * time.Millisecond):
	}
	pb.Emit(ones(200))
	w = <-heard
	if n := count(w); n != 320 {
		t.Fatalf("the second window holds %d samples of the sound, want all 320", n)
	}
	pb.End()
	w = make([]int16, 320)
	hear(t, l, c, ms(40), w)
	if n := count(w); n != 80 || count(w[:80]) != 80 {
		t.Fatalf("the last window holds %d samples of the sound", n)
	}
	// A playback that stalls is waited for maxStall on the clock, then
	// heard as silence; a closed microphone stops waiting.
	pb = l.Play(ms(60))
	pb.Emit(ones(10))
	go func() {
		c.BlockUntil(1)
		c.Advance(maxStall)
	}()
	w = make([]int16, 320)
	hear(t, l, c, ms(60), w)
	if n := count(w); n != 10 {
		t.Fatalf("stalled window holds %d samples", n)
	}
	closed := make(chan struct{})
	close(closed)
	if err := l.Hear(c, ms(80), w, closed); err != ErrClosed {
		t.Fatalf("closed: %v", err)
	}
	pb.End()
	if l.Heard() != 650 {
		t.Fatalf("heard %d samples, played 650", l.Heard())
	}
}

func ones(n int) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

func count(w []int16) (n int) {
	for _, v := range w {
		if v == 1 {
			n++
		}
	}
	return n
}

// Speaking answers for the time audio was captured, not for now: audio
// captured while a playback ran is the robot's voice however late it is
// asked about, audio captured before it began or after its tail is not,
// and a Line remembers keptSpans ended playbacks, no more.
func TestSpeakingAtCaptureTime(t *testing.T) {
	t.Parallel()
	l := Get(t.Name())
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := clock.NewFake(t0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c.Advance(time.Second)
	end := l.Begin(c) // plays 1 s … 2 s
	c.Advance(time.Second)
	end()
	c.Advance(time.Minute) // the microphone runs a minute behind
	tail := 300 * time.Millisecond
	for ms, want := range map[int]bool{999: false, 1000: true, 1500: true, 2299: true, 2300: false, 60000: false} {
		if got := l.Speaking(at(ms), tail); got != want {
			t.Errorf("captured at %d ms: speaking %v, want %v", ms, got, want)
		}
	}
	// A playback under way counts from its start only.
	end = l.Begin(c)
	if l.Speaking(at(5000), tail) || !l.Speaking(c.Now(), tail) {
		t.Fatal("a playback under way: wrong before or after its start")
	}
	end()
	for range keptSpans + 5 {
		c.Advance(time.Second)
		l.Begin(c)()
	}
	l.mu.Lock()
	n := len(l.spans)
	l.mu.Unlock()
	if n != keptSpans || l.Speaking(at(1500), tail) {
		t.Fatalf("%d playbacks remembered, want %d, the oldest forgotten", n, keptSpans)
	}
}
