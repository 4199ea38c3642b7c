package broker

import (
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// TestBrokerCloseLeavesNoConnectionHanging: a client that reconnects while
// the embedded broker stops (a config reload restarts it) must see its
// connection closed, not accepted and then left alone, which kept a real
// client waiting out its 30 s connect timeout before it tried the new
// broker (TestReloadOverMQTT in CI).
func TestBrokerCloseLeavesNoConnectionHanging(t *testing.T) {
	for round := range 5 {
		b := start(t, Config{Listen: "127.0.0.1:0", ACL: deviceACL})
		var (
			mu    sync.Mutex
			conns []net.Conn
			wg    sync.WaitGroup
		)
		stop := make(chan struct{})
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
					if err != nil {
						continue // refused once the listener is gone
					}
					_, _ = c.Write(connectPacket("hang-test"))
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		closed := make(chan struct{})
		go func() { _ = b.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the broker did not close in 10 s", round)
		}
		time.Sleep(20 * time.Millisecond) // dials racing the close finish
		close(stop)
		wg.Wait()
		hanging := 0
		for _, c := range conns {
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					if errors.Is(err, os.ErrDeadlineExceeded) {
						hanging++
					}
					break
				}
			}
			_ = c.Close()
		}
		if hanging > 0 {
			t.Fatalf("round %d: %d of %d connections left open by a closed broker", round, hanging, len(conns))
		}
		t.Logf("round %d: %d connections, all closed", round, len(conns))
	}
}

// connectPacket is an MQTT 3.1.1 CONNECT with a clean session.
func connectPacket(id string) []byte {
	body := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, byte(len(id))}
	body = append(body, id...)
	return append([]byte{0x10, byte(len(body))}, body...)
}
