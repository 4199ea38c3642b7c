package wait

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestGroup(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { time.Sleep(time.Millisecond); wg.Done() }()
	if err := Group(context.Background(), &wg); err != nil {
		t.Fatalf("a group that ends: %v", err)
	}
	wg.Add(1)
	defer wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := Group(ctx, &wg); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a group still running: %v", err)
	}
}
