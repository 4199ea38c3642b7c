package mqttclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// token is a paho.Token that completes when done is closed, with err.
type token struct {
	done chan struct{}
	err  error
}

// Wait and WaitTimeout complete the interface; the package's Wait must
// select on Done instead of blocking in them.
func (t token) Wait() bool                     { panic("blocking Wait called") }
func (t token) WaitTimeout(time.Duration) bool { panic("blocking WaitTimeout called") }
func (t token) Done() <-chan struct{}          { return t.done }
func (t token) Error() error                   { return t.err }

func TestWait(t *testing.T) {
	failed := token{done: make(chan struct{}), err: errors.New("refused")}
	close(failed.done)
	if err := Wait(context.Background(), failed, time.Hour); err == nil || err.Error() != "refused" {
		t.Errorf("completed token: %v, want its error", err)
	}
	pending := token{done: make(chan struct{})}
	if err := Wait(context.Background(), pending, time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Errorf("pending token: %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, pending, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: %v, want context.Canceled", err)
	}
}

func TestTLSErrorsNameTheBlock(t *testing.T) {
	if tc, err := TLS("mqtt.tls", Files{}); err != nil || tc.RootCAs != nil || len(tc.Certificates) != 0 {
		t.Errorf("no files: %+v, %v; want the system's CAs and no certificate", tc, err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[Files]string{
		{CA: notPEM}:                "options.tls.ca: " + notPEM + " holds no PEM certificate",
		{CA: notPEM + ".missing"}:   "options.tls.ca: open ",
		{Cert: notPEM, Key: notPEM}: "options.tls.cert/key: ",
	} {
		if _, err := TLS("options.tls", f); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%+v: %v, want %q…", f, err, want)
		}
	}
}
