package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"
)

// Sessions are signed cookies rather than server state: the key lives in
// the agent's store, so a config reload (which rebuilds every plugin) or a
// restart does not log anyone out, and there is no session table to bound.
const (
	cookieName = "edgeagent_session"
	csrfHeader = "X-CSRF-Token"
	keyBucket  = "dashboard"
	keyName    = "session_key"
	localUser  = "local" // the visitor when no login is configured
	tokenUser  = "token" // a session opened with a bearer token
)

// session is who makes a request.
type session struct {
	User   string `json:"u"`
	Role   string `json:"r"`
	Expiry int64  `json:"e"` // unix seconds
	Nonce  string `json:"n"` // makes each login's cookie (and CSRF token) unique
	// bearer: authenticated by an Authorization header, which a browser
	// never adds on its own, so no CSRF token is needed.
	bearer bool
	cookie string // the signed cookie value, for the CSRF token
}

func (s session) grants() []string { return roleGrants[s.Role] }

type auth struct {
	opts   Options
	key    []byte
	clk    clock.Clock
	users  map[string]User
	tokens map[[32]byte]string // SHA-256 of the token -> role
	// bcrypt takes tens of milliseconds on purpose; one check at a time
	// keeps a password guesser to one core of a small board, and the
	// throttle is asked under the same lock, so a burst of concurrent
	// guesses cannot all pass it before the first is counted.
	loginMu  sync.Mutex
	throttle *throttle

	dummyOnce sync.Once
	dummy     []byte
}

// dummyHash is compared against when the user does not exist, so that
// the answer takes as long and does not tell which names exist: it has the
// highest cost among the configured users' hashes (a cheaper one would
// answer an unknown name many times faster). It is made at the first such
// login, not at start-up: bcrypt is slow on purpose, and every process
// (check, invoke, a robot without users) paid for it.
func (a *auth) dummyHash() []byte {
	a.dummyOnce.Do(func() {
		cost := bcrypt.MinCost
		for _, u := range a.users {
			if c, err := bcrypt.Cost([]byte(u.PasswordBcrypt)); err == nil && c > cost {
				cost = c
			}
		}
		a.dummy, _ = bcrypt.GenerateFromPassword([]byte("no such user"), cost) // fails only on a cost out of range
	})
	return a.dummy
}

func newAuth(o Options, st store.Store, clk clock.Clock, th *throttle) (*auth, error) {
	a := &auth{opts: o, clk: clk, users: map[string]User{}, tokens: map[[32]byte]string{}, throttle: th}
	for _, u := range o.Users {
		a.users[u.Name] = u
	}
	for _, t := range o.Tokens {
		var h [32]byte
		b, _ := hex.DecodeString(t.SHA256) // checked by decodeOptions
		copy(h[:], b)
		a.tokens[h] = t.Role
	}
	var key string
	ok, err := st.Get(keyBucket, keyName, &key)
	if err != nil {
		return nil, err
	}
	if a.key, err = base64.StdEncoding.DecodeString(key); !ok || err != nil || len(a.key) != 32 {
		a.key = make([]byte, 32)
		_, _ = rand.Read(a.key) // crypto/rand.Read never fails
		if err := st.Put(keyBucket, keyName, base64.StdEncoding.EncodeToString(a.key)); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (a *auth) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, a.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// issue signs a new session for user and role.
func (a *auth) issue(user, role string) session {
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	s := session{User: user, Role: role, Expiry: a.clk.Now().Add(a.opts.Session).Unix(),
		Nonce: base64.RawURLEncoding.EncodeToString(nonce)}
	payload, _ := json.Marshal(s) // strings and an integer always encode
	p := base64.RawURLEncoding.EncodeToString(payload)
	s.cookie = p + "." + base64.RawURLEncoding.EncodeToString(a.mac("session", p))
	return s
}

// verify checks a cookie's signature and expiry.
func (a *auth) verify(cookie string) (session, bool) {
	p, sig, ok := strings.Cut(cookie, ".")
	if !ok {
		return session{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, a.mac("session", p)) {
		return session{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	var s session
	if err != nil || json.Unmarshal(payload, &s) != nil || roleGrants[s.Role] == nil || a.clk.Now().Unix() >= s.Expiry {
		return session{}, false
	}
	// A login whose user was removed from the board (or given another
	// role) does not outlive the change.
	if a.opts.authRequired() && s.User != tokenUser {
		if u, ok := a.users[s.User]; !ok || u.Role != s.Role {
			return session{}, false
		}
	}
	s.cookie = cookie
	return s, true
}

// csrf is the token a state-changing request must echo in X-CSRF-Token:
// derived from the session cookie, which another site's page can make the
// browser send but cannot read.
func (a *auth) csrf(s session) string {
	return base64.RawURLEncoding.EncodeToString(a.mac("csrf", s.cookie))
}

// token returns the role of a bearer token.
func (a *auth) token(tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(tok))
	role, ok := a.tokens[h]
	return role, ok
}

// who is the request's session: a bearer token, a valid cookie, or — with
// no login configured — the local visitor.
func (a *auth) who(r *http.Request) (session, bool) {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		role, ok := a.token(strings.TrimSpace(tok))
		return session{User: tokenUser, Role: role, bearer: true}, ok
	}
	if c, err := r.Cookie(cookieName); err == nil {
		if s, ok := a.verify(c.Value); ok {
			return s, true
		}
	}
	if !a.opts.authRequired() {
		return session{User: localUser, Role: RoleAdmin}, true
	}
	return session{}, false
}

// login checks a password or a token from the client at remote (its
// address): a *throttledError while that address is shut out.
func (a *auth) login(remote, user, password, token string) (session, error) {
	a.loginMu.Lock()
	defer a.loginMu.Unlock()
	if err := a.throttle.check(remote); err != nil {
		return session{}, err
	}
	s, err := a.check(user, password, token)
	if err != nil {
		a.throttle.failed(remote)
		return session{}, err
	}
	a.throttle.succeeded(remote)
	return s, nil
}

func (a *auth) check(user, password, token string) (session, error) {
	if token != "" {
		if role, ok := a.token(token); ok {
			return a.issue(tokenUser, role), nil
		}
		return session{}, errors.New("unknown token")
	}
	u, ok := a.users[user]
	hash := []byte(u.PasswordBcrypt)
	if !ok {
		hash = a.dummyHash()
	}
	if err := bcrypt.CompareHashAndPassword(hash, []byte(password)); err != nil || !ok {
		return session{}, errors.New("wrong user name or password")
	}
	return a.issue(u.Name, u.Role), nil
}

func (a *auth) setCookie(w http.ResponseWriter, s session, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cookie, Path: "/", HttpOnly: true, Secure: secure,
		SameSite: http.SameSiteStrictMode, Expires: time.Unix(s.Expiry, 0)})
}

// sameOrigin: a browser sends Origin with every cross-site POST; when it
// is there it must be this host.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	_, rest, ok := strings.Cut(o, "://")
	return ok && rest == r.Host
}

