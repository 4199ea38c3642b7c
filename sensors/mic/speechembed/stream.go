package speechembed

// Stream turns 16 kHz audio into embeddings as it arrives. It is not safe
// for concurrent use (one Stream per audio source; they may share the
// Frontend). Writing allocates nothing.
type Stream struct {
	f       *Frontend
	pending [hopInput]float32 // hopContext samples of the last hop, then the current one
	fill    int               // samples of the current hop in pending
	hops    int
	scratch melScratch
	frames  [hopFrames * mels]float32
	acts    []act // acts[0] is the mel strip, acts[i+1] the output of layer i
	emb     [EmbeddingSize]float32
	onMel   func(frames []float32)
}

// NewStream starts a stream as if silence (zeros) came before it.
func (f *Frontend) NewStream() *Stream {
	s := &Stream{f: f, acts: make([]act, len(f.layers)+1)}
	rows, w, c := hopFrames, mels, 1 // a hop adds hopFrames mel rows
	for i := range f.layers {
		l := &f.layers[i]
		s.acts[i] = newAct(w, c, rows+l.lookback())
		if l.op.Cout == 0 {
			rows /= l.op.PH
		}
		w, c = l.outW, l.outC
	}
	s.acts[len(f.layers)] = newAct(w, c, rows) // emitted and dropped each hop
	return s
}

// Reset forgets all audio, as if the stream were new.
func (s *Stream) Reset() {
	s.pending, s.fill, s.hops = [hopInput]float32{}, 0, 0
	for i := range s.acts {
		s.acts[i].first, s.acts[i].n = 0, 0
	}
}

// Write feeds samples and calls emit with each embedding they complete
// (one per 1280 samples once 0.8 s have been heard). The array is reused:
// copy it to keep it.
func (s *Stream) Write(samples []int16, emit func(*[EmbeddingSize]float32)) {
	write(s, samples, 1, emit)
}

// WriteFloat is Write for samples in [−1, 1] (scaled by 32768 to the int16
// range the features are defined on; not rounded).
func (s *Stream) WriteFloat(samples []float32, emit func(*[EmbeddingSize]float32)) {
	write(s, samples, 32768, emit)
}

func write[T int16 | float32](s *Stream, samples []T, scale float32, emit func(*[EmbeddingSize]float32)) {
	for len(samples) > 0 {
		dst := s.pending[hopContext+s.fill:]
		n := min(len(dst), len(samples))
		for i, v := range samples[:n] {
			dst[i] = float32(v) * scale
		}
		samples = samples[n:]
		s.filled(n, emit)
	}
}

func (s *Stream) filled(n int, emit func(*[EmbeddingSize]float32)) {
	s.fill += n
	if s.fill < HopSamples {
		return
	}
	s.fill = 0
	s.f.mel.hop(s.pending[:], &s.scratch, s.frames[:])
	copy(s.pending[:hopContext], s.pending[HopSamples:])
	if s.onMel != nil {
		s.onMel(s.frames[:])
	}
	frames := s.frames[:]
	if s.hops == 0 {
		frames = frames[netSkip*mels:]
	}
	s.hops++
	in := &s.acts[0]
	rows := len(frames) / mels
	dst := in.grow(rows)
	for r := range rows {
		row := dst[r*(mels+2) : (r+1)*(mels+2)]
		row[0], row[mels+1] = 0, 0
		copy(row[1:], frames[r*mels:(r+1)*mels])
	}
	for i := range s.f.layers {
		s.f.layers[i].step(&s.acts[i], &s.acts[i+1])
	}
	out := &s.acts[len(s.acts)-1]
	for r := range out.n {
		copy(s.emb[:], out.data[r*out.rowLen()+out.c:]) // past the pad column
		emit(&s.emb)
	}
	out.drop(out.first + out.n)
}
