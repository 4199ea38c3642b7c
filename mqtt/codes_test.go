package mqtt

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestErrorCodeTable walks the table of mqtt/README.md: it lists exactly
// the codes replies carry, and each one is produced, with the request's
// id, by the situation the table names.
func TestErrorCodeTable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Error codes")
	if !ok {
		t.Fatal("README.md has no ## Error codes section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	if !slices.Equal(documented, Codes) {
		t.Fatalf("README documents %v; replies carry %v", documented, Codes)
	}

	r := newRig(t, rigOpts{options: func(o *Options) { o.MaxInflight, o.Queue = 1, 1 }})
	cmd := r.interrupted(t)
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	expect := func(code, topic, payload string) {
		t.Helper()
		p.send(t, topic, payload)
		rep := decodeReply(t, p.next(t, tp.Reply))
		if rep.OK || rep.Code != code || rep.ID == nil || !strings.HasPrefix(payload, `{"id":"`+*rep.ID+`"`) {
			t.Fatalf("%s: %+v", payload, rep)
		}
	}
	expect(CodeInvalid, tp.Cmd, `{"id":"i","tool":"headlight.set","params":{"on":tru`)
	expect(CodeInvalid, tp.Cmd, `{"id":"i2","tool":"headlight.set","params":{"on":"yes"}}`)
	expect(CodeNotFound, tp.Cmd, `{"id":"n","tool":"laser.fire"}`)
	expect(CodeForbidden, tp.Cmd, `{"id":"f","tool":"estop.reset"}`)
	expect(CodeFailed, tp.Cmd, cmd)
	expect(CodeRefused, tp.Admin, `{"id":"d","tool":"tools.disable","params":{"tool":"tools.enable"}}`)

	// busy: one command runs, one waits, the rest are refused at once.
	r.lamp.delay.Store(int64(200 * time.Millisecond))
	for i := range 4 {
		p.send(t, tp.Cmd, fmt.Sprintf(`{"id":"b%d","tool":"headlight.set","params":{"on":true}}`, i))
	}
	busy := 0
	for range 4 {
		if rep := decodeReply(t, p.next(t, tp.Reply)); rep.Code == CodeBusy && rep.ID != nil {
			busy++
		}
	}
	if busy == 0 {
		t.Fatal("no busy reply")
	}
}

// TestAdminNeedsLocalAdminOptIn: the embedded broker without users refuses
// the admin topic unless mqtt.local_admin says every local process may
// administer.
func TestAdminNeedsLocalAdminOptIn(t *testing.T) {
	r := newRig(t, rigOpts{noLocalAdmin: true})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	p.send(t, tp.Admin, `{"id":"a1","tool":"estop.reset"}`)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeForbidden || *rep.ID != "a1" || !strings.Contains(rep.Error, "mqtt.local_admin") {
		t.Fatalf("%+v", rep)
	}
	if ok, who := r.plane.adminPolicy(true); ok || !strings.Contains(who, "nobody") {
		t.Fatalf("policy %v %q", ok, who)
	}
}
