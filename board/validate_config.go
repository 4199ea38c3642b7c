package board

// The service sections of a board file: device, mqtt, llm, agent, world
// and permissions.

import (
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/internal/netaddr"
)

func (v *validator) device() {
	d := v.c.Device
	switch {
	case d.ID == "":
		v.missing("device.id", "required: the device id names this robot on MQTT ([a-z0-9_-]+)")
	case !deviceIDRe.MatchString(d.ID):
		v.fail("device.id", "must match [a-z0-9_-]+ (it is used in MQTT topics and file names)")
	}
	if d.Platform == "" {
		v.missing("device.platform", "required: one of %s", strings.Join(platforms, ", "))
		return
	}
	if !oneOf(d.Platform, platforms) {
		v.fail("device.platform", "want one of %s", strings.Join(platforms, ", "))
		return
	}
	if d.Platform == "sim" {
		return
	}
	models := modelsOf(d.Platform)
	if d.Model == "" && len(models) > 0 {
		v.missing("device.model", "required for platform %s: one of %s (it selects the pin and I2C bus table)", d.Platform, strings.Join(models, ", "))
		return
	}
	if h, ok := headers[d.Model]; !ok || h.platform != d.Platform {
		v.fail("device.model", "not a model of this platform; known: %s", strings.Join(models, ", "))
	}
}

func (v *validator) mqtt() {
	m := v.c.MQTT
	embedded := m.Broker == "embedded"
	if !embedded {
		u, err := url.Parse(m.Broker)
		switch {
		case err != nil || u.Host == "":
			v.fail("mqtt.broker", "neither \"embedded\" nor a broker URL such as tcp://192.168.1.10:1883")
		case u.Scheme != "tcp" && u.Scheme != "ssl":
			v.fail("mqtt.broker", "the scheme must be tcp:// or ssl://")
		case u.Port() == "":
			v.fail("mqtt.broker", "the URL has no port (1883 for tcp, 8883 for ssl)")
		case u.Path != "" && u.Path != "/":
			v.fail("mqtt.broker", "a broker URL has no path")
		}
		if m.Listen != "" {
			v.fail("mqtt.listen", "only used by the embedded broker (mqtt.broker: embedded)")
		}
		if len(m.Users) > 0 {
			v.fail("mqtt.users", "only used by the embedded broker (mqtt.broker: embedded)")
		}
		if m.LocalAdmin {
			v.fail("mqtt.local_admin", "only for the embedded broker; an external broker's admin topic is trusted with plugins.mqtt.trust_broker_acl")
		}
		if strings.HasPrefix(m.Broker, "tcp:") && (m.TLS != TLS{}) {
			v.fail("mqtt.tls", "TLS needs an ssl:// broker")
		}
	} else {
		host, port, err := net.SplitHostPort(m.Listen)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 0 || p > 65535 {
			v.fail("mqtt.listen", "want host:port")
		} else if !netaddr.IsLoopback(host) && len(m.Users) == 0 {
			v.fail("mqtt.listen", "the embedded broker listens beyond this machine, but mqtt.users is empty: add users (bcrypt hashes) or listen on 127.0.0.1")
		}
		if m.LocalAdmin && len(m.Users) > 0 {
			v.fail("mqtt.local_admin", "with mqtt.users, admin is granted per user (admin: true)")
		}
	}
	if !strings.HasSuffix(m.Prefix, "/") {
		v.fail("mqtt.prefix", "must end with \"/\"")
	}
	if strings.ContainsAny(m.Prefix, "+#") {
		v.fail("mqtt.prefix", "must not contain MQTT wildcards")
	}
	if m.ClientID == "" {
		v.fail("mqtt.client_id", "must not be empty")
	}
	if m.Password != "" && m.PasswordFile != "" {
		v.fail("mqtt.password_file", "set password or password_file, not both")
	}
	seen := map[string]string{}
	for i, u := range m.Users {
		p := indexPath("mqtt.users", i)
		if u.Username == "" {
			v.missing(p+".username", "required")
		} else if first, dup := seen[u.Username]; dup {
			v.fail(p+".username", "this user is listed twice (first at line %d)", v.line(first))
		} else {
			seen[u.Username] = p + ".username"
		}
		if !bcryptRe.MatchString(u.PasswordBcrypt) {
			v.missing(p+".password_bcrypt", "expected a bcrypt hash ($2a$…, 60 characters; e.g. from `htpasswd -nbBC 10 user pass`)")
		}
	}
	if (m.TLS.Cert == "") != (m.TLS.Key == "") {
		v.fail("mqtt.tls", "cert and key go together")
	}
	if m.QoS != 0 && m.QoS != 1 {
		v.fail("mqtt.qos", "use 0 or 1")
	}
	if m.KeepAlive < time.Second {
		v.fail("mqtt.keepalive", "must be at least 1s")
	}
	if m.Buffer < 0 {
		v.fail("mqtt.buffer", "must not be negative")
	}
	if m.Discovery.Enabled && m.Discovery.Prefix == "" {
		v.fail("mqtt.discovery.prefix", "must not be empty when discovery is enabled")
	}
	if strings.ContainsAny(m.Discovery.Prefix, "+#") {
		v.fail("mqtt.discovery.prefix", "must not contain MQTT wildcards")
	}
	for i, f := range m.PublishAllow {
		if msg := topicFilterProblem(f); msg != "" {
			v.fail(indexPath("mqtt.publish_allow", i), "%s", msg)
		}
	}
}

