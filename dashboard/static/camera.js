// edgeagent dashboard: cameras, motion overlay and the tuning panel (see app.js).
"use strict";

// ---- cameras ------------------------------------------------------------------
function renderCameras(names, motion) {
  const box = $("#cameras");
  box.replaceChildren();
  S.cameras = {};
  for (const name of names) S.cameras[name] = camera(name, motion[name] || {}, box);
}

function camera(name, m, box) {
  // A snapshot page (?static=1) shows the newest frame: a stream never ends.
  const img = el("img", { alt: name + (S.static ? "" : " live"), src: "/api/camera/" + encodeURIComponent(name) + (S.static ? "/snapshot" : "/stream") });
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
    el("div", { class: "row" }, saveBtn, el("span", { class: "muted", text: "validated as a config reload, saved to the board file; the agent restarts with it" })), msg);
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
    // config.reload {save} validates, writes the board file (the old one
    // kept as .bak) and rebuilds the agent; an agent started without a
    // board file applies it until it stops.
    const saved = data.ok && data.result && data.result.value && data.result.value.saved;
    msg.textContent = !data.ok ? data.error : saved
      ? "accepted and saved to " + saved + " (the previous file kept as .bak): the agent is being rebuilt with it."
      : "accepted: the agent is being rebuilt with it. It lasts until the agent stops (it was not started from a board file).";
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
    for (const poly of cam.masks) { path(c, pixels(poly, w, h)); c.fill(); c.stroke(); }
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

// pixels scales a mask given in fractions of the frame (every value ≤ 1,
// which the detector accepts too) to pixels.
function pixels(poly, w, h) {
  return poly.every(([x, y]) => x <= 1 && y <= 1) ? poly.map(([x, y]) => [x * w, y * h]) : poly;
}

// A Frigate mask "x1,y1,x2,y2,…", in pixels or fractions.
function parseMask(s) {
  const n = String(s).split(",").map(Number), pts = [];
  for (let i = 0; i + 1 < n.length; i += 2) pts.push([n[i], n[i + 1]]);
  return pts;
}
