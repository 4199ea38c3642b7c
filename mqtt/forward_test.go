package mqtt

import (
	"io"
	"net"
	"sync"
	"testing"
)

// forward listens on addr and pipes every connection to the broker at to,
// so that a test decides when a broker becomes reachable where a client
// already retries (after a peer has subscribed there). Everything is
// closed when the test ends.
func forward(t testing.TB, addr, to string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	keep := func(cs ...net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		if conns == nil {
			return false
		}
		for _, c := range cs {
			conns[c] = true
		}
		return true
	}
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		conns = nil
		mu.Unlock()
		wg.Wait()
	})
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		_ = dst.Close()
		_ = src.Close()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				_ = in.Close()
				continue
			}
			if !keep(in, out) {
				_ = in.Close()
				_ = out.Close()
				return
			}
			wg.Add(2)
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
}
