package dashboard_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/board"
	_ "github.com/edgeagent/edgeagent/dashboard"
	"github.com/edgeagent/edgeagent/node"
	_ "github.com/edgeagent/edgeagent/plugin/actuators"
	_ "github.com/edgeagent/edgeagent/sensors/camera"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const testBoard = `
device: {id: bot, platform: sim}
data_dir: %s
plugins: {mqtt: {enabled: false}}
sensors:
  - name: cam
    kind: camera
    options: {source: sim, width: 160, height: 120, fps: 10, snapshot_interval: 1s}
actuators:
  - {name: pan, kind: servo, pins: {pin: "sim:13"}, limits: {min_angle: 0, max_angle: 180, on_violation: clamp}, initial: "90"}
dashboard:
  listen: 127.0.0.1:0
%s`

// runBoard runs a node of testBoard, with auth added and listen replaced,
// until the test ends; exited is closed, and *runErr set, when it stops.
func runBoard(t *testing.T, auth, listen string) (n *node.Node, exited <-chan struct{}, runErr *error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "b.yaml")
	y := strings.Replace(fmt.Sprintf(testBoard, filepath.Join(dir, "data"), auth), "127.0.0.1:0", listen, 1)
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err = node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, stopErr := make(chan struct{}), new(error)
	go func() { defer close(done); *stopErr = n.Run(ctx, time.Now()) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if *stopErr != nil {
			t.Errorf("node: %v", *stopErr)
		}
	})
	return n, done, stopErr
}

// start runs a node with the dashboard and returns it and its URL.
func start(t *testing.T, auth string) (*node.Node, string) {
	t.Helper()
	n, _, _ := runBoard(t, auth, "127.0.0.1:0")
	<-n.Ready()
	p, ok := n.Hooks.Get("dashboard")
	if !ok {
		t.Fatal("the dashboard plugin is not loaded")
	}
	return n, strings.TrimSuffix(p.(interface{ URL() string }).URL(), "/")
}

type client struct {
	t    *testing.T
	base string
	http *http.Client
	csrf string
	hdr  map[string]string
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, http: &http.Client{Jar: jar, Timeout: 10 * time.Second}, hdr: map[string]string{}}
}

func (c *client) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	for k, v := range c.hdr {
		req.Header.Set(k, v)
	}
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{"raw": string(b)}
	}
	return res.StatusCode, out
}

func (c *client) session() {
	c.t.Helper()
	code, s := c.do("GET", "/api/session", "")
	if code != 200 {
		c.t.Fatalf("session: %d %v", code, s)
	}
	c.csrf, _ = s["csrf"].(string)
}

// Without a login (loopback only) a visitor is an admin, yet every state
// change needs the session's CSRF token and a same-origin request, and
// only loopback host names are answered (DNS rebinding).
func TestLocalCSRFAndHost(t *testing.T) {
	n, base := start(t, "")
	c := newClient(t, base)
	invoke := `{"tool":"pan.set_angle","params":{"degrees":45}}`
	if code, out := c.do("POST", "/api/invoke", invoke); code != 403 {
		t.Fatalf("a call without a session or CSRF token: %d %v", code, out)
	}
	c.session()
	good := c.csrf
	c.csrf = "forged"
	if code, _ := c.do("POST", "/api/invoke", invoke); code != 403 {
		t.Fatalf("a wrong CSRF token: %d", code)
	}
	c.csrf = good
	c.hdr["Origin"] = "http://evil.example"
	if code, _ := c.do("POST", "/api/invoke", invoke); code != 403 {
		t.Fatalf("a cross-site call: %d", code)
	}
	delete(c.hdr, "Origin")
	if code, out := c.do("POST", "/api/invoke", invoke); code != 200 || out["ok"] != true {
		t.Fatalf("a proper call: %d %v", code, out)
	}
	waitFor(t, "pan at 45°", func() bool { return n.World.Actuators()["pan"] == "at 45°" })
	// The journal names the caller web.
	var caller string
	for _, r := range n.World.Records(0, 0) {
		if r.Kind == "tool_call" && r.Source == "pan.set_angle" {
			var d struct{ Caller string }
			_ = json.Unmarshal(r.Data, &d)
			caller = d.Caller
		}
	}
	if caller != "web" {
		t.Fatalf("tool_call caller %q, want web", caller)
	}
	// Bad input gets a clear error, not an actuation.
	for body, want := range map[string]string{
		`{"tool":"pan.set_angle","params":{"degrees":"ninety"}}`: "degrees",
		`{"tool":"pan.set_angle"`:                                "not valid JSON",
		`{"tool":"pan.set_angle","colour":1}`:                    "unknown field",
		`{"tool":"world.query","params":{}}`:                     "internal tool",
		`{"tool":"agent.status","tool":"estop.trigger"}`:         "duplicate key",
	} {
		code, out := c.do("POST", "/api/invoke", body)
		if code < 400 || !strings.Contains(fmt.Sprint(out["error"]), want) {
			t.Errorf("%s: %d %v, want an error naming %q", body, code, out, want)
		}
	}
	c.hdr["Host"] = "evil.example"
	req, _ := http.NewRequest("GET", base+"/api/state", nil)
	req.Host = "evil.example:80"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("a rebinding host name got %d", res.StatusCode)
	}
}

