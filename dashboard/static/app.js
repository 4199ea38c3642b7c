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

// ---- plots ------------------------------------------------------------------
const skipPlot = /\.(drops)$/;
function ensurePlot(src, unit, t, v) {
  let p = S.plots[src];
  if (p) { if (t && !p.t.length) { p.t = t.slice(); p.v = v.slice(); p.dirty = true; } return p; }
  p = { src, unit: unit || "", t: t ? t.slice() : [], v: v ? v.slice() : [], dirty: true, last: v && v.length ? v[v.length - 1] : null };
  S.plots[src] = p;
  p.valueEl = el("span", { class: "value" });
  p.healthEl = el("span", { class: "health" });
  const holder = el("div", { class: "holder" });
  p.card = el("div", { class: "plot", "data-src": src, "data-points": "0" },
    el("div", { class: "title" }, el("span", { text: src }), p.healthEl, p.valueEl), holder);
  if (skipPlot.test(src)) p.card.classList.add("small");
  insertSorted($("#plots"), p.card, src);
  const lines = (S.thresholds[src] || []);
  p.u = new uPlot({
    width: 320, height: 140, legend: { show: false }, cursor: { show: false },
    // the x axis is always the last window up to now (a single point
    // would otherwise stretch it over years)
    scales: { x: { time: true, range: (u, lo) => { const now = Date.now() / 1000; return [Math.max(now - S.window, Math.min(lo ?? now, now - 60)), now]; } } },
    axes: [{ size: 24, font: "10px system-ui" }, { size: 60, font: "10px system-ui" }],
    series: [{}, { stroke: "#2563eb", width: 1.5 }], // points show where data is sparse
    hooks: {
      draw: [(u) => {
        // thresholds as dashed lines, red above / amber below
        const ctx = u.ctx;
        for (const l of lines) {
          const y = u.valToPos(l.value, "y", true);
          if (!isFinite(y) || y < u.bbox.top || y > u.bbox.top + u.bbox.height) continue;
          ctx.save();
          ctx.strokeStyle = l.kind === "above" ? "#dc2626" : "#d97706";
          ctx.setLineDash([5, 4]); ctx.lineWidth = 1;
          ctx.beginPath(); ctx.moveTo(u.bbox.left, y); ctx.lineTo(u.bbox.left + u.bbox.width, y); ctx.stroke();
          ctx.restore();
        }
      }],
    },
  }, [[], []], holder);
  // keep each threshold inside the y range, so that its line shows
  if (lines.length) p.u.scales.y.range = (u, lo, hi) => {
    for (const l of lines) { lo = Math.min(lo, l.value); hi = Math.max(hi, l.value); }
    const pad = (hi - lo) * 0.05 || 1;
    return [lo - pad, hi + pad];
  };
  return p;
}

function insertSorted(parent, child, key) {
  for (const c of parent.children) if (c.dataset.src > key) { parent.insertBefore(child, c); return; }
  parent.append(child);
}

// Redraw at most once a second, and only what changed and is visible.
setInterval(() => {
  if ($("#tab-overview").classList.contains("hidden")) return;
  const cut = Date.now() / 1000 - S.window;
  for (const p of Object.values(S.plots)) {
    if (!p.dirty) continue;
    p.dirty = false;
    let i = 0;
    while (i < p.t.length && p.t[i] < cut) i++;
    if (i) { p.t.splice(0, i); p.v.splice(0, i); }
    p.u.setData([p.t, p.v]);
    p.card.dataset.points = String(p.t.length);
    p.valueEl.textContent = fmtNum(p.last) + (p.unit ? " " + p.unit : "");
  }
}, 1000);

// ---- cameras ------------------------------------------------------------------
function renderCameras(names, motion) {
  const box = $("#cameras");
  box.replaceChildren();
  S.cameras = {};
  for (const name of names) S.cameras[name] = camera(name, motion[name] || {}, box);
}

