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
	// The air is bounded and mixes with clipping.
	l.Emit(make([]int16, 3*maxAir))
	l.Emit([]int16{30000, -30000})
	p := []int16{10000, -10000, 7}
	l.Hear(p[:0])
	big := make([]int16, maxAir)
	l.Hear(big)
	if l.Heard() != maxAir {
		t.Fatalf("heard %d", l.Heard())
	}
	if big[maxAir-2] != 30000 || big[maxAir-1] != -30000 {
		t.Fatalf("the newest sound was dropped: %v", big[maxAir-2:])
	}
	l.Emit([]int16{30000, -30000})
	l.Hear(p)
	if p[0] != 32767 || p[1] != -32768 || p[2] != 7 {
		t.Fatalf("mixed %v", p)
	}
}
