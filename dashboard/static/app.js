// edgeagent dashboard: plain JS, no build step. One live channel (SSE)
// feeds everything; the first state and the plots' history come from
// /api/state and /api/history. With ?static=1 the page is a snapshot: it
// loads once and opens no live channel and no camera stream, so a headless
// browser's --virtual-time-budget can finish (a request that never ends
// stops its virtual clock).
"use strict";

const $ = (sel, el = document) => el.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
};
const fmtTime = (ms) => new Date(ms).toLocaleTimeString();
const fmtNum = (v) => (v === null || v === undefined || typeof v !== "number") ? "—" :
  (Math.abs(v) >= 1000 || Number.isInteger(v) ? String(Math.round(v * 100) / 100) : String(Number(v.toPrecision(4))));
const json = (v) => JSON.stringify(v);

const S = {
  session: null, csrf: "", role: "", state: null, plots: {}, thresholds: {}, health: {}, actuators: {},
  events: [], calls: [], cameras: {}, lost: 0, es: null, window: 600, ready: false, pending: [], gen: 0,
  estop: { latched: false }, lastEStop: null, static: new URLSearchParams(location.search).has("static"),
};
window.dashboard = S; // for the browser test and for poking around in the console

function toast(msg, err) {
  const t = $("#toast");
  t.textContent = msg;
  t.className = err ? "err" : "";
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.add("hidden"), err ? 8000 : 3000);
}

async function api(path, body) {
  const opt = { headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    opt.method = "POST";
    opt.headers["Content-Type"] = "application/json";
    opt.headers["X-CSRF-Token"] = S.csrf;
    opt.body = JSON.stringify(body);
  }
  let r;
  try { r = await fetch(path, opt); } catch (_) {
    // the agent is restarting (a config reload) or the network is gone
    return { status: 0, data: { ok: false, error: "the robot does not answer" } };
  }
  let data = null;
  try { data = await r.json(); } catch (_) { data = { ok: false, error: "HTTP " + r.status }; }
  if (r.status === 401 && path !== "/api/session" && path !== "/api/login") showLogin();
  return { status: r.status, data };
}

// ---- session ----------------------------------------------------------
async function start() {
  const { status, data } = await api("/api/session");
  if (status === 401) { showLogin(); return; }
  enter(data);
}

function showLogin() {
  $("#main").classList.add("hidden");
  $("#login").classList.remove("hidden");
  if (S.es) { S.es.close(); S.es = null; }
}

function enter(sess) {
  S.session = sess; S.csrf = sess.csrf || ""; S.role = sess.role;
  $("#login").classList.add("hidden");
  $("#main").classList.remove("hidden");
  $("#who").textContent = sess.user + " (" + sess.role + ")";
  $("#logout").classList.toggle("hidden", !sess.auth_required);
  $("#device").textContent = sess.name || sess.device || "edgeagent";
  document.title = (sess.name || sess.device) + " — edgeagent";
  document.body.dataset.role = sess.role;
  load();
}

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const { status, data } = await api("/api/login", { user: f.get("user"), password: f.get("password"), token: f.get("token") });
  if (status !== 200) { $("#login-error").textContent = data.error || "login failed"; return; }
  $("#login-error").textContent = "";
  ev.target.reset();
  start();
});
$("#logout").addEventListener("click", async () => { await api("/api/logout", {}); location.reload(); });

// ---- tabs ------------------------------------------------------------
for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab));
}
function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab")) s.classList.toggle("hidden", s.id !== "tab-" + name);
  if (name === "events") renderEvents();
  if (name === "tools") loadTools();
  if (name === "audit") { loadAudit(); renderCalls(); }
  if (name === "config") loadConfig();
  if (name === "status") loadStatus();
  if (name === "overview") for (const p of Object.values(S.plots)) p.dirty = true;
}

// ---- initial state -----------------------------------------------------
// load draws /api/state. The live channel is open before it is read, and
// its messages wait until the state is drawn: what happens in between
// reaches the page, and a message the state already had is dropped by its
// sequence number. Every (re)opening of the channel loads again: a
// reconnect may have missed anything, and an agent rebuilt by a config
// reload starts a new stream, numbered from 1.
function load() {
  if (S.static) loadState(); else connect();
}

