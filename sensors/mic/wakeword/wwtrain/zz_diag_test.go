package wwtrain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

func TestZZDiag(t *testing.T) {
	path := os.Getenv("WWDIAG")
	if path == "" {
		t.Skip()
	}
	n, err := wakeword.LoadNet(path)
	if err != nil {
		t.Fatal(err)
	}
	n.Offset = 0
	syn, _ := newSynth("/tmp/ww-s3/e0/cache")
	r := rand.New(rand.NewPCG(99, 1))
	for i := 0; i < 12; i++ {
		d := randomDelivery(r, valVoice(r), "hey robot")
		x, err := syn.say(context.Background(), d)
		if err != nil {
			t.Fatal(err)
		}
		for _, cd := range []condition{{}, {"pink", 10}} {
			c := phraseClip(x, cd, uint64(i), nil)
			sp, _ := wakeword.NewSpotter(nil, wakeword.Options{Nets: []*wakeword.Net{n}})
			var tr []float32
			sp.Process(nil, c.x, func(bool) { tr = append(tr, float32(sp.NetScore(0))) })
			s := fmt.Sprintf("%-22s %-8s len%3d:", d.Voice, cd, c.end-c.start)
			for h := c.end - 6; h < c.end+24 && h < len(tr); h += 2 {
				s += fmt.Sprintf(" %2.0f", 100*tr[h])
			}
			mx := float32(0)
			for _, v := range tr[:c.start] {
				mx = max(mx, v)
			}
			s += fmt.Sprintf(" | pre-max %2.0f", 100*mx)
			fmt.Println(s)
		}
	}
}
