#!/usr/bin/env python3
"""Runs edgeagent's motion detector and Frigate's ImprovedMotionDetector side
by side in one process, on the same frames decoded once, and prints a
Markdown table. Driven by scripts/motion-vs-frigate.sh; see there.

Frigate's code is not part of this repository: its improved_motion.py is
loaded from the checkout given with --frigate. The few Frigate modules that
file imports (config and PTZ types, an abstract base class, a contour
helper) are replaced by minimal stand-ins, so that Frigate's own
dependencies (pydantic, ...) need not be installed; the detector itself
runs unchanged, with Frigate's default motion settings.
"""

import argparse
import ctypes
import importlib.util
import json
import os
import statistics
import sys
import time
import types

import cv2
import numpy as np

# Frigate's MotionConfig defaults (frigate/config/camera/motion.py).
FRIGATE_DEFAULTS = dict(
    enabled=True,
    threshold=30,
    lightning_threshold=0.8,
    skip_motion_threshold=None,
    improve_contrast=True,
    contour_area=10,
    delta_alpha=0.2,
    frame_alpha=0.01,
    frame_height=100,
)

SETTLE = 20  # start-up frames left out of false alarms and scores
MIN_IOU = 0.3


def load_frigate(root):
    """Imports ImprovedMotionDetector from root/frigate/motion/improved_motion.py."""
    path = os.path.join(root, "frigate", "motion", "improved_motion.py")
    if not os.path.exists(path):
        sys.exit(f"no {path}: --frigate must be a Frigate checkout")

    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
        return m

    def grab_cv2_contours(cnts):
        # OpenCV 4 returns (contours, hierarchy), OpenCV 3 (image, contours, hierarchy)
        return cnts[0] if len(cnts) == 2 else cnts[1]

    module("frigate", __path__=[])
    module("frigate.camera", PTZMetrics=object)
    module("frigate.config", __path__=[], MotionConfig=object)
    module("frigate.config.config", RuntimeMotionConfig=object)
    module("frigate.motion", __path__=[], MotionDetector=object)
    module("frigate.util", __path__=[])
    module("frigate.util.image", grab_cv2_contours=grab_cv2_contours)
    spec = importlib.util.spec_from_file_location("frigate.motion.improved_motion", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ImprovedMotionDetector


class Frigate:
    def __init__(self, cls, h, w):
        cfg = types.SimpleNamespace(**FRIGATE_DEFAULTS)
        cfg.rasterized_mask = np.full((h, w), 255, np.uint8)  # no mask
        self.d = cls((h, w, 3), cfg, 10)

    def detect(self, frame):
        return self.d.detect(frame)

    def result(self, frame):
        boxes = self.d.detect(frame)
        cal = self.d.is_calibrating()
        # Frigate drops the boxes while calibrating (frigate/video/detect.py)
        return (not cal and len(boxes) > 0), cal, [] if cal else list(boxes)


class Ours:
    def __init__(self, lib, h, w):
        self.lib = lib
        self.h = lib.motion_new(1)
        self.boxes = (ctypes.c_int32 * (4 * 64))()

    def __del__(self):
        self.lib.motion_free(self.h)

    def detect(self, frame):
        h, w = frame.shape
        return self.lib.motion_detect(self.h, frame.ctypes.data, w, w, h, self.boxes, 64)

    def result(self, frame):
        r = self.detect(frame)
        n = r & 0xFFFF
        b = [tuple(self.boxes[4 * i:4 * i + 4]) for i in range(n)]
        return bool(r & (1 << 16)), bool(r & (1 << 17)), b


def load_lib(path):
    lib = ctypes.CDLL(path)
    lib.motion_new.argtypes = [ctypes.c_int]
    lib.motion_new.restype = ctypes.c_int
    lib.motion_free.argtypes = [ctypes.c_int]
    lib.motion_detect.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.POINTER(ctypes.c_int32), ctypes.c_int]
    lib.motion_detect.restype = ctypes.c_int
    return lib


def decode(spec):
    """Luma planes of a clip: PATH or PATH=WxH (resized with INTER_AREA)."""
    path, _, size = spec.partition("=")
    frames = []
    if path.endswith(".y4m"):
        with open(path, "rb") as f:
            header = f.readline().split()
            w = int(next(x for x in header if x.startswith(b"W"))[1:])
            h = int(next(x for x in header if x.startswith(b"H"))[1:])
            c = next((x[1:] for x in header if x.startswith(b"C")), b"420jpeg")
            extra = 0 if c == b"mono" else 2 * ((w + 1) // 2) * ((h + 1) // 2)
            while f.readline().startswith(b"FRAME"):
                y = f.read(w * h)
                if len(y) < w * h:
                    break
                f.read(extra)
                frames.append(np.frombuffer(y, np.uint8).reshape(h, w).copy())
    elif path.endswith(".mjpeg"):
        data = open(path, "rb").read()
        start = 0
        while True:
            a = data.find(b"\xff\xd8", start)
            if a < 0:
                break
            b = data.find(b"\xff\xd9", a)
            if b < 0:
                break
            img = cv2.imdecode(np.frombuffer(data[a:b + 2], np.uint8), cv2.IMREAD_GRAYSCALE)
            if img is not None:
                frames.append(img)
            start = b + 2
    else:
        cap = cv2.VideoCapture(path)
        while True:
            ok, img = cap.read()
            if not ok:
                break
            frames.append(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY))
    if not frames:
        sys.exit(f"{path}: no frames")
    if size:
        w, h = (int(v) for v in size.split("x"))
        frames = [cv2.resize(f, (w, h), interpolation=cv2.INTER_AREA) for f in frames]
    return [np.ascontiguousarray(f) for f in frames]


