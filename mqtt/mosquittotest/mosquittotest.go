// Package mosquittotest runs a real mosquitto broker for tests, the way many
// Pis run one for Home Assistant: on a free loopback port, with persistence
// in the test's directory, stoppable cleanly or with SIGKILL, restartable on
// the same port and persistence, and bridgeable to another one. Tests skip
// when mosquitto is not installed.
package mosquittotest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Broker is one mosquitto process (or, after Stop or Kill, the settings to
// start it again).
type Broker struct {
	t      testing.TB
	bin    string
	Port   int
	dir    string
	conf   string
	cmd    *exec.Cmd
	logged chan struct{}
}

// Bin returns mosquitto's path, or skips the test.
func Bin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"mosquitto", "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if bin, err := exec.LookPath(p); err == nil {
			return bin
		}
	}
	t.Skip("mosquitto not installed (apt-get install -y mosquitto): skipping the tests against a real broker")
	return ""
}

// FreePort returns a loopback port nobody listens on right now, below the
// kernel's ephemeral range. Tests restart brokers on the same port (a
// reload, a broker killed and started again), and a port from that range
// can meanwhile become the source port of any outgoing connection on the
// machine, and stay taken in TIME_WAIT for a minute after it: on a busy CI
// the embedded broker of a reloaded node then could not listen again.
func FreePort(t testing.TB) int {
	t.Helper()
	lo := ephemeralLow()
	for range 1000 {
		port := 10000 + rand.IntN(lo-10000)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatalf("no free loopback port in 10000-%d", lo-1)
	return 0
}

// ephemeralLow is the first port of Linux's ephemeral range, or the lowest
// any common system uses.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if f := strings.Fields(string(b)); err == nil && len(f) == 2 {
		if lo, err := strconv.Atoi(f[0]); err == nil && lo > 11000 {
			return lo
		}
	}
	return 32768
}

// Start runs mosquitto on a free loopback port with persistence; extra lines
// go into its configuration. It is stopped when the test ends.
func Start(t testing.TB, extra ...string) *Broker {
	t.Helper()
	m := &Broker{t: t, bin: Bin(t), Port: FreePort(t), dir: t.TempDir(), conf: strings.Join(extra, "\n")}
	m.Start()
	t.Cleanup(m.Stop)
	return m
}

// URL is where clients connect.
func (m *Broker) URL() string { return fmt.Sprintf("tcp://127.0.0.1:%d", m.Port) }

// Start (re)starts the broker on its port, with its persistence.
func (m *Broker) Start() {
	m.t.Helper()
	conf := filepath.Join(m.dir, "mosquitto.conf")
	body := ""
	if os.Geteuid() == 0 { // mosquitto would drop to its own user, which cannot write the test's directory
		body = "user root\n"
	}
	body += fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\nmax_queued_messages 100000\nmax_inflight_messages 100\nlog_dest stderr\nlog_type error\nlog_type warning\n%s\n", m.Port, m.dir, m.conf)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		m.t.Fatal(err)
	}
	m.cmd = exec.Command(m.bin, "-c", conf)
	stderr, _ := m.cmd.StderrPipe()
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("mosquitto: %v", err)
	}
	m.logged = make(chan struct{})
	go func() { // its errors, if any, into the test log; ends when mosquitto does
		defer close(m.logged)
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			if !strings.Contains(s.Text(), "should not be run as root") {
				m.t.Logf("mosquitto: %s", s.Text())
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", m.Port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mosquitto did not listen on %d: %v", m.Port, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitSaved waits until the broker has written its persistence file after
// since (autosave_interval in its configuration sets how often): a broker
// that crashes before it saved has forgotten every session.
func (m *Broker) WaitSaved(since time.Time, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if st, err := os.Stat(filepath.Join(m.dir, "mosquitto.db")); err == nil && st.ModTime().After(since) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mosquitto did not save its sessions within %v (is autosave_interval set?)", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ForgetSessions deletes the persistence file of a stopped broker: it comes
// back knowing no sessions, subscriptions or retained messages.
func (m *Broker) ForgetSessions() error { return os.Remove(filepath.Join(m.dir, "mosquitto.db")) }

// Stop ends mosquitto cleanly (it saves its persistence file).
func (m *Broker) Stop() { m.end(syscall.SIGTERM) }

// Kill ends mosquitto with SIGKILL: no persistence saved since the last
// autosave, no goodbye to the clients, as in a power cut.
func (m *Broker) Kill() { m.end(syscall.SIGKILL) }

func (m *Broker) end(sig syscall.Signal) {
	if m.cmd == nil {
		return
	}
	_ = m.cmd.Process.Signal(sig)
	<-m.logged
	_ = m.cmd.Wait()
	m.cmd = nil
}