// hostOnly is the host of a Host header, without the port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

type handler func(http.ResponseWriter, *http.Request, session)

// read lets any session in.
func (s *server) read(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.auth.who(r)
		if !ok {
			httpError(w, http.StatusUnauthorized, "log in first")
			return
		}
		h(w, r, sess)
	})
}

// write also wants the session's CSRF token (unless it came with a bearer
// token) and a same-origin request, and bounds the body.
func (s *server) write(h handler) http.Handler {
	return s.read(func(w http.ResponseWriter, r *http.Request, sess session) {
		if !sess.bearer {
			got := r.Header.Get(csrfHeader)
			if sess.cookie == "" || !sameOrigin(r) || subtle.ConstantTimeCompare([]byte(got), []byte(s.auth.csrf(sess))) != 1 {
				httpError(w, http.StatusForbidden, "missing or wrong CSRF token: reload the page")
				return
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h(w, r, sess)
	})
}

// handleSession says who the visitor is and hands out the CSRF token; with
// no login configured it starts the local visitor's session.
func (s *server) handleSession(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.auth.who(r)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"ok": false, "auth_required": true})
		return
	}
	if sess.cookie == "" && !sess.bearer {
		sess = s.auth.issue(localUser, RoleAdmin)
		s.auth.setCookie(w, sess, r.TLS != nil)
	}
	out := map[string]any{"ok": true, "user": sess.User, "role": sess.Role, "grants": sess.grants(),
		"auth_required": s.opts.authRequired(), "device": s.board.Device.ID, "name": s.board.Device.Name}
	if !sess.bearer {
		out["csrf"] = s.auth.csrf(sess)
	}
	writeJSON(w, http.StatusOK, out)
}

type loginReq struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Token    string `json:"token"`
}

func (s *server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpError(w, http.StatusForbidden, "cross-site login refused")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	var req loginReq
	if err := readJSON(r, &req); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.opts.authRequired() {
		httpError(w, http.StatusBadRequest, "this dashboard has no login (loopback only)")
		return
	}
	sess, err := s.auth.login(r.RemoteAddr, req.User, req.Password, req.Token)
	var shut *throttledError
	switch {
	case errors.As(err, &shut):
		w.Header().Set("Retry-After", strconv.Itoa(int(shut.RetryAfter.Round(time.Second)/time.Second)))
		httpError(w, http.StatusTooManyRequests, err.Error())
		return
	case err != nil: // the throttle logs refusals, counted
		httpError(w, http.StatusUnauthorized, err.Error())
		return
	}
	s.log.Info("dashboard login", "user", sess.User, "role", sess.Role, "remote", r.RemoteAddr)
	s.auth.setCookie(w, sess, r.TLS != nil)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": sess.User, "role": sess.Role, "csrf": s.auth.csrf(sess)})
}

func (s *server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		httpError(w, http.StatusForbidden, "cross-site logout refused")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, MaxAge: -1, SameSite: http.SameSiteStrictMode})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}
