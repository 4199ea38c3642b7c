package mqtt

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/mqtt/pump"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The pump reads the world model by cursor, like the dashboard and the
// recorder: what it falls too far behind to publish is counted in
// agent.status, and it goes on with what the rings still hold.
func TestPumpCountsWhatItMissed(t *testing.T) {
	const poll, burst, held = 300 * time.Millisecond, 50, 8
	r := newRig(t, rigOpts{world: worldmodel.Config{Events: held},
		options: func(o *Options) { o.Poll = poll }})
	r.start(t)
	peer := dialPeer(t, r.url(), "watcher", r.topics().Events)
	time.Sleep(2 * poll) // the pump has read everything up to now
	start := time.Now()
	for i := range burst {
		r.world.Record(worldmodel.Event{Kind: "tick", Source: "test", Priority: worldmodel.Low, Message: fmt.Sprint(i)})
	}
	if took := time.Since(start); took > poll/2 {
		t.Skipf("the burst took %v, too long to outrun a pump polling every %v", took, poll)
	}
	// The last of the burst arrives within a Poll of the wake-up.
	last := fmt.Sprint(burst - 1)
	peer.nextMatching(t, r.topics().Events, func(m paho.Message) bool {
		var v pump.Event
		return json.Unmarshal(m.Payload(), &v) == nil && v.Message == last
	})
	var st struct {
		StreamMissed uint64 `json:"stream_missed"`
	}
	data, _ := json.Marshal(r.plane.Status())
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	if st.StreamMissed < burst-held {
		t.Fatalf("stream_missed %d, want at least %d (%s)", st.StreamMissed, burst-held, data)
	}
}
