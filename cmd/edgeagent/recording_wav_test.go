package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// An audio channel exports as WAV: its chunks, in order, as they were said.
func TestExportAudioAsWAV(t *testing.T) {
	var want []int16
	path := recordItems(t, record.Header{Meta: map[string]string{}}, func(w *worldmodel.Model) {
		for c := range 3 {
			data := make([]byte, 800)
			for i := range 400 {
				v := int16(c*1000 - i)
				want = append(want, v)
				binary.BigEndian.PutUint16(data[2*i:], uint16(v))
			}
			w.Append(worldmodel.Observation{Source: "mic.audio", Kind: worldmodel.BlobRef, Blob: &worldmodel.Blob{MIME: mic.AudioMIME, Data: data}})
		}
		w.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: 20})
	})
	var out bytes.Buffer
	if err := exportChannel(&out, path, "/audio/mic.audio", "wav"); err != nil {
		t.Fatal(err)
	}
	rd, err := audio.NewWAVReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := audio.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("sample %d: %d, want %d", i, got[i], want[i])
		}
	}
	err = exportChannel(io.Discard, path, "/obs/env.temperature", "wav")
	if err == nil || !strings.Contains(err.Error(), "not an audio channel") {
		t.Fatalf("a reading channel as WAV: %v", err)
	}
}

// recordItems records what add appends to a world model into a new file,
// as the recorder does with header h, and returns the completed file.
func recordItems(t *testing.T, h record.Header, add func(*worldmodel.Model)) string {
	t.Helper()
	w := worldmodel.New(worldmodel.Config{})
	r, err := record.New(w, record.DefaultOptions(), nil, slog.New(slog.DiscardHandler), "bot", func() record.Header { return h })
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.mcap")
	r.StartFile(path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	add(w)
	last := w.Append(worldmodel.Observation{Source: "end", Kind: worldmodel.Reading})
	waittest.For(t, "the items written", func() bool { return r.Through() >= last })
	cancel()
	<-done
	return path
}
