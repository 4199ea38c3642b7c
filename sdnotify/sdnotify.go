// Package sdnotify speaks systemd's notify protocol (sd_notify(3)): READY=1
// once the agent is up, WATCHDOG=1 while it is healthy, STOPPING=1 on the
// way out. Outside systemd (no NOTIFY_SOCKET) every call is a no-op, so the
// same binary runs under a terminal, a container or a unit file.
package sdnotify

import (
	"net"
	"os"
	"strconv"
	"time"
)

// Notify sends one state string. It reports whether systemd was told.
func Notify(state string) (bool, error) {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return false, nil
	}
	if addr[0] == '@' { // abstract namespace socket
		addr = "\x00" + addr[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, err
	}
	return true, nil
}

// WatchdogInterval is how often to send WATCHDOG=1: half of WatchdogSec,
// as sd_watchdog_enabled(3) recommends. ok is false when the unit has no
// watchdog or it is meant for another process.
func WatchdogInterval() (d time.Duration, ok bool) {
	usec, err := strconv.ParseInt(os.Getenv("WATCHDOG_USEC"), 10, 64)
	if err != nil || usec <= 0 {
		return 0, false
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0, false
	}
	return time.Duration(usec) * time.Microsecond / 2, true
}