function camera(name, m, box) {
  const img = el("img", { alt: name + " live", src: "/api/camera/" + encodeURIComponent(name) + "/stream" });
  const cv = el("canvas");
  const stateEl = el("span", { class: "badge off", text: "no motion" });
  const detEl = el("span", { class: "muted" });
  const frameEl = el("span", { class: "muted" });
  const cam = { name, img, cv, boxes: [], w: m.width || 0, h: m.height || 0, masks: (m.masks || []).map(parseMask), draft: [], drawing: false, frames: 0 };
  const tuneBtn = el("button", { text: "Tune motion…", "data-act": "tune", class: "admin-only", title: "admins only: saved through config.reload" });
  const tuning = el("div", { class: "tuning hidden" });
  const thr = el("input", { type: "range", min: 1, max: 255, value: m.threshold ?? 30, name: "threshold" });
  const thrOut = el("output", { text: String(thr.value) });
  thr.addEventListener("input", () => { thrOut.textContent = thr.value; });
  const area = el("input", { type: "number", min: 0, max: 100000, value: m.min_area ?? 10, name: "min_area" });
  const maskInfo = el("span", { class: "muted" });
  const drawBtn = el("button", { type: "button", text: "Draw a mask", "data-act": "draw" });
  const closeBtn = el("button", { type: "button", text: "Close polygon", disabled: true, "data-act": "close" });
  const clearBtn = el("button", { type: "button", text: "Clear masks", "data-act": "clear" });
  const saveBtn = el("button", { type: "button", text: "Save (config.reload)", "data-act": "save" });
  const msg = el("p", { class: "muted", "data-msg": "tuning" });
  tuning.append(
    el("div", { class: "row" }, el("label", {}, "threshold ", thr, thrOut), el("label", {}, "min area ", area)),
    el("div", { class: "row" }, drawBtn, closeBtn, clearBtn, maskInfo),
    el("div", { class: "row" }, saveBtn, el("span", { class: "muted", text: "validated as a config reload; the agent restarts with it" })), msg);
  const updMasks = () => { maskInfo.textContent = cam.masks.length + " mask(s)" + (cam.drawing ? ", click points on the image" : ""); draw(); };
  tuneBtn.addEventListener("click", () => tuning.classList.toggle("hidden"));
  drawBtn.addEventListener("click", () => { cam.drawing = true; cam.draft = []; cv.classList.add("drawing"); closeBtn.disabled = false; updMasks(); });
  closeBtn.addEventListener("click", () => {
    if (cam.draft.length >= 3) cam.masks.push(cam.draft);
    cam.draft = []; cam.drawing = false; cv.classList.remove("drawing"); closeBtn.disabled = true; updMasks();
  });
  clearBtn.addEventListener("click", () => { cam.masks = []; cam.draft = []; updMasks(); });
  cv.addEventListener("click", (ev) => {
    if (!cam.drawing || !cam.w) return;
    const r = cv.getBoundingClientRect();
    cam.draft.push([Math.round((ev.clientX - r.left) / r.width * cam.w), Math.round((ev.clientY - r.top) / r.height * cam.h)]);
    draw();
  });
  saveBtn.addEventListener("click", async () => {
    const body = { threshold: Number(thr.value), min_area: Number(area.value), masks: cam.masks.map((p) => p.flat().join(",")) };
    msg.textContent = "saving…";
    const { data } = await api("/api/camera/" + encodeURIComponent(name) + "/tuning", body);
    // config.reload applies the config to the running agent; the board
    // file on the robot stays as it is until someone copies it there.
    msg.textContent = data.ok ? "accepted: the agent is being rebuilt with it. It lasts until the next restart: the Config tab shows the YAML to keep in the board file." : data.error;
    msg.className = data.ok ? "muted" : "error";
  });
  box.append(el("div", { class: "camera", "data-camera": name },
    el("div", { class: "title" }, el("strong", { text: name }), " ", stateEl),
    el("div", { class: "view" }, img, cv),
    el("div", { class: "info" }, detEl, frameEl, tuneBtn), tuning));
  updMasks();

  function draw() {
    const w = cam.w || img.naturalWidth, h = cam.h || img.naturalHeight;
    if (!w) return;
    if (cv.width !== w) { cv.width = w; cv.height = h; }
    const c = cv.getContext("2d");
    c.clearRect(0, 0, w, h);
    c.lineWidth = Math.max(1, w / 320);
    c.fillStyle = "rgba(0,0,0,.35)"; c.strokeStyle = "#facc15";
    for (const poly of cam.masks) { path(c, poly); c.fill(); c.stroke(); }
    if (cam.draft.length) { c.strokeStyle = "#22d3ee"; path(c, cam.draft, true); c.stroke(); }
    c.strokeStyle = "#ef4444"; c.lineWidth = Math.max(2, w / 160);
    for (const b of cam.boxes) c.strokeRect(b[0], b[1], b[2] - b[0], b[3] - b[1]);
  }
  cam.overlay = (d) => {
    cam.frames++;
    if (d.width) { cam.w = d.width; cam.h = d.height; }
    cam.boxes = d.boxes || [];
    stateEl.textContent = d.motion ? "MOTION" : "no motion";
    stateEl.className = "badge " + (d.motion ? "bad" : "off");
    detEl.textContent = "detector " + fmtNum(d.detect_ms) + " ms/frame";
    frameEl.textContent = "frame " + d.frame + " · " + (d.area_pct || 0) + "% changed";
    cv.parentElement.parentElement.dataset.frames = String(cam.frames);
    draw();
  };
  return cam;
}

