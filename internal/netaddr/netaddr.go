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

// Dialable turns a listen address into one to dial from this machine:
// 0.0.0.0, :: and an empty host become loopback.
func Dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
