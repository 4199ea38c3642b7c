// Command embedwav writes the speech frontend's embeddings of WAV files,
// for checks that run elsewhere (scripts/speechembed-headcheck.sh feeds
// them to a pretrained openWakeWord head under onnxruntime):
//
//	embedwav A.wav [B.wav ...]   writes A.emb, ... beside each file
//
// A .emb file is little-endian: uint32 count, then count×96 float32.
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: embedwav A.wav [B.wav ...]")
		os.Exit(2)
	}
	f, err := speechembed.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, path := range os.Args[1:] {
		if err := embed(f, path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func embed(f *speechembed.Frontend, path string) error {
	samples, err := audio.ReadWAVFile(path)
	if err != nil {
		return err
	}
	embs := f.Embed(samples)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(embs)))
	for _, e := range embs {
		for _, v := range e {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	return os.WriteFile(strings.TrimSuffix(path, ".wav")+".emb", b, 0o644)
}