function path(c, poly, open) {
  c.beginPath();
  poly.forEach(([x, y], i) => (i ? c.lineTo(x, y) : c.moveTo(x, y)));
  if (!open) c.closePath();
}

// A Frigate mask "x1,y1,x2,y2,…" in pixels (fractions are scaled when the
// frame size is known).
function parseMask(s) {
  const n = String(s).split(",").map(Number), pts = [];
  for (let i = 0; i + 1 < n.length; i += 2) pts.push([n[i], n[i + 1]]);
  return pts;
}

// ---- events and decisions ---------------------------------------------------------
const prioRank = { low: 0, normal: 1, high: 2, critical: 3 };
for (const id of ["#ev-prio", "#ev-decisions"]) $(id).addEventListener("change", renderEvents);
$("#command-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = $("#command-form input"), out = $("#command-reply");
  out.textContent = "…";
  const { data } = await api("/api/command", { text: input.value });
  const steps = ((data.outcome || {}).steps || []).map((s) => s.tool + ": " + (s.error || "ok")).join("; ");
  out.textContent = data.ok ? "done" + (steps ? ": " + steps : "") : (data.error || "failed") + (steps ? " (" + steps + ")" : "");
  out.className = data.ok ? "muted" : "error";
});

function renderEvents() {
  if ($("#tab-events").classList.contains("hidden")) return; // drawn when the tab opens
  const min = prioRank[$("#ev-prio").value], onlyDec = $("#ev-decisions").checked;
  const items = [];
  for (let i = S.events.length - 1; i >= 0 && items.length < 200; i--) {
    const m = S.events[i];
    if (prioRank[m.prio] < min || (onlyDec && m.kind !== "decision")) continue;
    items.push(eventItem(m));
  }
  $("#events").replaceChildren(...items);
}

