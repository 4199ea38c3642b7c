package broker

import (
	"context"
	"sync"
	"testing"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
)

// heldFanout holds mochi between its PUBACK to a QoS 1 publisher and its
// fan-out of the message (where OnQosComplete runs) until release closes.
type heldFanout struct {
	mochi.HookBase
	release <-chan struct{}
}

func (h *heldFanout) ID() string                                  { return "held-fanout" }
func (h *heldFanout) Provides(b byte) bool                        { return b == mochi.OnQosComplete }
func (h *heldFanout) OnQosComplete(*mochi.Client, packets.Packet) { <-h.release }

// TestDrainWaitsForTheFanout: the agent's last message (its "stopped"
// status) is acknowledged to the agent before mochi hands it to the
// subscribers; Drain returns only once a subscriber has it, even when the
// fan-out comes after the agent has its PUBACK and has disconnected (a
// loaded machine: node's TestMQTTControlPlaneOnANode saw no "stopped").
func TestDrainWaitsForTheFanout(t *testing.T) {
	b := start(t, Config{Listen: "127.0.0.1:0"})
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	if err := b.srv.AddHook(&heldFanout{release: release}, nil); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	sub, err := connectAs(b.URL(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Disconnect(0)
	tok := sub.Subscribe("edgeagent/bot/status", 1, func(_ paho.Client, m paho.Message) { got <- string(m.Payload()) })
	if err := mqttclient.Wait(context.Background(), tok, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	// Not retained, as the plane's is: mochi also hands a retained message
	// to a subscription it is still setting up, a second copy.
	agent := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID("the-agent").SetAutoReconnect(false))
	if err := mqttclient.Wait(context.Background(), agent.Connect(), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := mqttclient.Wait(context.Background(), agent.Publish("edgeagent/bot/status", 1, false, "stopped"), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	agent.Disconnect(0)
	// The fan-out stays held until Drain returns (a Drain that does not
	// wait for it returns now) or for 200 ms (one that waits gets it then).
	drained := make(chan struct{})
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Drain(ctx, "the-agent")
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(200 * time.Millisecond):
		free()
		<-drained
	}
	select {
	case s := <-got:
		if s != "stopped" {
			t.Fatalf("got %q", s)
		}
	default:
		t.Fatal("Drain returned before the subscriber had the agent's last message")
	}
}
