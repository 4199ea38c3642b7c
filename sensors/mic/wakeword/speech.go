package wakeword

import "github.com/edgeagent/edgeagent/sensors/mic/speechembed"

// SpeechFrontendID names the product's frontend in head files: a head
// runs only over the frontend it was trained on.
const SpeechFrontendID = "speechembed/openwakeword-0.1.1"

// NewSpeechFrontend is the product's frontend: openWakeWord's speech
// embedding (package speechembed), one stream.
func NewSpeechFrontend() (Frontend, error) {
	f, err := speechembed.New()
	if err != nil {
		return nil, err
	}
	s := &speechStream{s: f.NewStream()}
	s.emit = s.add
	return s, nil
}

type speechStream struct {
	s    *speechembed.Stream
	dst  []Embedding
	emit func(*[speechembed.EmbeddingSize]float32)
}

func (s *speechStream) add(e *[speechembed.EmbeddingSize]float32) { s.dst = append(s.dst, *e) }

func (s *speechStream) Push(dst []Embedding, samples []int16) []Embedding {
	s.dst = dst
	s.s.Write(samples, s.emit)
	dst, s.dst = s.dst, nil
	return dst
}

func (s *speechStream) Reset() { s.s.Reset() }