function eventItem(m) {
  const meta = el("span", { class: "meta", text: fmtTime(m.ts) + " · " + m.prio + " · " + m.src });
  const li = el("li", { class: "p-" + m.prio + " k-" + m.kind, "data-kind": m.kind });
  if (m.record) { // the full exchange is fetched when opened
    const d = el("details", {}, el("summary", {}, meta, el("b", { text: m.kind + " " }), m.msg));
    d.addEventListener("toggle", async () => {
      if (!d.open || d.children.length > 1) return;
      const { data } = await api("/api/record/" + m.seq);
      const x = data.data || {};
      const pre = (label, text) => el("div", {}, el("b", { text: label }), el("pre", { text: typeof text === "string" ? text : JSON.stringify(text, null, 2) }));
      d.append(data.ok === false ? el("p", { class: "error", text: data.error }) :
        el("div", { class: "trace" }, pre("system", x.system || ""), pre("messages", (x.messages || []).map((mm) => mm.role + ": " + mm.content).join("\n\n")),
          x.schema ? pre("format (JSON Schema)", x.schema) : null, pre("answer", x.answer || ""), x.error ? pre("error", x.error) : null));
    });
    li.append(d);
  } else if (m.kind === "decision" && m.data) {
    const d = el("details", {}, el("summary", {}, meta, el("b", { text: "decision " }), m.msg));
    d.addEventListener("toggle", () => { if (d.open && d.children.length === 1) d.append(traceView(m.data)); }, { once: false });
    li.append(d);
  } else {
    li.append(meta, el("b", { text: m.kind + " " }), m.msg || "");
    if (m.data && Object.keys(m.data).length) li.append(el("code", { class: "muted", text: " " + json(m.data).slice(0, 300) }));
  }
  return li;
}

function traceView(d) {
  const t = d.trace || {};
  const box = el("div", { class: "trace" });
  const kv = (k, v) => (v === undefined || v === null || v === "" ? null : el("div", {}, el("b", { text: k + ": " }), typeof v === "string" ? v : json(v)));
  box.append(...[kv("cycle", d.cycle), kv("path", d.path), kv("requester", t.requester), kv("perception", t.perception),
    kv("scenario", t.scenario), kv("scope", t.scope), kv("motive", t.motive), kv("embedder", t.embedder),
    kv("intent", (t.intents || []).map((i) => [i.action, i.object, ...(i.constraints || [])].filter(Boolean).join(" ")).join("; ")),
    kv("chosen tool", t.tool), kv("params", t.params), kv("confidence", t.confidence), kv("refusal", t.refusal),
    kv("notes", (t.notes || []).join("; ")), kv("total", t.total_ms !== undefined ? fmtNum(t.total_ms) + " ms" : undefined)].filter(Boolean));
  if (t.candidates && t.candidates.length) {
    box.append(table(["tool", "score", "semantic", "history", "permission", "context"],
      t.candidates.map((c) => [c.tool, c.score, c.semantic, c.history, c.permission, c.context].map((v) => typeof v === "number" ? fmtNum(v) : v))));
  }
  if (t.steps && t.steps.length) box.append(table(["step", "tool", "params", "depends on"], t.steps.map((s) => [s.id, s.tool, json(s.params), (s.depends_on || []).join(",")])));
  if (t.calls && t.calls.length) {
    box.append(el("div", {}, el("b", { text: "LLM calls: " + t.llm_calls + ", prompt " + t.prompt_bytes + " B, " + t.prompt_tokens + " → " + t.eval_tokens + " tokens" })),
      table(["purpose", "prompt bytes", "prompt tokens", "answer tokens", "ms", "error"], t.calls.map((c) => [c.purpose, c.prompt_bytes, c.prompt_tokens, c.eval_tokens, fmtNum(c.ms), c.error || ""])));
  }
  if (t.timings && t.timings.length) box.append(el("div", { class: "muted", text: t.timings.map((x) => x.step + " " + fmtNum(x.ms) + " ms").join(" · ") }));
  return box;
}

function table(head, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", { text: c === undefined || c === null ? "" : String(c) }))))));
}

// ---- tools --------------------------------------------------------------------
async function loadTools() {
  const { data } = await api("/api/tools");
  if (!Array.isArray(data)) return;
  const box = $("#tools");
  box.replaceChildren(...data.map(toolCard));
  filterTools();
}
$("#tool-filter").addEventListener("input", filterTools);
function filterTools() {
  const q = $("#tool-filter").value.trim().toLowerCase();
  for (const c of document.querySelectorAll(".tool")) c.classList.toggle("hidden", q !== "" && !c.dataset.tool.includes(q));
}

