//go:build cgo

package mic

import (
	"context"
	"strings"
	"testing"
	"time"
)

// miniaudio's null backend has a capture device that produces silence at
// the requested rate on its own thread: the real device lifecycle (init,
// start, data callbacks, stop, uninit) without a sound card.

func TestMalgoNullBackendLifecycle(t *testing.T) {
	src := &MalgoSource{Backends: []string{"null"}, Buffer: 2 * time.Second}
	for round := 0; round < 3; round++ { // reopening works, nothing leaks
		st, err := src.Open(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]int16, 1000)
		got := 0
		t0 := time.Now()
		for got < 4000 { // 250 ms
			n, at, err := st.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			// Stamped when the device captured it: after it opened,
			// and never after it is read.
			if now := time.Now(); at.Before(t0.Add(-time.Second)) || at.After(now) {
				t.Fatalf("audio read at %v stamped %v", now, at)
			}
			for _, v := range buf[:n] {
				if v != 0 {
					t.Fatalf("null capture produced %d", v)
				}
			}
			got += n
		}
		// Delivered at the device's pace (16 kHz), not instantly.
		if el := time.Since(t0); el < 150*time.Millisecond {
			t.Fatalf("round %d: 250 ms of audio in %v", round, el)
		}
		if d := st.Dropped(); d != 0 {
			t.Fatalf("dropped %d samples while reading", d)
		}
		// Close unblocks a reader waiting for the next period.
		errc := make(chan error, 1)
		go func() {
			for {
				if _, _, err := st.Read(buf); err != nil {
					errc <- err
					return
				}
			}
		}()
		time.Sleep(30 * time.Millisecond)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-errc:
			if err != errClosed {
				t.Fatalf("read after Close: %v, want errClosed", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Close did not unblock Read")
		}
		st.Close() // twice is harmless
	}
}

func TestMalgoDropsWhenNotRead(t *testing.T) {
	// A 100 ms buffer and a pipeline that stalls for half a second: the
	// audio thread must drop and count, never block.
	st, err := (&MalgoSource{Backends: []string{"null"}, Buffer: 100 * time.Millisecond}).Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	time.Sleep(500 * time.Millisecond)
	d := st.Dropped()
	if d < 3000 { // at least ~200 ms of the 400 ms that did not fit
		t.Fatalf("dropped %d samples, want thousands", d)
	}
	// And it recovers: reads continue with fresh audio.
	buf := make([]int16, 320)
	for i := 0; i < 20; i++ {
		if _, _, err := st.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMalgoDeviceSelection(t *testing.T) {
	ds, err := ListCaptureDevices([]string{"null"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Name != "NULL Capture Device" || !ds[0].IsDefault {
		t.Fatalf("null backend devices: %+v", ds)
	}
	for _, want := range []string{ds[0].ID, "NULL Capture Device", "null capture"} {
		st, err := (&MalgoSource{Device: want, Backends: []string{"null"}, Buffer: time.Second}).Open(context.Background())
		if err != nil {
			t.Fatalf("device %q: %v", want, err)
		}
		buf := make([]int16, 100)
		if _, _, err := st.Read(buf); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	_, err = (&MalgoSource{Device: "USB PnP Sound Device", Backends: []string{"null"}, Buffer: time.Second}).Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "NULL Capture Device") {
		t.Fatalf("unknown device: %v (the error should list the devices)", err)
	}
	if _, err := newMalgoSource(Opts{Backends: []string{"directsound9000"}}, nil); err == nil {
		t.Fatal("unknown backend accepted")
	}
}