// With logins, nothing is served before one; a viewer reads and cannot
// actuate or reset the e-stop; an admin can; a bearer token needs no CSRF.
func TestRoles(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	n, base := start(t, fmt.Sprintf(`  users:
    - {name: ada, password_bcrypt: %q, role: admin}
    - {name: vic, password_bcrypt: %q, role: viewer}
  tokens:
    - {sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, role: admin}
`, hash, hash))
	anon := newClient(t, base)
	for _, p := range []string{"/api/state", "/api/history", "/api/tools", "/api/status", "/api/config", "/api/camera/cam/snapshot"} {
		if code, _ := anon.do("GET", p, ""); code != 401 {
			t.Errorf("%s without a login: %d", p, code)
		}
	}
	if code, _ := anon.do("POST", "/api/login", `{"user":"vic","password":"nope"}`); code != 401 {
		t.Fatalf("a wrong password: %d", code)
	}

	viewer := newClient(t, base)
	code, out := viewer.do("POST", "/api/login", `{"user":"vic","password":"pw"}`)
	if code != 200 || out["role"] != "viewer" {
		t.Fatalf("viewer login: %d %v", code, out)
	}
	viewer.csrf = out["csrf"].(string)
	u, _ := http.NewRequest("GET", base, nil)
	for _, ck := range viewer.http.Jar.Cookies(u.URL) {
		if ck.Name == "edgeagent_session" && ck.Value == "" {
			t.Fatal("empty session cookie")
		}
	}
	if code, out := viewer.do("POST", "/api/invoke", `{"tool":"pan.set_angle","params":{"degrees":10}}`); code != 403 || out["code"] != "forbidden" {
		t.Fatalf("a viewer actuating: %d %v", code, out)
	}
	if code, _ := viewer.do("POST", "/api/invoke", `{"tool":"agent.status"}`); code != 200 {
		t.Fatalf("a viewer reading: %d", code)
	}
	if code, _ := viewer.do("POST", "/api/camera/cam/tuning", `{"threshold":40}`); code != 403 {
		t.Fatalf("a viewer tuning the camera: %d", code)
	}
	var tools []map[string]any
	req, _ := http.NewRequest("GET", base+"/api/tools", nil)
	res, err := viewer.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(res.Body).Decode(&tools)
	res.Body.Close()
	seen := map[string]map[string]any{}
	for _, tl := range tools {
		seen[tl["name"].(string)] = tl
	}
	if seen["world.query"] != nil {
		t.Error("an internal tool is listed")
	}
	if seen["pan.set_angle"]["permitted"] != false || seen["agent.status"]["permitted"] != true {
		t.Errorf("viewer permissions: pan.set_angle %v, agent.status %v", seen["pan.set_angle"]["permitted"], seen["agent.status"]["permitted"])
	}
	if env, _ := seen["pan.set_angle"]["envelope"].(map[string]any); env["min"] != 0.0 || env["max"] != 180.0 {
		t.Errorf("pan.set_angle envelope %v", seen["pan.set_angle"]["envelope"])
	}
	if n.World.Actuators()["pan"] != "at 90°" {
		t.Fatalf("pan moved: %s", n.World.Actuators()["pan"])
	}

	// A bearer token (scripts, kiosks) needs no CSRF token.
	bot := newClient(t, base)
	bot.hdr["Authorization"] = "Bearer test"
	if code, out := bot.do("POST", "/api/invoke", `{"tool":"estop.trigger","params":{"reason":"test"}}`); code != 200 {
		t.Fatalf("estop by token: %d %v", code, out)
	}
	if n.World.Health()["estop"] != "latched" {
		t.Fatal("estop not latched")
	}
	if code, _ := viewer.do("POST", "/api/invoke", `{"tool":"estop.reset"}`); code != 403 {
		t.Fatal("a viewer reset the e-stop")
	}
	admin := newClient(t, base)
	code, out = admin.do("POST", "/api/login", `{"user":"ada","password":"pw"}`)
	if code != 200 {
		t.Fatalf("admin login: %d %v", code, out)
	}
	admin.csrf = out["csrf"].(string)
	if code, out := admin.do("POST", "/api/invoke", `{"tool":"estop.reset"}`); code != 200 {
		t.Fatalf("admin reset: %d %v", code, out)
	}
	// Any session may press the E-STOP, a viewer too (as the physical
	// button); it needs the CSRF token like every state change.
	csrf := viewer.csrf
	viewer.csrf = ""
	if code, _ := viewer.do("POST", "/api/estop", ""); code != 403 {
		t.Fatalf("an E-STOP without the CSRF token: %d", code)
	}
	viewer.csrf = csrf
	if code, out := viewer.do("POST", "/api/estop", ""); code != 200 || out["latched"] != true {
		t.Fatalf("a viewer's E-STOP: %d %v", code, out)
	}
	if code, _ := viewer.do("POST", "/api/invoke", `{"tool":"estop.reset"}`); code != 403 {
		t.Fatal("a viewer reset the e-stop")
	}
	code, out = admin.do("POST", "/api/invoke", `{"tool":"audit.query","params":{"safety":true}}`)
	if code != 200 || !strings.Contains(fmt.Sprint(out["result"]), "estop:web") {
		t.Fatalf("the audit does not show the dashboard's e-stop: %d %v", code, out)
	}
	if code, out := admin.do("POST", "/api/invoke", `{"tool":"estop.reset"}`); code != 200 {
		t.Fatalf("admin reset: %d %v", code, out)
	}
	// The config page hides the password hashes and the token.
	_, cfg := admin.do("GET", "/api/config", "")
	if y := fmt.Sprint(cfg["yaml"]); strings.Contains(y, string(hash)) || strings.Contains(y, "9f86d0") || !strings.Contains(y, "redacted") {
		t.Fatalf("config page:\n%s", y)
	}
	// Logging out forgets the cookie.
	admin.do("POST", "/api/logout", "")
	if code, _ := admin.do("GET", "/api/state", ""); code != 401 {
		t.Fatalf("after logout: %d", code)
	}
}