function toolCard(t) {
  const schema = t.parameters || {};
  const props = schema.properties || {};
  const req = new Set(schema.required || []);
  const form = el("form", { class: "tool", "data-tool": t.name });
  form.append(el("h3", { text: t.name }), el("div", { class: "desc", text: t.description + " [" + t.permission + "]" }));
  const getters = [];
  for (const [name, p] of Object.entries(props)) {
    const { input, get } = field(name, p, t.envelope && t.envelope.param === name ? t.envelope : null);
    // an optional parameter goes only when the user set it, so that the
    // tool's default applies otherwise (a slider always has some value)
    let touched = false;
    input.addEventListener("input", () => { touched = true; });
    input.addEventListener("change", () => { touched = true; });
    getters.push([name, () => (req.has(name) || touched ? get() : undefined), req.has(name)]);
    form.append(el("label", { title: p.description || "" }, el("span", { text: name + (req.has(name) ? " *" : "") }), input));
  }
  const reply = el("pre", { class: "reply hidden" });
  const btn = el("button", { type: "submit", text: "Invoke", disabled: !t.permitted || !t.enabled,
    title: !t.permitted ? "your role (" + S.role + ") is not granted " + t.permission : (!t.enabled ? "disabled" : "") });
  form.append(btn, reply);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const params = {};
    for (const [name, get, required] of getters) {
      const v = get();
      if (v !== undefined) params[name] = v;
    }
    btn.disabled = true;
    const { data } = await api("/api/invoke", { tool: t.name, params });
    btn.disabled = !t.permitted;
    reply.classList.remove("hidden");
    reply.classList.toggle("err", !data.ok);
    reply.textContent = data.ok ? json(data.result, null, 2) : (data.code ? data.code + ": " : "") + data.error;
    form.dataset.result = data.ok ? "ok" : (data.code || "error");
  });
  return form;
}

// field makes an input for one schema property: enums as selects, bounded
// numbers as sliders (the envelope's bounds when the tool has one),
// booleans as checkboxes, anything else as JSON or text.
function field(name, p, env) {
  const type = Array.isArray(p.type) ? p.type.find((x) => x !== "null") : p.type;
  if (p.enum) {
    const s = el("select", { name }, el("option", { value: "", text: p.default !== undefined ? "(default " + p.default + ")" : "—" }),
      ...p.enum.map((v) => el("option", { value: json(v), text: String(v) })));
    return { input: s, get: () => (s.value === "" ? undefined : JSON.parse(s.value)) };
  }
  if (type === "boolean") {
    const c = el("input", { type: "checkbox", name, checked: p.default === true });
    return { input: c, get: () => c.checked };
  }
  if (type === "number" || type === "integer") {
    const lo = env ? env.min : p.minimum, hi = env ? env.max : p.maximum;
    if (lo !== undefined && hi !== undefined && isFinite(lo) && isFinite(hi)) {
      const step = env && env.step ? env.step : (type === "integer" ? 1 : (hi - lo) / 100);
      const start = p.default !== undefined ? p.default : (lo + hi) / 2;
      const r = el("input", { type: "range", name, min: lo, max: hi, step, value: start });
      const out = el("output", { text: String(start) + (env && env.unit ? env.unit : "") });
      r.addEventListener("input", () => { out.textContent = r.value + (env && env.unit ? env.unit : ""); });
      return { input: el("span", { class: "slider" }, r, out), get: () => Number(r.value) };
    }
    const n = el("input", { type: "number", name, min: lo, max: hi, step: type === "integer" ? 1 : "any", placeholder: p.default !== undefined ? String(p.default) : "" });
    return { input: n, get: () => (n.value === "" ? undefined : Number(n.value)) };
  }
  if (type === "string") {
    const s = el("input", { type: "text", name, maxlength: p.maxLength, placeholder: p.default !== undefined ? String(p.default) : (p.description || "") });
    return { input: s, get: () => (s.value === "" ? undefined : s.value) };
  }
  const ta = el("textarea", { name, rows: 2, placeholder: "JSON" });
  return { input: ta, get: () => { if (ta.value.trim() === "") return undefined; try { return JSON.parse(ta.value); } catch (_) { return ta.value; } } };
}