// topicFilterProblem checks an MQTT topic filter: '+' fills a whole level,
// '#' is the whole last level.
func topicFilterProblem(f string) string {
	if f == "" {
		return "empty topic filter"
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case strings.Contains(l, "#") && (l != "#" || i != len(levels)-1):
			return "'#' must be a whole level and the last one"
		case strings.Contains(l, "+") && l != "+":
			return "'+' must be a whole level"
		}
	}
	return ""
}

func (v *validator) llm() {
	l := v.c.LLM
	if l.Enabled && l.Model == "" {
		v.fail("llm.model", "must not be empty when the LLM is enabled")
	}
	if strings.ContainsAny(l.Host, " \t") {
		v.fail("llm.host", "not an address")
	}
	if l.NumCtx <= 0 {
		v.fail("llm.num_ctx", "must be positive")
	}
	if l.Temperature < 0 || l.Temperature > 2 {
		v.fail("llm.temperature", "want 0–2")
	}
	if l.Timeout <= 0 {
		v.fail("llm.timeout", "must be positive")
	}
	if len(l.Scenarios) == 0 {
		v.missing("llm.scenarios", "at least one scenario is needed for classification")
	}
	seen := map[string]bool{}
	for i, s := range l.Scenarios {
		p := indexPath("llm.scenarios", i)
		switch {
		case !nameRe.MatchString(s):
			v.fail(p, "must match [a-z][a-z0-9_]*")
		case seen[s]:
			v.fail(p, "this scenario is listed twice")
		}
		seen[s] = true
	}
	w := l.Weights
	for _, x := range []struct {
		k string
		f float64
	}{{"semantic", w.Semantic}, {"history", w.History}, {"permission", w.Permission}, {"context", w.Context}} {
		if x.f < 0 || x.f > 1 {
			v.fail("llm.weights."+x.k, "want 0–1")
		}
	}
	if sum := w.Semantic + w.History + w.Permission + w.Context; math.Abs(sum-1) > 0.001 {
		v.fail("llm.weights", "the weights must sum to 1")
	}
	if l.TopK < 1 {
		v.fail("llm.top_k", "must be at least 1")
	}
	if l.MinSimilarity < 0 || l.MinSimilarity > 1 {
		v.fail("llm.min_similarity", "want 0–1")
	}
	if l.PlanBelow < 0 || l.PlanBelow > 1 {
		v.fail("llm.plan_below", "want 0–1")
	}
	if l.SummaryBytes < 64 {
		v.fail("llm.summary_bytes", "too small for a world summary (at least 64)")
	}
}

func (v *validator) agent() {
	a := v.c.Agent
	if a.Heartbeat <= 0 {
		v.fail("agent.heartbeat", "must be positive")
	}
	if a.Queue <= 0 {
		v.fail("agent.queue", "must be positive")
	}
	if a.CycleTimeout <= 0 {
		v.fail("agent.cycle_timeout", "must be positive")
	}
	if a.GCPercent < 10 || a.GCPercent > 1000 {
		v.fail("agent.gc_percent", "want 10–1000 (Go's default is 100)")
	}
	seen := map[string]string{}
	for i, g := range a.Goals {
		p := indexPath("agent.goals", i)
		switch {
		case g.Name == "":
			v.missing(p+".name", "required")
		case !nameRe.MatchString(g.Name):
			v.fail(p+".name", "must match [a-z][a-z0-9_]*")
		case seen[g.Name] != "":
			v.fail(p+".name", "this goal name is taken (first at line %d)", v.line(seen[g.Name]))
		default:
			seen[g.Name] = p + ".name"
		}
		if g.Source == "" {
			v.missing(p+".source", "required: the world-model source to watch")
		}
		switch {
		case g.Above == nil && g.Below == nil:
			v.missing(p, "needs above, below or both")
		case g.Above != nil && g.Below != nil && *g.Below >= *g.Above:
			v.fail(p+".below", "must be less than above: the goal fires outside [below, above]")
		}
	}
}

func (v *validator) world() {
	w := v.c.World
	for _, x := range []struct {
		k string
		n int
	}{{"default_capacity", w.DefaultCapacity}, {"max_sources", w.MaxSources}, {"events", w.Events}} {
		if x.n <= 0 {
			v.fail("world."+x.k, "must be positive")
		}
	}
	if w.Horizon <= 0 {
		v.fail("world.horizon", "must be a positive duration, e.g. 10m")
	}
	if w.SummaryEvents < 0 || w.SummaryEvents > w.Events {
		v.fail("world.summary_events", "want 0 up to world.events")
	}
	for src, n := range w.Capacities {
		if n <= 0 {
			v.fail(joinKey("world.capacities", src), "must be positive")
		}
	}
}

func (v *validator) permissions() {
	p := v.c.Permissions
	for _, x := range []struct {
		k string
		g []string
	}{{"cli", p.CLI}, {"mqtt", p.MQTT}, {"llm", p.LLM}, {"reflex", p.Reflex}, {"motive", p.Motive}} {
		for i, g := range x.g {
			if g != "*" && !nameRe.MatchString(g) {
				v.fail(indexPath("permissions."+x.k, i), "neither \"*\" nor a permission name [a-z][a-z0-9_]*")
			}
		}
	}
}
