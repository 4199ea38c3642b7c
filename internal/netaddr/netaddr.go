// Package netaddr holds what the listeners (the embedded broker, the
// dashboard) and the board's validation ask of an address.
package netaddr

import "net"

// IsLoopback reports whether host (no port) is "localhost" or a loopback
// IP: a listener there is reachable from this machine only.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
