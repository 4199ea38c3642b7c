// Command convert turns openWakeWord's melspectrogram.onnx and
// embedding_model.onnx into the speech embedding's model file. It checks
// that the graphs are the ones sensors/mic/speechembed implements (op by
// op, with the shapes and constants it relies on) and refuses anything
// else. scripts/fetch-wakeword-frontend.sh runs it:
//
//	go run ./sensors/mic/speechembed/internal/convert -mel M.onnx -embedding E.onnx -out FILE
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/onnx"
)

func main() {
	mel := flag.String("mel", "", "melspectrogram.onnx")
	emb := flag.String("embedding", "", "embedding_model.onnx")
	out := flag.String("out", "", "model file to write")
	flag.Parse()
	if *mel == "" || *emb == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*mel, *emb, *out); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(melPath, embPath, out string) error {
	melModel, err := load(melPath)
	if err != nil {
		return err
	}
	embModel, err := load(embPath)
	if err != nil {
		return err
	}
	ts, err := melTensors(melModel)
	if err != nil {
		return fmt.Errorf("%s: %w", melPath, err)
	}
	convs, err := embeddingTensors(embModel)
	if err != nil {
		return fmt.Errorf("%s: %w", embPath, err)
	}
	b, err := modelfile.Encode(append(ts, convs...))
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

func load(path string) (*onnx.Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := onnx.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