async function loadState() {
  const gen = ++S.gen;
  S.ready = false; S.pending = [];
  const [st, hist] = await Promise.all([api("/api/state"), api("/api/history")]);
  if (st.status !== 200 || gen !== S.gen) return;
  const s = st.data;
  S.state = s; S.thresholds = s.thresholds || {}; S.actuators = s.actuators || {};
  // only what is not ok, as the health records keep it
  S.health = Object.fromEntries(Object.entries(s.health || {}).filter(([, h]) => h !== "ok"));
  S.window = s.history_s || 600;
  renderCameras(s.cameras || [], s.camera_motion || {});
  for (const [src, ser] of Object.entries(hist.data || {})) ensurePlot(src, ser.u, ser.t, ser.v);
  for (const r of s.readings || []) if (r.v !== undefined) ensurePlot(r.src, r.u);
  // The same messages as the live channel, in the stream's order.
  S.events = []; S.calls = [];
  for (const m of s.items || []) onMessage(m, true);
  S.estop = s.estop || { latched: false };
  renderEvents(); renderRecent(); renderCalls(); renderActuators(); renderHealth(); renderEStop();
  if (S.static) {
    const conn = $("#conn");
    conn.textContent = "snapshot " + fmtTime(Date.now()); conn.className = "badge off";
    return;
  }
  for (const m of S.pending) onMessage(m);
  S.pending = []; S.ready = true;
}

// ---- live channel ------------------------------------------------------
function connect() {
  if (S.es) S.es.close();
  const es = new EventSource("/api/live");
  S.es = es;
  const conn = $("#conn");
  es.onopen = () => { conn.textContent = "live"; conn.className = "badge ok"; loadState(); };
  es.onerror = () => {
    conn.textContent = "reconnecting…"; conn.className = "badge warn";
    // A rebuilt agent (config reload) keeps the login; a lost login shows the form.
    api("/api/session").then(({ status }) => { if (status === 401) showLogin(); });
  };
  es.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (S.ready) onMessage(m);
    else if (S.pending.length < 10000) S.pending.push(m); // bounded, should the state not come
  };
}

// onMessage handles one message of the stream, from the live channel or
// from /api/state (initial: draw once at the end).
function onMessage(m, initial) {
  switch (m.t) {
    case "o": onReading(m); break;
    case "oe": onObsEvent(m); break;
    case "e": onEvent(m, initial); break;
    case "r": onRecord(m, initial); break;
    case "dropped": case "gap": S.lost += m.n; $("#ev-lost").textContent = S.lost + " live messages lost (slow connection)"; break;
  }
}

function onReading(m) {
  const p = ensurePlot(m.src, m.u);
  if (p.t.length && m.ts / 1000 <= p.t[p.t.length - 1]) return; // the history has it
  p.t.push(m.ts / 1000); p.v.push(m.v);
  p.last = m.v; p.dirty = true;
}

function onObsEvent(m) {
  if (m.kind === "live_motion") { const cam = S.cameras[m.src.replace(/\.live_motion$/, "")]; if (cam) cam.overlay(m.data); return; }
  if (m.kind === "motion_update" && $("#ev-updates").checked) onEvent(m);
}

// onEvent adds a line to the events list, which is in the stream's order
// (by sequence number, whatever the line came from). A failure's repeats
// (the server gives them one "rep" key) are one line: the newest, with how
// many there were and when the first was.
function onEvent(m, initial) {
  if (S.events.some((x) => x.seq === m.seq)) return; // already shown
  if (m.rep) {
    const i = S.events.findIndex((x) => x.rep === m.rep);
    if (i >= 0) {
      const old = S.events[i];
      m.n = (old.n || 1) + (m.n || 1); m.first = old.first || old.ts;
      S.events.splice(i, 1);
    }
  }
  let i = S.events.length;
  while (i > 0 && S.events[i - 1].seq > m.seq) i--;
  S.events.splice(i, 0, m);
  if (S.events.length > 500) S.events.splice(0, S.events.length - 500);
  if (m.kind === "estop") S.lastEStop = { ts: m.ts, src: m.src, msg: m.msg };
  if (m.kind === "estop_reset") S.lastEStop = null;
  if (!initial) { renderEvents(); renderRecent(); }
}

// The overview's few latest events, decisions included.
function renderRecent() {
  const items = [];
  for (let i = S.events.length - 1; i >= 0 && items.length < 8; i--) {
    const m = S.events[i];
    const li = el("li", { class: "p-" + m.prio, "data-kind": m.kind, "data-seq": m.seq, "data-rep": m.rep },
      el("span", { class: "meta", text: fmtTime(m.ts) }), el("b", { text: m.kind + " " }), m.msg || "", repeats(m));
    items.push(li);
  }
  $("#recent").replaceChildren(...items);
}

// repeats says how often a collapsed failure was seen (null for one).
function repeats(m) {
  if (!(m.n > 1)) return null;
  return el("span", { class: "repeats", text: " ×" + m.n + ", last seen " + fmtTime(m.ts) + " (first " + fmtTime(m.first) + ")" });
}

