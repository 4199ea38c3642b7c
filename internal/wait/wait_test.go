package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	if err := For(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("a short wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("an ended context: %v after %v", err, time.Since(start))
	}
}
