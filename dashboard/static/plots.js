// edgeagent dashboard: sensor plots (uPlot) (see app.js).
"use strict";

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
