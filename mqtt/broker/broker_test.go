package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

// start starts a broker that outlives everything the test registers
// after it (cleanups run last-in first-out).
func start(t testing.TB, cfg Config) *Broker {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = quiet
	}
	b, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// deviceACL is the ACL the plane gives a device "bot" with Home
// Assistant's discovery.
var deviceACL = ACL{Prefix: "edgeagent/bot/", Discovery: "homeassistant",
	Publish: []string{"edgeagent/bot/cmd", "edgeagent/bot/estop", "homeassistant/status"}}

func hash(t *testing.T, pass string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func connectAs(url, user, pass string) (paho.Client, error) {
	o := paho.NewClientOptions().AddBroker(url).SetClientID("c-" + rand.Text()[:8]).SetUsername(user).SetPassword(pass).
		SetAutoReconnect(false).SetConnectTimeout(2 * time.Second)
	c := paho.NewClient(o)
	if err := mqttclient.Wait(context.Background(), c.Connect(), 3*time.Second); err != nil {
		return nil, err
	}
	return c, nil
}

func TestBrokerAuthAndACL(t *testing.T) {
	const prefix, cmd, estop, admin, status, haStatus = "edgeagent/bot/", "edgeagent/bot/cmd", "edgeagent/bot/estop", "edgeagent/bot/admin", "edgeagent/bot/status", "homeassistant/status"
	b := start(t, Config{Listen: "127.0.0.1:0", ACL: deviceACL, Users: []User{
		{Username: "ha", PasswordBcrypt: hash(t, "ha-pass")},
		{Username: "boss", PasswordBcrypt: hash(t, "boss-pass"), Admin: true},
	}})
	for _, tc := range []struct{ user, pass string }{{"", ""}, {"ha", "wrong"}, {"nobody", "ha-pass"}, {b.internalUser, "guess"}} {
		if c, err := connectAs(b.URL(), tc.user, tc.pass); err == nil {
			c.Disconnect(0)
			t.Fatalf("%q/%q was let in", tc.user, tc.pass)
		}
	}
	// The agent's own client: everything.
	agent, err := connectAs(b.URL(), b.internalUser, b.internalPass)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Disconnect(0)
	got := make(chan string, 16)
	if err := mqttclient.Wait(context.Background(), agent.Subscribe("#", 1, func(_ paho.Client, m paho.Message) { got <- m.Topic() + "=" + string(m.Payload()) }), time.Second); err != nil {
		t.Fatal(err)
	}
	ha, err := connectAs(b.URL(), "ha", "ha-pass")
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Disconnect(0)
	boss, err := connectAs(b.URL(), "boss", "boss-pass")
	if err != nil {
		t.Fatal(err)
	}
	defer boss.Disconnect(0)

	// Subscriptions: the device and discovery prefixes only.
	tok := ha.SubscribeMultiple(map[string]byte{"#": 1, "edgeagent/#": 1, prefix + "#": 1, "homeassistant/#": 1}, func(paho.Client, paho.Message) {})
	if err := mqttclient.Wait(context.Background(), tok, time.Second); err != nil {
		t.Fatal(err)
	}
	for filter, granted := range tok.(*paho.SubscribeToken).Result() {
		if ok := granted != 0x80; ok != (filter == prefix+"#" || filter == "homeassistant/#") {
			t.Errorf("subscription %s granted %#x", filter, granted)
		}
	}
	// Publications: plain users command, admins administer. A marker
	// published last by the same client shows everything before it has
	// been routed (QoS 0: mochi disconnects a v3 client whose QoS 1
	// publish is refused).
	delivered := func(c paho.Client, marker string, topics ...string) (out []string) {
		t.Helper()
		for _, topic := range topics {
			c.Publish(topic, 0, false, "x")
		}
		c.Publish(marker, 0, false, "end")
		for {
			select {
			case m := <-got:
				if m == marker+"=end" {
					return out
				}
				out = append(out, strings.TrimSuffix(m, "=x"))
			case <-time.After(3 * time.Second):
				t.Fatal("marker not delivered")
			}
		}
	}
	if got, want := delivered(ha, haStatus, cmd, estop, haStatus, admin, status, "elsewhere/x", prefix+"notes"), []string{cmd, estop, haStatus}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("user ha: delivered %v, want %v", got, want)
	}
	if got, want := delivered(boss, prefix+"end", admin, "elsewhere/y", prefix+"notes"), []string{admin, prefix + "notes"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("admin boss: delivered %v, want %v", got, want)
	}
}

func TestBrokerRefusesTheLANWithoutUsers(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", "192.168.1.10:1883", ":1883"} {
		_, err := Start(Config{Listen: listen, Log: quiet})
		if err == nil || !strings.Contains(err.Error(), "without authentication") {
			t.Errorf("%s: %v", listen, err)
		}
	}
}

func TestBrokerPortInUse(t *testing.T) {
	b := start(t, Config{Listen: "127.0.0.1:0"})
	_, err := Start(Config{Listen: b.Addr(), Log: quiet})
	if !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("err = %v", err)
	}
	if err := Probe(b.Addr(), time.Second); err != nil {
		t.Fatalf("probe of a broker: %v", err)
	}
	// Something that accepts and says nothing is not a broker.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			time.Sleep(300 * time.Millisecond)
			c.Close()
		}
	}()
	if err := Probe(l.Addr().String(), 200*time.Millisecond); err == nil {
		t.Fatal("a silent listener passed for a broker")
	}
}
