// edgeagent dashboard: tool forms, audit, status and config (see app.js).
"use strict";

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
  body.replaceChildren(...(Array.isArray(rows) ? rows : []).map((e) => {
    const cells = [fmtTime(Date.parse(e.time)), callerText(e), e.tool, e.actuator, json(e.requested ?? ""), json(e.applied ?? ""), e.result + (e.notes ? " · " + e.notes.join("; ") : "")]
      .map((c) => el("td", { text: c === undefined ? "" : String(c) }));
    if (e.via) cells[1].title = viaTitle(e.via);
    return el("tr", { "data-caller": e.caller, "data-via": viaText(e.via) }, ...cells);
  }));
}

// A fleet's or a group's command runs as caller mqtt; its records carry
// the broadcast it came by (via), shown beside the caller.
function viaText(via) { return via ? via.kind + " " + via.name : ""; }
function viaTitle(via) { return "sent to the " + via.kind + " on " + via.topic; }
function callerText(d) { return d.caller + (d.via ? " · " + viaText(d.via) : ""); }
$("#calls-caller").addEventListener("input", renderCalls);
function renderCalls() {
  if ($("#tab-audit").classList.contains("hidden")) return; // drawn when the tab opens
  const q = $("#calls-caller").value.trim();
  const rows = [];
  for (let i = S.calls.length - 1; i >= 0 && rows.length < 100; i--) {
    const m = S.calls[i], d = m.data || {}, via = viaText(d.via);
    // The filter takes a caller, or a broadcast's kind or name ("group", "north").
    if (q && d.caller !== q && !(d.via && (d.via.kind === q || d.via.name === q || via === q))) continue;
    const cells = [fmtTime(m.ts), callerText(d), m.src, json(d.params ?? {}), d.ok ? "ok" : (d.code + ": " + (d.error || "")), fmtNum(d.duration_ms)]
      .map((c) => el("td", { text: c === undefined ? "" : String(c) }));
    if (d.via) cells[1].title = viaTitle(d.via);
    rows.push(el("tr", { "data-caller": d.caller || "", "data-via": via }, ...cells));
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
