// Package mqttclient is what the agent's two paho clients, the control
// plane (package mqtt) and the mqtt sensor kind, do the same way: wait for a
// token without ever hanging on a lost connection, and build the TLS
// settings of a broker from the board's file paths.
package mqttclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// ErrTimeout is returned by Wait when the token did not complete in time.
var ErrTimeout = errors.New("timed out")

// Wait is paho's WaitTimeout that also gives up when ctx ends; never a bare
// Wait, which can hang forever on a lost connection.
func Wait(ctx context.Context, tok paho.Token, d time.Duration) error {
	ctx, cancel := context.WithTimeoutCause(ctx, d, ErrTimeout)
	defer cancel()
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		// ErrTimeout when d ran out, the caller's ctx.Err() when it ended.
		return context.Cause(ctx)
	}
}

// Files are the PEM files of a broker connection: the CA to trust (empty:
// the system's) and a client certificate and its key (empty: none).
type Files struct{ CA, Cert, Key string }

// TLS builds the TLS settings of a broker connection. block names the
// board block in errors ("mqtt.tls", "options.tls").
func TLS(block string, f Files) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%s.ca: %w", block, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s.ca: %s holds no PEM certificate", block, f.CA)
		}
	}
	if f.Cert != "" {
		cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%s.cert/key: %w", block, err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}
