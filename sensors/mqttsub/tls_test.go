package mqttsub

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// A second broker over TLS (mosquitto with a certificate of a private CA):
// the sensor trusts the CA given in options.tls.ca, and refuses the broker
// without it.
func TestTLSMosquitto(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("mosquitto not installed (apt-get install mosquitto)")
	}
	dir := t.TempDir()
	ca, caKey := certificate(t, dir, "ca", nil, nil)
	certificate(t, dir, "server", ca, caKey)
	port := mosquittotest.FreePort(t)
	conf := filepath.Join(dir, "mosquitto.conf")
	// user root: as root, mosquitto would otherwise become user mosquitto
	// and could not read the test's private files.
	os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\ncafile %s\ncertfile %s\nkeyfile %s\n",
		port, filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key")), 0o600)
	cmd := exec.Command(bin, "-c", conf)
	var logs syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatalf("mosquitto did not start: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	url := fmt.Sprintf("ssl://127.0.0.1:%d", port)
	block := func(tls string) string {
		return `
- name: secure
  kind: mqtt
  options: {broker: "` + url + `", ` + tls + `retry: {initial: 1s}, topics: [{topic: t/v, readings: [{name: v}]}]}
`
	}
	cfg := sensortest.Board(t, "sim", block("tls: {ca: "+filepath.Join(dir, "ca.pem")+"}, "))
	rec := sensortest.NewRecorder()
	_, stop := start(t, cfg, rec)
	defer stop()
	untrusted := sensortest.NewRecorder()
	_, stop2 := start(t, sensortest.Board(t, "sim", block("")), untrusted)
	defer stop2()
	rec.WaitFor(t, 5*time.Second, "connected", func() bool { return len(rec.Observations("secure.health")) > 0 })
	pub := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("tls-pub").SetTLSConfig(clientTLS(t, dir)))
	if tok := pub.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	defer pub.Disconnect(50)
	publish(t, pub, "t/v", "42")
	rec.WaitFor(t, 5*time.Second, "reading over TLS", func() bool { return len(rec.Values("secure.v")) == 1 })
	untrusted.WaitFor(t, 5*time.Second, "refusal", func() bool { return len(untrusted.Events(sensors.EventFault)) == 1 })
	if msg := untrusted.Events(sensors.EventFault)[0].Message; !strings.Contains(msg, "certificate") {
		t.Errorf("untrusted broker: %q", msg)
	}
}

// certificate writes <name>.pem and <name>.key: a CA when parent is nil,
// else a server certificate for 127.0.0.1 signed by it.
func certificate(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	signer, signKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	} else {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		signer, signKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	os.WriteFile(filepath.Join(dir, name+".pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

func clientTLS(t *testing.T, dir string) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	b, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil || !pool.AppendCertsFromPEM(b) {
		t.Fatal("ca.pem")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
