// edgeagent dashboard: plain JS, no build step. One live channel (SSE)
// feeds everything; the first state and the plots' history come from
// /api/state and /api/history.
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
  events: [], calls: [], cameras: {}, lost: 0, es: null, window: 600,
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
async function load() {
  const [st, hist] = await Promise.all([api("/api/state"), api("/api/history")]);
  if (st.status !== 200) return;
  const s = st.data;
  S.state = s; S.thresholds = s.thresholds || {}; S.health = s.health || {}; S.actuators = s.actuators || {};
  S.window = s.history_s || 600;
  renderCameras(s.cameras || [], s.camera_motion || {});
  for (const [src, ser] of Object.entries(hist.data || {})) ensurePlot(src, ser.u, ser.t, ser.v);
  for (const r of s.readings || []) if (r.v !== undefined) ensurePlot(r.src, r.u);
  S.events = []; S.calls = [];
  for (const m of s.events || []) onEvent(m, true);
  for (const m of s.records || []) onRecord(m, true);
  renderEvents(); renderRecent(); renderCalls(); renderActuators(); renderHealth(); renderEStop();
  connect();
}

// ---- live channel ------------------------------------------------------
function connect() {
  if (S.es) S.es.close();
  const es = new EventSource("/api/live");
  S.es = es;
  const conn = $("#conn");
  es.onopen = () => { conn.textContent = "live"; conn.className = "badge ok"; };
  es.onerror = () => {
    conn.textContent = "reconnecting…"; conn.className = "badge warn";
    // A rebuilt agent (config reload) keeps the login; a lost login shows the form.
    api("/api/session").then(({ status }) => { if (status === 401) showLogin(); });
  };
  es.onmessage = (e) => {
    const m = JSON.parse(e.data);
    switch (m.t) {
      case "o": onReading(m); break;
      case "oe": onObsEvent(m); break;
      case "e": onEvent(m); break;
      case "r": onRecord(m); break;
      case "dropped": case "gap": S.lost += m.n; $("#ev-lost").textContent = S.lost + " live messages lost (slow connection)"; break;
    }
  };
}

function onReading(m) {
  const p = ensurePlot(m.src, m.u);
  p.t.push(m.ts / 1000); p.v.push(m.v);
  p.last = m.v; p.dirty = true;
}

function onObsEvent(m) {
  if (m.kind === "live_motion") { const cam = S.cameras[m.src.replace(/\.live_motion$/, "")]; if (cam) cam.overlay(m.data); return; }
  if (m.kind === "motion_update" && $("#ev-updates").checked) onEvent(m);
}

function onEvent(m, initial) {
  S.events.push(m);
  if (S.events.length > 500) S.events.splice(0, S.events.length - 500);
  if (m.kind === "estop" || m.kind === "estop_reset") renderEStop();
  if (!initial) { renderEvents(); renderRecent(); }
}

// The overview's few latest events, decisions included.
function renderRecent() {
  const items = [];
  for (let i = S.events.length - 1; i >= 0 && items.length < 8; i--) {
    const m = S.events[i];
    const li = el("li", { class: "p-" + m.prio, "data-kind": m.kind }, el("span", { class: "meta", text: fmtTime(m.ts) }), el("b", { text: m.kind + " " }), m.msg || "");
    items.push(li);
  }
  $("#recent").replaceChildren(...items);
}

function onRecord(m, initial) {
  if (m.kind === "actuator") { S.actuators[m.src] = m.data.state; if (!initial) renderActuators(); return; }
  if (m.kind === "health") {
    if (m.data.health === "ok") delete S.health[m.src]; else S.health[m.src] = m.data.health;
    if (!initial) { renderHealth(); renderEStop(); }
    return;
  }
  if (m.kind === "llm") { // an exchange with the model: listed with the events
    const d = m.data || {}, u = d.usage || {};
    const size = (v) => (v && v.omitted_bytes !== undefined ? v.omitted_bytes : json(v ?? "").length);
    const msg = (d.purpose || "call") + ": prompt " + (size(d.system) + size(d.messages)) + " B → answer " + size(d.answer) + " B, " +
      (u.prompt_tokens ?? "?") + " → " + (u.eval_tokens ?? "?") + " tokens, " + fmtNum(d.duration_ms) + " ms" + (d.error ? " — " + d.error : "") + (u.model ? " (" + u.model + ")" : "");
    onEvent({ t: "r", seq: m.seq, ts: m.ts, src: m.src, kind: "llm", prio: "low", msg, record: true }, initial);
    return;
  }
  if (m.kind === "tool_call") {
    S.calls.push(m);
    if (S.calls.length > 300) S.calls.splice(0, S.calls.length - 300);
    if (!initial) renderCalls();
  }
}

// ---- E-STOP -----------------------------------------------------------------
function renderEStop() {
  const latched = S.health.estop === "latched";
  const b = $("#estop-state");
  b.textContent = latched ? "E-STOP LATCHED" : "e-stop: ok";
  b.className = "badge " + (latched ? "bad" : "ok");
  document.body.dataset.estop = latched ? "latched" : "ok";
  // only an admin may release it, and only a latched stop needs it
  $("#estop-reset").classList.toggle("hidden", !latched || S.role !== "admin");
}
$("#estop").addEventListener("click", async () => {
  const { data } = await api("/api/estop", {});
  if (!data.ok) toast("E-STOP: " + data.error, true);
  else if (data.latched) { S.health.estop = "latched"; renderEStop(); toast("E-STOP latched: every actuator stopped"); }
  else toast("E-STOP sent, but no actuator set reported a latch (does this board have actuators?)", true);
});
$("#estop-reset").addEventListener("click", async () => {
  if (!confirm("Release the e-stop? Nothing restarts by itself.")) return;
  const { data } = await api("/api/invoke", { tool: "estop.reset", params: {} });
  if (!data.ok) toast("reset: " + data.error, true);
  else { delete S.health.estop; renderEStop(); toast("e-stop released"); }
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
