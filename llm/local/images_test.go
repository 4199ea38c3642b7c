package local

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
)

// wire keeps the bodies of the requests a client sends.
type wire struct {
	mu     sync.Mutex
	bodies []string
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		w.mu.Lock()
		w.bodies = append(w.bodies, string(b))
		w.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Images travel base64-encoded with the last user message, as Ollama's
// /api/chat takes them.
func TestGenerateSendsImages(t *testing.T) {
	srv := ollamatest.Start(t, "moondream:latest")
	w := &wire{}
	c := newClient(t, srv, func(o *Options) {
		o.Model, o.EmbedModel, o.HTTPClient = "moondream", "", &http.Client{Transport: w}
	})
	defer http.DefaultClient.CloseIdleConnections()
	defer http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0, 0xff, 0xd9}
	srv.Push(ollamatest.Answer{Content: "A person at the door."})
	resp, err := c.Generate(context.Background(), llm.Request{Purpose: "describe", System: "you see",
		Messages: []llm.Message{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "ok"}, {Role: "user", Content: "what is there?"}},
		Images:   [][]byte{jpeg}})
	if err != nil || resp.Content != "A person at the door." {
		t.Fatalf("%q %v", resp.Content, err)
	}
	req := srv.Requests()[len(srv.Requests())-1].Chat
	for i, m := range req.Messages {
		want := 0
		if i == len(req.Messages)-1 {
			want = 1
		}
		if len(m.Images) != want {
			t.Fatalf("message %d (%s) has %d images", i, m.Role, len(m.Images))
		}
	}
	if got := req.Messages[len(req.Messages)-1].Images[0]; !bytes.Equal(got, jpeg) {
		t.Fatalf("image arrived as % x", got)
	}
	if body := w.bodies[len(w.bodies)-1]; !strings.Contains(body, `"images":["`+base64.StdEncoding.EncodeToString(jpeg)+`"]`) {
		t.Fatalf("no base64 image on the wire: %s", body)
	}
	// Images without a user message to carry them are refused before any
	// request is made.
	n := len(srv.Requests())
	if _, err := c.Generate(context.Background(), llm.Request{Purpose: "describe", System: "x", Images: [][]byte{jpeg}}); err == nil {
		t.Fatal("images without a user message accepted")
	}
	if len(srv.Requests()) != n {
		t.Fatal("a request was sent")
	}
}
