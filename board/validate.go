package board

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	deviceIDRe = regexp.MustCompile(`^[a-z0-9_-]+$`)
	nameRe     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	toolRe     = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
	bcryptRe   = regexp.MustCompile(`^\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)
)

var (
	platforms     = []string{"raspi", "jetson", "sim"}
	logLevels     = []string{"debug", "info", "warn", "error"}
	logFormats    = []string{"text", "json"}
	priorities    = []string{"critical", "high", "normal", "low"}
	onViolation   = []string{"refuse", "clamp"}
	actuatorKinds = []string{"led", "relay", "digital", "buzzer", "servo", "pwm", "motor", "pca9685_servo"}
)

// pinRoles is the pin map each actuator kind needs, matching the gobot
// drivers issue 4 builds on (gpio.LedDriver, RelayDriver, DirectPinDriver,
// BuzzerDriver, ServoDriver and raw PWM on one pin; MotorDriver with
// forward/backward direction pins and a PWM speed pin).
var pinRoles = map[string][]string{
	"led":           {"pin"},
	"relay":         {"pin"},
	"digital":       {"pin"},
	"buzzer":        {"pin"},
	"servo":         {"pin"},
	"pwm":           {"pin"},
	"motor":         {"forward", "backward", "pwm"},
	"pca9685_servo": nil,
}

// limitKinds is which limits apply to which actuator kinds; setting another
// is a mistake worth reporting (a max_angle on a relay protects nothing).
var limitKinds = map[string][]string{
	"min_angle": {"servo", "pca9685_servo"},
	"max_angle": {"servo", "pca9685_servo"},
	"max_rate":  {"servo", "pca9685_servo"},
	"max_speed": {"motor"},
	"deadman":   {"motor"},
	"min_duty":  {"pwm"},
	"max_duty":  {"pwm"},
}

// validator checks a decoded, defaulted Config, reporting through the
// decoder so that every error carries the position of the key it is about.
type validator struct {
	*decoder
	c      *Config
	file   string
	hdr    header
	hasHdr bool // hdr is the table of a raspi/jetson model

	names   map[string]string  // sensor/actuator name -> path of first use
	pins    map[string]string  // header pin -> path of first use
	buses   map[string]string  // I2C bus in use -> path of first use
	devices map[string]*i2cUse // "bus/addr" -> its users
}

func (v *validator) fail(path, format string, args ...any) {
	v.errorf(v.at(path), path, format, args...)
}

// missing reports a required key that is absent, at its parent's key when
// there is one (the line a reader would add it under).
func (v *validator) missing(path, format string, args ...any) {
	p, ok := v.where[path]
	if !ok {
		if q, ok := v.keyAt[parentPath(path)]; ok {
			p = q
		} else {
			p = v.at(path)
		}
	}
	v.errorf(p, path, format, args...)
}

// failKey reports a key that should not be there, at the key itself.
func (v *validator) failKey(path, format string, args ...any) {
	p, ok := v.keyAt[path]
	if !ok {
		p = v.at(path)
	}
	v.errorf(p, path, format, args...)
}

func comparePos(a, b pos) int {
	if a.line != b.line {
		return a.line - b.line
	}
	return a.col - b.col
}

func (v *validator) line(path string) int { return v.at(path).line }

func oneOf(s string, set []string) bool { return slices.Contains(set, s) }

func (v *validator) enum(path, val string, set []string) {
	if !oneOf(val, set) {
		v.fail(path, "%q is not one of %s", val, strings.Join(set, ", "))
	}
}

func (v *validator) validate() {
	v.names = map[string]string{}
	v.pins = map[string]string{}
	v.buses = map[string]string{}
	v.devices = map[string]*i2cUse{}
	c := v.c

	v.device()
	v.enum("log.level", c.Log.Level, logLevels)
	v.enum("log.format", c.Log.Format, logFormats)
	v.mqtt()
	v.llm()
	v.agent()
	v.world()
	v.permissions()

	// Buses first: a GPIO pin on an I2C line is only wrong if the bus is
	// used, whichever block comes first in the file.
	for i, s := range c.Sensors {
		if s.Bus != "" {
			v.useBus(indexPath("sensors", i)+".bus", s.Bus)
		}
	}
	for i, a := range c.Actuators {
		if a.Kind == "pca9685_servo" && a.Bus != "" {
			v.useBus(indexPath("actuators", i)+".bus", a.Bus)
		}
	}
	// Visit sensor and actuator blocks in file order, so that a duplicate
	// name, pin or address is reported on the later block and names the
	// earlier one.
	type block struct {
		at    pos
		check func()
	}
	var blocks []block
	for i := range c.Sensors {
		blocks = append(blocks, block{v.at(indexPath("sensors", i)), func() { v.sensor(i) }})
	}
	for i := range c.Actuators {
		blocks = append(blocks, block{v.at(indexPath("actuators", i)), func() { v.actuator(i) }})
	}
	slices.SortStableFunc(blocks, func(a, b block) int { return comparePos(a.at, b.at) })
	for _, b := range blocks {
		b.check()
	}
	for i := range c.Reflexes {
		v.reflex(i)
	}
	for name := range c.Plugins {
		if !nameRe.MatchString(name) {
			v.errorf(v.keyAt[joinKey("plugins", name)], joinKey("plugins", name), "plugin name must match [a-z][a-z0-9_]*")
		}
	}
}

func (v *validator) device() {
	d := v.c.Device
	switch {
	case d.ID == "":
		v.missing("device.id", "required: the device id names this robot on MQTT ([a-z0-9_-]+)")
	case !deviceIDRe.MatchString(d.ID):
		v.fail("device.id", "%q must match [a-z0-9_-]+ (it is used in MQTT topics and file names)", d.ID)
	}
	if d.Platform == "" {
		v.missing("device.platform", "required: one of %s", strings.Join(platforms, ", "))
		return
	}
	if !oneOf(d.Platform, platforms) {
		v.fail("device.platform", "%q is not one of %s", d.Platform, strings.Join(platforms, ", "))
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
		v.fail("device.model", "%q is not a %s model; known: %s", d.Model, d.Platform, strings.Join(models, ", "))
	}
}

func (v *validator) mqtt() {
	m := v.c.MQTT
	embedded := m.Broker == "embedded"
	if !embedded {
		u, err := url.Parse(m.Broker)
		switch {
		case err != nil || u.Host == "":
			v.fail("mqtt.broker", "%q is neither \"embedded\" nor a broker URL such as tcp://192.168.1.10:1883", m.Broker)
		case u.Scheme != "tcp" && u.Scheme != "ssl":
			v.fail("mqtt.broker", "scheme %q: use tcp:// or ssl://", u.Scheme)
		case u.Port() == "":
			v.fail("mqtt.broker", "%q has no port (1883 for tcp, 8883 for ssl)", m.Broker)
		case u.Path != "" && u.Path != "/":
			v.fail("mqtt.broker", "%q: a broker URL has no path", m.Broker)
		}
		if m.Listen != "" {
			v.fail("mqtt.listen", "only used by the embedded broker (broker is %q)", m.Broker)
		}
		if len(m.Users) > 0 {
			v.fail("mqtt.users", "only used by the embedded broker (broker is %q)", m.Broker)
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
			v.fail("mqtt.listen", "%q is not host:port", m.Listen)
		} else if !isLoopback(host) && len(m.Users) == 0 {
			v.fail("mqtt.listen", "the embedded broker listens on %s, beyond this machine, but mqtt.users is empty: add users (bcrypt hashes) or listen on 127.0.0.1", m.Listen)
		}
		if m.LocalAdmin && len(m.Users) > 0 {
			v.fail("mqtt.local_admin", "with mqtt.users, admin is granted per user (admin: true)")
		}
	}
	if !strings.HasSuffix(m.Prefix, "/") {
		v.fail("mqtt.prefix", "%q must end with \"/\"", m.Prefix)
	}
	if strings.ContainsAny(m.Prefix, "+#") {
		v.fail("mqtt.prefix", "%q must not contain MQTT wildcards", m.Prefix)
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
			v.fail(p+".username", "duplicate user %q (first at line %d)", u.Username, v.line(first))
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
		v.fail("mqtt.qos", "%d: use 0 or 1", m.QoS)
	}
	if m.KeepAlive < time.Second {
		v.fail("mqtt.keepalive", "%s: must be at least 1s", m.KeepAlive)
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
			v.fail(indexPath("mqtt.publish_allow", i), "%q: %s", f, msg)
		}
	}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
		v.fail("llm.host", "%q is not an address", l.Host)
	}
	if l.NumCtx <= 0 {
		v.fail("llm.num_ctx", "must be positive")
	}
	if l.Temperature < 0 || l.Temperature > 2 {
		v.fail("llm.temperature", "%g is outside 0–2", l.Temperature)
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
			v.fail(p, "%q must match [a-z][a-z0-9_]*", s)
		case seen[s]:
			v.fail(p, "duplicate scenario %q", s)
		}
		seen[s] = true
	}
	w := l.Weights
	for _, x := range []struct {
		k string
		f float64
	}{{"semantic", w.Semantic}, {"history", w.History}, {"permission", w.Permission}, {"context", w.Context}} {
		if x.f < 0 || x.f > 1 {
			v.fail("llm.weights."+x.k, "%g is outside 0–1", x.f)
		}
	}
	if sum := w.Semantic + w.History + w.Permission + w.Context; math.Abs(sum-1) > 0.001 {
		v.fail("llm.weights", "weights sum to %g, not 1", sum)
	}
	if l.TopK < 1 {
		v.fail("llm.top_k", "must be at least 1")
	}
	if l.MinSimilarity < 0 || l.MinSimilarity > 1 {
		v.fail("llm.min_similarity", "%g is outside 0–1", l.MinSimilarity)
	}
	if l.PlanBelow < 0 || l.PlanBelow > 1 {
		v.fail("llm.plan_below", "%g is outside 0–1", l.PlanBelow)
	}
	if l.SummaryBytes < 64 {
		v.fail("llm.summary_bytes", "%d is too small for a world summary (at least 64)", l.SummaryBytes)
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
		v.fail("agent.gc_percent", "%d is outside 10–1000 (Go's default is 100)", a.GCPercent)
	}
	seen := map[string]string{}
	for i, g := range a.Goals {
		p := indexPath("agent.goals", i)
		switch {
		case g.Name == "":
			v.missing(p+".name", "required")
		case !nameRe.MatchString(g.Name):
			v.fail(p+".name", "%q must match [a-z][a-z0-9_]*", g.Name)
		case seen[g.Name] != "":
			v.fail(p+".name", "duplicate goal %q (first at line %d)", g.Name, v.line(seen[g.Name]))
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
			v.fail(p+".below", "%g must be less than above (%g): the goal fires outside [below, above]", *g.Below, *g.Above)
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
	if w.SummaryEvents < 0 || w.SummaryEvents > w.Events {
		v.fail("world.summary_events", "%d is outside 0–%d (world.events)", w.SummaryEvents, w.Events)
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
				v.fail(indexPath("permissions."+x.k, i), "%q is neither \"*\" nor a permission name [a-z][a-z0-9_]*", g)
			}
		}
	}
}

// name checks a sensor or actuator name; the two share one namespace.
func (v *validator) name(path, name string) {
	switch first, dup := v.names[name]; {
	case name == "":
		v.missing(path, "required")
	case !nameRe.MatchString(name):
		v.fail(path, "%q must match [a-z][a-z0-9_]* (it prefixes world-model sources and tool names)", name)
	case dup:
		v.fail(path, "duplicate name %q (first used by %s at line %d; sensors and actuators share names)", name, parentPath(first), v.line(first))
	default:
		v.names[name] = path
	}
}

func (v *validator) priority(path, p string) {
	if p != "" {
		v.enum(path, p, priorities)
	}
}

func (v *validator) sensor(i int) {
	s := v.c.Sensors[i]
	p := indexPath("sensors", i)
	v.name(p+".name", s.Name)
	if s.Kind == "" {
		v.missing(p+".kind", "required: the sensor kind (e.g. bme280, camera, pir)")
	}
	if s.Interval < 0 {
		v.fail(p+".interval", "must not be negative")
	}
	if s.Telemetry < 0 {
		v.fail(p+".telemetry", "must not be negative")
	}
	v.priority(p+".priority", s.Priority)
	v.i2c(p, s.Bus, s.Address, -1)
	v.pinMap(p, s.Pins)
	for j, t := range s.Thresholds {
		tp := indexPath(p+".thresholds", j)
		if t.Quantity == "" {
			v.missing(tp+".quantity", "required: which reading (e.g. temperature)")
		}
		n := 0
		for _, b := range []*float64{t.Above, t.Below, t.Change} {
			if b != nil {
				n++
			}
		}
		if n != 1 {
			v.missing(tp, "needs exactly one of above, below, change (found %d)", n)
		}
		if t.Change != nil && *t.Change <= 0 {
			v.fail(tp+".change", "must be positive")
		}
		if t.Hysteresis < 0 {
			v.fail(tp+".hysteresis", "must not be negative")
		}
		if t.Priority == "" {
			v.fail(tp+".priority", "must not be empty")
		}
		v.priority(tp+".priority", t.Priority)
		if !nameRe.MatchString(t.Event) {
			v.fail(tp+".event", "%q must match [a-z][a-z0-9_]*", t.Event)
		}
	}
}

func (v *validator) actuator(i int) {
	a := v.c.Actuators[i]
	p := indexPath("actuators", i)
	v.name(p+".name", a.Name)
	roles, known := pinRoles[a.Kind]
	switch {
	case a.Kind == "":
		v.missing(p+".kind", "required: one of %s", strings.Join(actuatorKinds, ", "))
	case !known:
		v.fail(p+".kind", "%q is not one of %s", a.Kind, strings.Join(actuatorKinds, ", "))
	}
	if known {
		for _, r := range roles {
			if a.Pins[r] == "" {
				v.missing(joinKey(p+".pins", r), "required for kind %s", a.Kind)
			}
		}
		for r := range a.Pins {
			if !slices.Contains(roles, r) {
				if len(roles) == 0 {
					v.failKey(joinKey(p+".pins", r), "kind %s has no pins (it is driven over I2C)", a.Kind)
				} else {
					v.failKey(joinKey(p+".pins", r), "kind %s uses only %s", a.Kind, strings.Join(roles, ", "))
				}
			}
		}
	}
	v.pinMap(p, a.Pins)
	if a.Kind == "pca9685_servo" {
		if a.Channel < 0 || a.Channel > 15 {
			v.fail(p+".channel", "%d is outside 0–15", a.Channel)
		}
		v.i2c(p, a.Bus, a.Address, a.Channel)
	} else {
		for _, x := range []struct {
			k   string
			set bool
		}{{"bus", a.Bus != ""}, {"address", a.Address != 0}, {"channel", a.Channel != 0}} {
			if x.set {
				v.failKey(p+"."+x.k, "only used by kind pca9685_servo")
			}
		}
	}
	for j, s := range a.Scenarios {
		if !slices.Contains(v.c.LLM.Scenarios, s) {
			v.fail(indexPath(p+".scenarios", j), "%q is not in llm.scenarios (%s)", s, strings.Join(v.c.LLM.Scenarios, ", "))
		}
	}
	if !nameRe.MatchString(a.Permission) {
		v.fail(p+".permission", "%q must match [a-z][a-z0-9_]*", a.Permission)
	}
	v.limits(p, a)
	v.initial(p, a)
}

func (v *validator) limits(p string, a Actuator) {
	l := a.Limits
	lp := p + ".limits"
	set := map[string]bool{
		"min_angle": l.MinAngle != nil, "max_angle": l.MaxAngle != nil, "max_rate": l.MaxRate != nil,
		"max_speed": l.MaxSpeed != nil, "deadman": l.Deadman != 0,
		"min_duty": l.MinDuty != nil, "max_duty": l.MaxDuty != nil,
	}
	if _, known := pinRoles[a.Kind]; known {
		for k, kinds := range limitKinds {
			if set[k] && !slices.Contains(kinds, a.Kind) {
				v.failKey(lp+"."+k, "does not apply to kind %s (only %s)", a.Kind, strings.Join(kinds, ", "))
			}
		}
	}
	rng := func(k string, f *float64, lo, hi float64) {
		if f != nil && (*f < lo || *f > hi) {
			v.fail(lp+"."+k, "%g is outside %g–%g", *f, lo, hi)
		}
	}
	rng("min_angle", l.MinAngle, 0, 360)
	rng("max_angle", l.MaxAngle, 0, 360)
	if l.MinAngle != nil && l.MaxAngle != nil && *l.MinAngle >= *l.MaxAngle {
		v.fail(lp+".max_angle", "%g must be greater than min_angle (%g)", *l.MaxAngle, *l.MinAngle)
	}
	if l.MaxRate != nil && *l.MaxRate <= 0 {
		v.fail(lp+".max_rate", "must be positive (degrees per second)")
	}
	if l.MaxSpeed != nil && (*l.MaxSpeed <= 0 || *l.MaxSpeed > 1) {
		v.fail(lp+".max_speed", "%g is outside (0, 1]", *l.MaxSpeed)
	}
	if l.Deadman < 0 {
		v.fail(lp+".deadman", "must not be negative")
	}
	rng("min_duty", l.MinDuty, 0, 1)
	rng("max_duty", l.MaxDuty, 0, 1)
	if l.MinDuty != nil && l.MaxDuty != nil && *l.MinDuty > *l.MaxDuty {
		v.fail(lp+".max_duty", "%g is less than min_duty (%g)", *l.MaxDuty, *l.MinDuty)
	}
	if l.RateLimit < 0 {
		v.fail(lp+".rate_limit", "must not be negative")
	}
	v.enum(lp+".on_violation", l.OnViolation, onViolation)
}

func (v *validator) initial(p string, a Actuator) {
	if a.Initial == "" {
		return
	}
	ip := p + ".initial"
	l := a.Limits
	num := func() (float64, bool) {
		f, err := strconv.ParseFloat(a.Initial, 64)
		if err != nil {
			v.fail(ip, "%q: expected a number for kind %s", a.Initial, a.Kind)
		}
		return f, err == nil
	}
	switch a.Kind {
	case "led", "relay", "digital", "buzzer":
		v.enum(ip, a.Initial, []string{"on", "off"})
	case "motor":
		v.enum(ip, a.Initial, []string{"stop"})
	case "servo", "pca9685_servo":
		if f, ok := num(); ok && l.MinAngle != nil && l.MaxAngle != nil && (f < *l.MinAngle || f > *l.MaxAngle) {
			v.fail(ip, "%g° is outside the limits %g–%g°", f, *l.MinAngle, *l.MaxAngle)
		}
	case "pwm":
		if f, ok := num(); ok && l.MinDuty != nil && l.MaxDuty != nil && (f < *l.MinDuty || f > *l.MaxDuty) {
			v.fail(ip, "duty %g is outside the limits %g–%g", f, *l.MinDuty, *l.MaxDuty)
		}
	}
}

func (v *validator) reflex(i int) {
	r := v.c.Reflexes[i]
	p := indexPath("reflexes", i)
	parts := strings.Split(r.On, "/")
	switch {
	case r.On == "":
		v.missing(p+".on", "required: an event kind (motion_start) or source/kind (front_cam/motion_start)")
	case len(parts) > 2 || slices.Contains(parts, "") || strings.ContainsAny(r.On, " \t"):
		v.fail(p+".on", "%q: expected <kind> or <source>/<kind>", r.On)
	}
	switch {
	case r.Do.Tool == "":
		v.missing(p+".do.tool", "required: the tool to call, e.g. headlight.set")
	case !toolRe.MatchString(r.Do.Tool):
		v.fail(p+".do.tool", "%q is not a tool name (plugin.func)", r.Do.Tool)
	}
	if r.Cooldown < 0 {
		v.fail(p+".cooldown", "must not be negative")
	}
}

// useBus records an I2C bus in use, checking it exists on the board.
func (v *validator) useBus(path, bus string) {
	switch {
	case v.c.Device.Platform == "sim":
		if bus != simBus && strings.Trim(bus, "0123456789") != "" {
			v.fail(path, "%q: the sim platform has bus \"sim\" (or a number)", bus)
			return
		}
	case v.hasHdr:
		if _, ok := v.hdr.i2c[bus]; !ok {
			var have []string
			for _, b := range v.hdr.busNames() {
				pins := v.hdr.i2c[b]
				have = append(have, fmt.Sprintf("%s (pins %s/%s)", b, pins[0], pins[1]))
			}
			v.fail(path, "I2C bus %q is not on the %s header; buses: %s", bus, v.c.Device.Model, strings.Join(have, ", "))
			return
		}
	default:
		return // unknown model: reported on device.model
	}
	if _, ok := v.buses[bus]; !ok {
		v.buses[bus] = path
	}
}

// i2c checks an address and that no two devices share (bus, address).
// PCA9685 servos (channel >= 0) share one chip, so they may share an
// address as long as each has its own channel.
func (v *validator) i2c(p string, bus string, addr Addr, channel int) {
	if addr == 0 {
		return
	}
	ap := p + ".address"
	if addr < 0x03 || addr > 0x77 {
		v.fail(ap, "%s is outside 0x03–0x77 (7-bit addresses; the rest are reserved)", addr)
		return
	}
	key := bus + "/" + addr.String()
	u, used := v.devices[key]
	switch {
	case !used:
		v.devices[key] = &i2cUse{path: ap, pca: channel >= 0, channels: map[int]string{channel: ap}}
	case channel < 0 || !u.pca:
		v.fail(ap, "bus %s address %s is already used by %s (line %d)", bus, addr, parentPath(u.path), v.line(u.path))
	case u.channels[channel] != "":
		first := u.channels[channel]
		v.fail(p+".channel", "channel %d of the PCA9685 at bus %s address %s is already used by %s (line %d)", channel, bus, addr, parentPath(first), v.line(first))
	default:
		u.channels[channel] = ap
	}
}

// i2cUse is one I2C address in use.
type i2cUse struct {
	path     string         // first user's address key
	pca      bool           // a PCA9685 servo controller: channels may share it
	channels map[int]string // channel -> user's address key
}

// pinMap checks each pin exists on the header, is not an I2C line of a bus
// in use, and is not used twice anywhere on the board.
func (v *validator) pinMap(p string, pins map[string]string) {
	roles := make([]string, 0, len(pins))
	for r := range pins {
		roles = append(roles, r)
	}
	// Visit in file order so "first used by" names the earlier line.
	slices.SortFunc(roles, func(a, b string) int {
		return comparePos(v.at(joinKey(p+".pins", a)), v.at(joinKey(p+".pins", b)))
	})
	for _, r := range roles {
		pin := pins[r]
		path := joinKey(p+".pins", r)
		if !v.pinOK(path, pin) {
			continue
		}
		if first, dup := v.pins[pin]; dup {
			v.fail(path, "pin %s is already used by %s (line %d)", pin, first, v.line(first))
			continue
		}
		v.pins[pin] = path
	}
}

func (v *validator) pinOK(path, pin string) bool {
	switch {
	case pin == "":
		v.fail(path, "empty pin")
		return false
	case v.c.Device.Platform == "sim":
		return true
	case !v.hasHdr:
		return true // unknown model: reported on device.model
	}
	if bus, line, ok := v.hdr.i2cPin(pin); ok {
		if first, used := v.buses[bus]; used {
			v.fail(path, "pin %s is I2C bus %s %s, in use by %s (line %d); pick another GPIO pin", pin, bus, line, parentPath(first), v.line(first))
			return false
		}
	}
	if !slices.Contains(v.hdr.gpio, pin) {
		hint := ""
		if _, err := strconv.Atoi(pin); err != nil {
			hint = " (pins are physical header numbers as gobot uses them, e.g. \"11\", not GPIO/BCM names)"
		}
		v.fail(path, "%q is not a GPIO pin of the %s header%s; GPIO pins: %s", pin, v.c.Device.Model, hint, strings.Join(v.hdr.gpio, ", "))
		return false
	}
	return true
}
