package camera

import (
	"context"
	"testing"
)

// TestHandoffReusesTheLastReleasedFrame plays capture and detection in the
// order they run while detection keeps up (capture takes its next frame
// before detection releases the last one): two frames take turns and the
// third is never handed out, so it never gets a buffer.
func TestHandoffReusesTheLastReleasedFrame(t *testing.T) {
	ctx := context.Background()
	for _, lossless := range []bool{false, true} {
		h := newHandoff(lossless)
		used := map[*Frame]bool{}
		f := h.get(ctx)
		for range 10 {
			used[f] = true
			h.put(ctx, f)
			f = h.get(ctx)       // capture waits for its next frame …
			h.release(<-h.ready) // … while detection handles this one
		}
		if len(used) != 2 {
			t.Fatalf("lossless %v: %d frames used, want 2", lossless, len(used))
		}
	}
}

// TestHandoffLossyKeepsTheNewest fills frames faster than detection takes
// them: each new frame replaces the waiting one, which is counted as
// dropped and freed, and the three frames are never lost.
func TestHandoffLossyKeepsTheNewest(t *testing.T) {
	ctx := context.Background()
	h := newHandoff(false)
	var last *Frame
	for i := range 5 {
		f := h.get(ctx)
		f.Seq = uint64(i)
		h.put(ctx, f)
		last = f
	}
	if got := <-h.ready; got != last || got.Seq != 4 {
		t.Fatalf("ready holds frame %d, want the newest (4)", got.Seq)
	}
	if d := h.dropped.Load(); d != 4 {
		t.Fatalf("%d dropped, want 4", d)
	}
	h.release(last)
	ctx2, cancel := context.WithCancel(ctx)
	for range 3 {
		if h.get(ctx2) == nil {
			t.Fatal("a frame went missing")
		}
	}
	cancel()
	if h.get(ctx2) != nil {
		t.Fatal("a fourth frame out of three")
	}
}
