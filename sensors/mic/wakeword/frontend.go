package wakeword

// A Frontend turns the 16 kHz stream into speech embeddings: one vector of
// EmbedDim values per EmbedHop samples (80 ms), each describing the last
// second or so of sound. The heads score a window of the last WindowLen
// embeddings. The product's frontend is openWakeWord's speech embedding
// (package speechembed), trained on real speech; wakewordtest has a small
// deterministic one for tests.
type Frontend interface {
	// Push consumes samples and appends every embedding they complete,
	// oldest first.
	Push(dst []Embedding, samples []int16) []Embedding
	// Reset forgets the stream: the next Push starts a new one, as if
	// the frontend had just been made.
	Reset()
}

// Embedding is one frontend output.
type Embedding = [EmbedDim]float32

const (
	// EmbedDim is the length of one embedding.
	EmbedDim = 96
	// WindowLen is how many consecutive embeddings a head reads (1.28 s).
	WindowLen = 16
	// EmbedHop is the stream time between embeddings, in samples (80 ms).
	EmbedHop = 1280
)
