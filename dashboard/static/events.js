// edgeagent dashboard: events, decision traces, LLM exchanges (see app.js).
"use strict";

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
  const li = el("li", { class: "p-" + m.prio + " k-" + m.kind, "data-kind": m.kind, "data-seq": m.seq, "data-rep": m.rep });
  if (m.record) { // the full exchange is fetched when opened
    const d = el("details", {}, el("summary", {}, meta, el("b", { text: m.kind + " " }), m.msg, repeats(m)));
    keepOpen(d, m.seq, async () => {
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
    keepOpen(d, m.seq, () => d.append(traceView(m.data)));
    li.append(d);
  } else {
    li.append(meta, el("b", { text: m.kind + " " }), m.msg || "");
    if (m.n > 1) li.append(repeats(m));
    if (m.data && Object.keys(m.data).length) li.append(el("code", { class: "muted", text: " " + json(m.data).slice(0, 300) }));
  }
  return li;
}

// The events opened to read: every new event redraws the list, and an
// opened trace or exchange used to close under the reader's eyes.
const openEvents = new Set();

// keepOpen fills d (fill, once) when it is opened, and opens it again in
// a redrawn list.
function keepOpen(d, seq, fill) {
  let filled = false;
  const show = () => { if (!filled) { filled = true; fill(); } };
  d.addEventListener("toggle", () => {
    if (d.open) { openEvents.add(seq); show(); } else openEvents.delete(seq);
  });
  if (openEvents.has(seq)) { d.open = true; show(); }
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
