package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestNotifyReachesSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	sent, err := Notify("READY=1")
	if err != nil || !sent {
		t.Fatalf("sent=%v err=%v", sent, err)
	}
	buf := make([]byte, 64)
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	n, err := conn.Read(buf)
	if err != nil || string(buf[:n]) != "READY=1" {
		t.Fatalf("got %q, %v", buf[:n], err)
	}
}

func TestNoSocketIsNoop(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := Notify("READY=1"); sent || err != nil {
		t.Fatalf("sent=%v err=%v", sent, err)
	}
}

func TestWatchdogInterval(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "10000000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	if d, ok := WatchdogInterval(); !ok || d != 5*time.Second {
		t.Fatalf("%v %v", d, ok)
	}
	t.Setenv("WATCHDOG_PID", "1")
	if _, ok := WatchdogInterval(); ok {
		t.Fatal("watchdog for another pid accepted")
	}
	t.Setenv("WATCHDOG_USEC", "")
	if _, ok := WatchdogInterval(); ok {
		t.Fatal("no watchdog accepted")
	}
}