def sidecar(path, kind):
    p = os.path.splitext(path.partition("=")[0])[0] + f".{kind}.json"
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def iou(a, b):
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def match(got, truth):
    """One-to-one matches at IoU >= MIN_IOU, best first (as motion.Score)."""
    pairs = sorted(((iou(g, t), i, j) for i, g in enumerate(got) for j, t in enumerate(truth)
                    if iou(g, t) >= MIN_IOU), reverse=True)
    ug, ut, tp = set(), set(), 0
    for _, i, j in pairs:
        if i not in ug and j not in ut:
            ug.add(i)
            ut.add(j)
            tp += 1
    return tp, len(got) - tp, len(truth) - tp


def quality(make, frames, steps, truth, static):
    d = make()
    motion = blind_after = 0
    cal = []
    tp = fp = fn = 0
    for i, f in enumerate(frames):
        m, c, boxes = d.result(f)
        cal.append(c)
        if i >= SETTLE and m:
            motion += 1
        if truth is not None and i >= SETTLE:
            a, b, c2 = match(boxes, [t for t in truth.get(i, [])])
            tp, fp, fn = tp + a, fp + b, fn + c2
    for s in steps or []:
        blind_after = max(blind_after, sum(cal[s:s + 50]))
    q = {"motion": motion, "blind_after_step": blind_after if steps else None,
         "false_alarms": motion if static else None}
    if truth is not None:
        q["recall"] = tp / max(tp + fn, 1)
        q["precision"] = tp / max(tp + fp, 1)
    return q


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frigate", required=True, help="Frigate checkout (its root)")
    ap.add_argument("--lib", required=True, help="libmotion.so built from ./cmd/motionlib")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--cpu", action="store_true",
                    help="time with the process's CPU time instead of the wall clock (on a loaded machine)")
    ap.add_argument("--static", action="append", default=[],
                    help="clip name (file name without extension) in which nothing moves")
    ap.add_argument("clips", nargs="+", help="PATH or PATH=WxH (.mjpeg, .y4m or anything OpenCV reads)")
    args = ap.parse_args()

    # One thread for OpenCV, as for us: on 100-row images its thread pool
    # buys nothing, and with --cpu its threads' time would count against it.
    cv2.setNumThreads(1)
    cls = load_frigate(args.frigate)
    lib = load_lib(args.lib)
    print(f"| clip | frames | size | Frigate ms/frame | edgeagent ms/frame | speed ratio "
          f"| false-alarm frames (Frigate / ours) | blind frames after a light step (Frigate / ours) "
          f"| box recall (Frigate / ours) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in args.clips:
        name = os.path.splitext(os.path.basename(spec.partition("=")[0]))[0]
        frames = decode(spec)
        h, w = frames[0].shape
        steps = sidecar(spec, "steps")
        truth = sidecar(spec, "truth")
        if truth is not None:
            truth = {t["frame"]: t["boxes"] for t in truth}
        makers = {"frigate": lambda: Frigate(cls, h, w), "ours": lambda: Ours(lib, h, w)}
        times = {k: [] for k in makers}
        for r in range(args.rounds):
            # alternate who goes first, so that neither always runs on a
            # cache the other warmed or a core the other heated
            for k in (list(makers) if r % 2 == 0 else list(reversed(makers))):
                d = makers[k]()
                t0 = time.process_time() if args.cpu else time.perf_counter()
                for f in frames:
                    d.detect(f)
                t1 = time.process_time() if args.cpu else time.perf_counter()
                times[k].append((t1 - t0) / len(frames) * 1000)
        fr, ou = statistics.median(times["frigate"]), statistics.median(times["ours"])
        static = name in args.static
        qf = quality(makers["frigate"], frames, steps, truth, static)
        qo = quality(makers["ours"], frames, steps, truth, static)

        def pair(key, fmt="{}"):
            if qf.get(key) is None:
                return "—"
            return f"{fmt.format(qf[key])} / {fmt.format(qo[key])}"

        print(f"| {name} | {len(frames)} | {w}×{h} | {fr:.3f} | {ou:.3f} | {fr / ou:.2f}× "
              f"| {pair('false_alarms')} | {pair('blind_after_step')} | {pair('recall', '{:.3f}')} |",
              flush=True)


if __name__ == "__main__":
    main()