function onRecord(m, initial) {
  if (m.kind === "actuator") { S.actuators[m.src] = m.data.state; if (!initial) renderActuators(); return; }
  if (m.kind === "health") {
    if (m.data.health === "ok") delete S.health[m.src]; else S.health[m.src] = m.data.health;
    if (m.src === "estop") { // the actuators' latch: the e-stop that set it says when and by whom
      const latched = m.data.health === "latched";
      if (latched && !S.estop.ts) S.estop = { latched, ...(S.lastEStop || { ts: m.ts }) };
      if (!latched) S.estop = { latched };
    }
    if (!initial) { renderHealth(); renderEStop(); }
    return;
  }
  if (m.kind === "llm") { // an exchange with the model: listed with the events
    const d = m.data || {}, u = d.usage || {};
    const size = (v) => (v && v.omitted_bytes !== undefined ? v.omitted_bytes : json(v ?? "").length);
    const msg = (d.purpose || "call") + ": prompt " + (size(d.system) + size(d.messages)) + " B → answer " + size(d.answer) + " B, " +
      (u.prompt_tokens ?? "?") + " → " + (u.eval_tokens ?? "?") + " tokens, " + fmtNum(d.duration_ms) + " ms" + (d.error ? " — " + d.error : "") + (u.model ? " (" + u.model + ")" : "");
    onEvent({ t: "r", seq: m.seq, ts: m.ts, src: m.src, kind: "llm", prio: "low", msg, record: true, rep: m.rep, n: m.n, first: m.first }, initial);
    return;
  }
  if (m.kind === "tool_call") {
    if (S.calls.some((x) => x.seq === m.seq)) return;
    S.calls.push(m);
    if (S.calls.length > 300) S.calls.splice(0, S.calls.length - 300);
    if (!initial) renderCalls();
  }
}

// ---- E-STOP -----------------------------------------------------------------
// The badge and the Overview's banner show the actuators' latch (from
// /api/state, then their health records): an e-stop stays on the page until
// it is reset, however many events come after it.
function renderEStop() {
  const e = S.estop, latched = !!e.latched;
  const b = $("#estop-state");
  b.textContent = latched ? "E-STOP LATCHED" : "e-stop: ok";
  b.className = "badge " + (latched ? "bad" : "ok");
  document.body.dataset.estop = latched ? "latched" : "ok";
  const banner = $("#estop-banner");
  banner.classList.toggle("hidden", !latched);
  banner.textContent = !latched ? "" : "E-STOP LATCHED" + (e.ts ? " since " + fmtTime(e.ts) : "") + (e.src ? " by " + e.src : "") +
    (e.msg ? ": " + e.msg : "") + ". Every actuator is stopped until an admin resets it.";
  // only an admin may release it, and only a latched stop needs it
  $("#estop-reset").classList.toggle("hidden", !latched || S.role !== "admin");
}
$("#estop").addEventListener("click", async () => {
  const { data } = await api("/api/estop", {});
  if (!data.ok) toast("E-STOP: " + data.error, true);
  else if (data.latched) {
    S.estop.latched = true; // when and by whom: the health record that follows
    renderEStop(); toast("E-STOP latched: every actuator stopped");
  }
  else toast("E-STOP sent, but no actuator set reported a latch (does this board have actuators?)", true);
});
$("#estop-reset").addEventListener("click", async () => {
  if (!confirm("Release the e-stop? Nothing restarts by itself.")) return;
  const { data } = await api("/api/invoke", { tool: "estop.reset", params: {} });
  if (!data.ok) toast("reset: " + data.error, true);
  else { S.estop = { latched: false }; renderEStop(); toast("e-stop released"); }
});

// ---- actuators and health ----------------------------------------------------
function renderActuators() {
  const box = $("#actuators");
  box.replaceChildren(...Object.keys(S.actuators).sort().map((n) =>
    el("span", { class: "chip", "data-actuator": n, "data-state": S.actuators[n] }, el("b", { text: n }), S.actuators[n])));
}

function renderHealth() {
  for (const p of Object.values(S.plots)) {
    const comp = p.src.split(".")[0];
    const h = S.health[comp];
    p.card.classList.toggle("degraded", !!h);
    p.healthEl.textContent = h ? h : "";
  }
  const bad = Object.entries(S.health).filter(([k]) => k !== "estop");
  $("#sensor-note").textContent = bad.length ? bad.map(([k, v]) => k + ": " + v).join("; ") : "";
}

// Every script is loaded (they are deferred, in order) before this fires.
document.addEventListener("DOMContentLoaded", start);
