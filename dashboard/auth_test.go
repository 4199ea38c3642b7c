package dashboard

import (
	"encoding/base64"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/netaddr"
	"github.com/edgeagent/edgeagent/store"
)

const testRemote = "192.0.2.7:50000"

func testAuth(t *testing.T, clk clock.Clock, st store.Store) *auth {
	t.Helper()
	hash, _ := bcrypt.GenerateFromPassword([]byte("secret"), bcrypt.MinCost)
	o := DefaultOptions()
	o.Users = []User{{Name: "alice", PasswordBcrypt: string(hash), Role: RoleAdmin}, {Name: "bob", PasswordBcrypt: string(hash), Role: RoleViewer}}
	o.Tokens = []Token{{SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", Role: RoleViewer}} // sha256("test")
	a, err := newAuth(o, st, clk, newThrottle(t.Context(), clk, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// An unknown name is checked against a hash as costly as the dearest
// user's, so the answer's time does not tell which names exist.
func TestUnknownUserCostsAsMuchAsAKnownOne(t *testing.T) {
	cheap, _ := bcrypt.GenerateFromPassword([]byte("a"), bcrypt.MinCost)
	dear, _ := bcrypt.GenerateFromPassword([]byte("b"), bcrypt.MinCost+2)
	o := DefaultOptions()
	o.Users = []User{{Name: "alice", PasswordBcrypt: string(cheap), Role: RoleAdmin}, {Name: "bob", PasswordBcrypt: string(dear), Role: RoleViewer}}
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	a, err := newAuth(o, store.NewMemory(), clk, newThrottle(t.Context(), clk, slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.login(testRemote, "mallory", "b", ""); err == nil {
		t.Fatal("an unknown user logged in")
	}
	if c, err := bcrypt.Cost(a.dummyHash()); err != nil || c != bcrypt.MinCost+2 {
		t.Fatalf("the unknown name's hash has cost %d (%v), the dearest user's is %d", c, err, bcrypt.MinCost+2)
	}
}

func TestLoginAndCookies(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	st := store.NewMemory()
	a := testAuth(t, clk, st)
	if _, err := a.login(testRemote, "alice", "wrong", ""); err == nil {
		t.Fatal("a wrong password logged in")
	}
	if _, err := a.login(testRemote, "mallory", "secret", ""); err == nil || err.Error() != "wrong user name or password" {
		t.Fatalf("unknown user: %v (the answer must not say which part was wrong)", err)
	}
	s, err := a.login(testRemote, "bob", "secret", "")
	if err != nil || s.Role != RoleViewer {
		t.Fatalf("bob: %+v %v", s, err)
	}
	got, ok := a.verify(s.cookie)
	if !ok || got.User != "bob" || got.Role != RoleViewer {
		t.Fatalf("verify: %+v %v", got, ok)
	}
	// A cookie edited to claim admin fails its signature.
	payload, sig, _ := strings.Cut(s.cookie, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	admin := strings.Replace(string(raw), `"r":"viewer"`, `"r":"admin"`, 1)
	if admin == string(raw) {
		t.Fatalf("payload %s has no role to forge", raw)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte(admin)) + "." + sig
	if _, ok := a.verify(forged); ok {
		t.Fatal("an edited cookie verified")
	}
	if _, ok := a.verify(s.cookie + "x"); ok {
		t.Fatal("a cookie with a wrong signature verified")
	}
	// The key lives in the store: a rebuilt dashboard (config reload)
	// accepts the cookie; another agent's does not.
	if _, ok := testAuth(t, clk, st).verify(s.cookie); !ok {
		t.Fatal("a rebuilt dashboard logged the user out")
	}
	if _, ok := testAuth(t, clk, store.NewMemory()).verify(s.cookie); ok {
		t.Fatal("a cookie verified under another key")
	}
	// The CSRF token belongs to the session.
	s2, _ := a.login(testRemote, "bob", "secret", "")
	if a.csrf(s) == a.csrf(s2) {
		t.Fatal("two logins share a CSRF token")
	}
	clk.Advance(DefaultOptions().Session)
	if _, ok := a.verify(s.cookie); ok {
		t.Fatal("an expired session verified")
	}
}

func TestTokens(t *testing.T) {
	a := testAuth(t, clock.Real(), store.NewMemory())
	r := httptest.NewRequest("GET", "/api/state", nil)
	r.Header.Set("Authorization", "Bearer test")
	s, ok := a.who(r)
	if !ok || s.Role != RoleViewer || !s.bearer {
		t.Fatalf("bearer token: %+v %v", s, ok)
	}
	r.Header.Set("Authorization", "Bearer nope")
	if _, ok := a.who(r); ok {
		t.Fatal("an unknown token was let in")
	}
	if s, err := a.login(testRemote, "", "", "test"); err != nil || s.Role != RoleViewer {
		t.Fatalf("token login: %+v %v", s, err)
	}
	r = httptest.NewRequest("GET", "/api/state", nil)
	if _, ok := a.who(r); ok {
		t.Fatal("with users configured, an anonymous request was let in")
	}
}

// A user removed from the board (or given another role) does not keep a
// session.
func TestRemovedUserLosesSession(t *testing.T) {
	st := store.NewMemory()
	a := testAuth(t, clock.Real(), st)
	s, err := a.login(testRemote, "alice", "secret", "")
	if err != nil {
		t.Fatal(err)
	}
	o := a.opts
	o.Users = o.Users[1:]
	b, err := newAuth(o, st, clock.Real(), newThrottle(t.Context(), clock.Real(), slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.verify(s.cookie); ok {
		t.Fatal("a removed user's cookie verified")
	}
}

func TestSameOriginAndHost(t *testing.T) {
	r := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/invoke", nil)
	if !sameOrigin(r) {
		t.Fatal("no Origin (curl) refused")
	}
	r.Header.Set("Origin", "http://127.0.0.1:8080")
	if !sameOrigin(r) {
		t.Fatal("same origin refused")
	}
	r.Header.Set("Origin", "http://evil.example")
	if sameOrigin(r) {
		t.Fatal("cross origin accepted")
	}
	for host, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "evil.example:8080": false, "192.168.1.5": false} {
		if got := netaddr.IsLoopback(hostOnly(host)); got != want {
			t.Errorf("loopback %s = %v", host, got)
		}
	}
}