// The live channel carries what the world model records; the camera
// stream is MJPEG, and the camera encodes live frames only while it runs.
func TestLiveAndCamera(t *testing.T) {
	n, base := start(t, "")
	c := newClient(t, base)
	c.session()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/live", nil)
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("live content type %q", ct)
	}
	go func() {
		for ctx.Err() == nil {
			n.World.Append(worldmodel.Observation{Source: "probe.value", Kind: worldmodel.Reading, Value: 42, Unit: "u"})
			time.Sleep(50 * time.Millisecond)
		}
	}()
	sc := bufio.NewScanner(res.Body)
	found := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") && strings.Contains(sc.Text(), `"src":"probe.value","v":42`) {
			found = true
			break
		}
	}
	if !found {
		t.Fatalf("no probe reading on the live channel: %v", sc.Err())
	}

	// A big journal record (an LLM exchange) goes with its large fields as
	// sizes; the whole is one request away.
	long := strings.Repeat("prompt ", 2000)
	data, _ := json.Marshal(map[string]any{"purpose": "intent", "system": long, "answer": "{}", "duration_ms": 12.5})
	rec := n.World.Note(worldmodel.Record{Kind: "llm", Source: "llm", Data: data})
	found = false
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, fmt.Sprintf(`"seq":%d,`, rec.Seq)) {
			if !strings.Contains(line, `"system":{"omitted_bytes":14002}`) || !strings.Contains(line, `"purpose":"intent"`) {
				t.Fatalf("live llm record: %s", line)
			}
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no llm record on the live channel")
	}
	code, full := c.do("GET", fmt.Sprintf("/api/record/%d", rec.Seq), "")
	if code != 200 || !strings.Contains(fmt.Sprint(full["data"]), long[:100]) {
		t.Fatalf("full record: %d", code)
	}
	if code, _ := c.do("GET", "/api/record/999999999", ""); code != 404 {
		t.Fatalf("unknown record: %d", code)
	}

	if n.World.Watched("cam.live") {
		t.Fatal("live frames watched before any stream")
	}
	sreq, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/camera/cam/stream", nil)
	sres, err := c.http.Do(sreq)
	if err != nil {
		t.Fatal(err)
	}
	if ct := sres.Header.Get("Content-Type"); ct != "multipart/x-mixed-replace; boundary=frame" {
		t.Fatalf("stream content type %q", ct)
	}
	br := bufio.NewReader(sres.Body)
	for parts := 0; parts < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream: %v after %d frames", err, parts)
		}
		if strings.HasPrefix(line, "Content-Type: image/jpeg") {
			parts++
		}
	}
	if !n.World.Watched("cam.live") {
		t.Fatal("a stream is open and live frames are not watched")
	}
	sres.Body.Close()
	waitFor(t, "live frames unwatched after the stream closed", func() bool { return !n.World.Watched("cam.live") })
	if code, out := c.do("GET", "/api/camera/nope/stream", ""); code != 404 {
		t.Fatalf("unknown camera: %d %v", code, out)
	}
}

