// Package dashboard is the agent's web UI, embedded in the binary and
// served by the agent itself: the cameras with their motion boxes, every
// sensor as a live plot with its thresholds, events and decision traces as
// they happen, a form for every skill, the E-STOP, the audit log, status
// and the effective config.
//
// It is a plugin ("dashboard") configured by the board's `dashboard:`
// section; a block with any key loads it (`dashboard: {enabled: true}` is
// enough, `enabled: false` keeps it out):
//
//	dashboard:
//	  listen: 127.0.0.1:8080        # loopback needs no login; any other address needs users or tokens
//	  users:                        # log in with a password (bcrypt: htpasswd -nbBC 10 "" secret | cut -d: -f2)
//	    - {name: alice, password_bcrypt: "$2y$10$…", role: admin}   # admin: everything, e-stop reset
//	    - {name: guest, password_bcrypt: "$2y$10$…", role: viewer}  # viewer: read only, cannot actuate
//	  tokens:                       # or a bearer token (Authorization: Bearer …, or the login form)
//	    - {sha256: "<hex of the token's SHA-256>", role: viewer}
//	  tls: {cert: /etc/edgeagent/cert.pem, key: /etc/edgeagent/key.pem}   # HTTPS
//	  session: 12h                  # how long a login lasts
//	  history: 10m                  # how much of each sensor's past the plots load
//	  client_buffer: 256            # live messages queued per client; a slower client loses the excess
//	  max_clients: 16               # live channels at once
//
// Password guessing is throttled per client address (IPv6 per /64): after
// 5 wrong logins each further one shuts the address out twice as long as
// the last (1 s, 2 s, 4 s … 15 min), answered 429 with Retry-After and no
// password check; a good login clears it. Refusals are logged as counts,
// at most one line every 10 s. Behind a reverse proxy all clients share the
// proxy's address (X-Forwarded-For is not trusted).
//
// The E-STOP button works for every session, viewers included, as a
// robot's physical e-stop does: it raises the Critical "estop" event, as the
// MQTT e-stop topic does. Only an admin resets it.
//
// The UI is one more caller of the tools registry, named "web" in the
// journal and the audit log: the same schema validation, safety envelope,
// permissions and audit as MQTT. A viewer is granted "read", an admin "*";
// without users or tokens (loopback only) every visitor is an admin, as a
// local shell user is with `edgeagent invoke`.
//
// The live channel (Server-Sent Events) reads the world model's stream by
// cursor, as MQTT and the recorder do: one pump for all clients, started
// with the first client and stopped with the last, so a closed page costs
// nothing. Each client has a bounded queue; a client that does not keep up
// loses messages (counted), never slows the agent nor grows memory.
// Camera frames are MJPEG streams of <camera>.live, which the camera
// encodes only while a stream watches it.
//
// The page starts from /api/state, which carries the recent stream as the
// live channel would have sent it: events, LLM exchanges and tool calls in
// the stream's order (its sequence numbers), so a reload shows what a page
// left open shows. The page reads it once the live channel is open, and
// again at every reconnect (an agent rebuilt by a config reload numbers a
// new stream from 1), so nothing falls between the two. A failure that repeats (an LLM exchange that failed, an
// event carrying an error or of a kind ending in "_failed": without Ollama,
// one every ~20 s) is one line with a count and the time it was last seen;
// the stream keeps every record, only the view collapses them. The e-stop
// banner shows the actuators' latch (their health component "estop"), not
// the events in view, so it stays until the e-stop is reset.
//
// With ?static=1 the page is a snapshot: it loads once and opens neither
// the live channel nor a camera stream (the camera shows its newest frame).
// That is what a headless screenshot takes (README): Chromium's
// --virtual-time-budget stops its virtual clock while any request is open,
// and a live page always has one, however late it opens it.
//
// The camera's tuning panel (admins) sets threshold, min_area and masks
// drawn with the mouse. It edits the board file's own text (comments kept)
// and hands it to config.reload {save: true}: validated as `edgeagent
// check` does, the old file kept as .bak, the new one written atomically,
// the agent rebuilt from it. The dashboard writes no file itself.
package dashboard
