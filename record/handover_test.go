package record

import (
	"path/filepath"
	"testing"

	"github.com/edgeagent/edgeagent/record/recording"
)

// A reload's hand-over: the first recorder's file stays open when it stops,
// the next recorder (on the next node's fresh world model) writes on into
// it, and the completed file holds both nodes' messages and counts them.
func TestHandOverContinuesTheFile(t *testing.T) {
	first := newRig(t, testOptions())
	path := filepath.Join(t.TempDir(), "run.mcap")
	first.r.StartFile(path)
	want := feed(t, first.world)
	waitFor(t, "messages written", func() bool { return first.r.Status().Written >= uint64(want) })
	c := first.r.HandOver()
	if c == nil {
		t.Fatal("a recording recorder handed nothing over")
	}
	first.stop()
	if in, err := recording.Read(path, nil); err == nil && in.Complete {
		t.Fatal("the handed-over file was completed at the stop")
	}

	next := newRigStopped(t, testOptions())
	if !c.To(next.r) {
		t.Fatal("the next recorder did not take the file")
	}
	next.run()
	want += feed(t, next.world)
	waitFor(t, "messages written", func() bool { return next.r.Status().Written >= uint64(want) })
	next.r.Stop()
	var in *recording.Info
	waitFor(t, "the file completed", func() bool {
		var err error
		in, err = recording.Read(path, nil)
		return err == nil && in.Complete
	})
	if in.Messages < uint64(want) {
		t.Fatalf("%d messages in the file, want both nodes' %d", in.Messages, want)
	}
	if in.Stats["written"] < uint64(want) {
		t.Fatalf("the file's counters are the second recorder's alone: %v", in.Stats)
	}
}

// A recorder that is not recording hands nothing over, and a hand-over no
// recorder takes completes the file.
func TestHandOverNobodyTakes(t *testing.T) {
	if newRig(t, testOptions()).r.HandOver() != nil {
		t.Fatal("an idle recorder handed over a recording")
	}
	rg := newRig(t, testOptions())
	path := filepath.Join(t.TempDir(), "run.mcap")
	rg.r.StartFile(path)
	want := feed(t, rg.world)
	waitFor(t, "messages written", func() bool { return rg.r.Status().Written >= uint64(want) })
	c := rg.r.HandOver()
	rg.stop()
	c.Close()
	if in, err := recording.Read(path, nil); err != nil || !in.Complete {
		t.Fatalf("the file was not completed: %v", err)
	}
}