// Tuning goes through config.reload: a bad value is refused with the
// reason, a good one is valid (this test's node has nobody to apply it).
func TestTuningThroughConfigReload(t *testing.T) {
	_, base := start(t, "")
	c := newClient(t, base)
	c.session()
	code, out := c.do("POST", "/api/camera/cam/tuning", `{"threshold":0}`)
	if code != 422 || !strings.Contains(fmt.Sprint(out["error"]), "threshold") {
		t.Fatalf("threshold 0: %d %v", code, out)
	}
	code, out = c.do("POST", "/api/camera/cam/tuning", `{"threshold":40,"masks":["0,0,80,0,80,30,0,30"]}`)
	if code != 422 || !strings.Contains(fmt.Sprint(out["error"]), "the config is valid") {
		t.Fatalf("a valid tuning: %d %v", code, out)
	}
	if code, out := c.do("POST", "/api/camera/cam/tuning", `{}`); code != 400 {
		t.Fatalf("an empty tuning: %d %v", code, out)
	}
}

// A port already taken leaves the agent running without its dashboard,
// and agent.status says why.
func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	n, exited, runErr := runBoard(t, "", ln.Addr().String())
	select {
	case <-n.Ready():
	case <-exited:
		t.Fatalf("the agent did not start: %v", *runErr)
	}
	st, _ := json.Marshal(n.Agent.Status().Components["dashboard"])
	if !strings.Contains(string(st), "address already in use") {
		t.Fatalf("dashboard status %s", st)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 10s", what)
}

// With cert and key the dashboard speaks HTTPS, and its cookie is Secure.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "robot"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	_, base := start(t, fmt.Sprintf("  tls: {cert: %s, key: %s}\n", certPath, keyPath))
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("url %s", base)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	c := newClient(t, base)
	c.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	req, _ := http.NewRequest("GET", base+"/api/session", nil)
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var secure bool
	for _, ck := range res.Cookies() {
		if ck.Name == "edgeagent_session" {
			secure = ck.Secure && ck.HttpOnly && ck.SameSite == http.SameSiteStrictMode
		}
	}
	if res.StatusCode != 200 || !secure {
		t.Fatalf("https session: %d, secure HttpOnly SameSite=Strict cookie: %v", res.StatusCode, secure)
	}
}