// ---- audit -----------------------------------------------------------------------
$("#audit-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadAudit(); });
async function loadAudit() {
  const f = new FormData($("#audit-form"));
  const params = { limit: Number(f.get("limit") || 50), safety: f.get("safety") === "on" };
  if (f.get("tool")) params.tool = f.get("tool");
  if (f.get("since")) params.since = new Date(f.get("since")).toISOString();
  const { data } = await api("/api/invoke", { tool: "audit.query", params });
  const body = $("#audit tbody");
  if (!data.ok) { $("#audit-error").textContent = data.error; body.replaceChildren(); return; }
  $("#audit-error").textContent = "";
  const rows = (data.result.value || data.result || []);
  body.replaceChildren(...(Array.isArray(rows) ? rows : []).map((e) => el("tr", { "data-caller": e.caller },
    ...[fmtTime(Date.parse(e.time)), e.caller, e.tool, e.actuator, json(e.requested ?? ""), json(e.applied ?? ""), e.result + (e.notes ? " · " + e.notes.join("; ") : "")]
      .map((c) => el("td", { text: c === undefined ? "" : String(c) })))));
}
$("#calls-caller").addEventListener("input", renderCalls);
function renderCalls() {
  if ($("#tab-audit").classList.contains("hidden")) return; // drawn when the tab opens
  const q = $("#calls-caller").value.trim();
  const rows = [];
  for (let i = S.calls.length - 1; i >= 0 && rows.length < 100; i--) {
    const m = S.calls[i], d = m.data || {};
    if (q && d.caller !== q) continue;
    rows.push(el("tr", { "data-caller": d.caller || "" }, ...[fmtTime(m.ts), d.caller, m.src, json(d.params ?? {}), d.ok ? "ok" : (d.code + ": " + (d.error || "")), fmtNum(d.duration_ms)]
      .map((c) => el("td", { text: c === undefined ? "" : String(c) }))));
  }
  $("#calls tbody").replaceChildren(...rows);
}

// ---- status and config -------------------------------------------------------------
let lastCPU = null;
async function loadStatus() {
  if ($("#tab-status").classList.contains("hidden")) return;
  const { status, data } = await api("/api/status");
  if (status !== 200) return;
  const p = data.process || {}, a = data.agent || {}, d = data.dashboard || {}, w = data.world || {}, q = a.queue || {};
  let cpu = "—";
  if (lastCPU && p.now > lastCPU.now) cpu = fmtNum(100 * (p.cpu_s - lastCPU.cpu_s) / (p.now - lastCPU.now)) + " %";
  lastCPU = p;
  const comps = a.components || {};
  const stateOf = (c) => (c ? (c.state || c.status || (c.connected === true ? "connected" : c.connected === false ? "disconnected" : "")) : "");
  const cards = [["uptime", a.uptime], ["CPU (one core = 100 %)", cpu], ["RSS", p.rss_bytes ? fmtNum(p.rss_bytes / 1048576) + " MB" : "—"],
    ["cycles", a.cycles], ["preemptions", a.preemptions], ["queue dropped", q.dropped ?? json(q)], ["world dropped", w.dropped],
    ["MQTT", stateOf(comps.mqtt) || "—"], ["LLM / Ollama", stateOf(comps.llm || comps.engine) || "—"],
    ["live clients", d.live_clients], ["live dropped", d.live_dropped], ["camera streams", d.camera_streams], ["goroutines", p.goroutines]];
  $("#status-cards").replaceChildren(...cards.map(([k, v]) => el("div", { class: "card" }, el("div", { class: "k", text: k }), el("div", { class: "v", text: v === undefined ? "—" : String(v) }))));
  $("#status-components").textContent = JSON.stringify(comps, null, 2);
}
setInterval(loadStatus, 2000);

async function loadConfig() {
  const { data } = await api("/api/config");
  $("#config-check").textContent = data.check || "";
  $("#config-yaml").textContent = data.yaml || data.error || "";
  $("#config-plugins").replaceChildren(...(data.plugins || []).map((p) => el("li", {}, el("b", { text: p.name }), " " + (p.description || ""))));
}

start();
