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
	"time"

	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// An audio channel exports as WAV: its chunks, in order, as they were said.
func TestExportAudioAsWAV(t *testing.T) {
	w := worldmodel.New(worldmodel.Config{})
	r, err := record.New(w, record.DefaultOptions(), nil, slog.New(slog.DiscardHandler), "bot",
		func() record.Header { return record.Header{Meta: map[string]string{}} })
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.mcap")
	r.StartFile(path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	var want []int16
	var last uint64
	for c := range 3 {
		data := make([]byte, 800)
		for i := range 400 {
			v := int16(c*1000 - i)
			want = append(want, v)
			binary.BigEndian.PutUint16(data[2*i:], uint16(v))
		}
		last = w.Append(worldmodel.Observation{Source: "mic.audio", Kind: worldmodel.BlobRef, Blob: &worldmodel.Blob{MIME: mic.AudioMIME, Data: data}})
	}
	w.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: 20})
	for end := time.Now().Add(10 * time.Second); r.Through() < last; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the audio was not written")
		}
	}
	cancel()
	<-done
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
