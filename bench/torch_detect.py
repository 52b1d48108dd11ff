#!/usr/bin/env python3
"""The detect preset's network and recipe in PyTorch, timed the way tv_bench_detect times tvtrain.

Reads what tv_bench_detect wrote to DIR: the decoded photos (images.npy: N x H x W x C uint8), each
photo's grid of targets exactly as the core computes them (targets.npy: N x GH x GW uint8, 0 background,
k + 1 for object class k: tv::grid_targets), the labelled boxes (boxes.npy: M x 6 float32 rows of photo,
class, centre x, centre y, width, height as fractions of the photo), the split (train.npy, val.npy) and
spec.json (the layers tvtrain planned, the recipe, the object classes and the decoding threshold).

Builds the same network as torch_tinyvision.py does (TensorFlow-style "same" padding, depthwise = grouped
conv, He-normal init, zero biases) and trains RUNS times from scratch: per-cell softmax cross-entropy with
object cells weighing the recipe's object weight and background cells 1, averaged over the cells of the
batch (tv::grid_cross_entropy's mean over cells, then the batch mean); Adam (lr, betas 0.9/0.999, eps
added to the uncorrected sqrt(v) as tv::adam_step does); gradient L2 norm clipped; batches from a fresh
shuffle every epoch; the per-epoch warmup + cosine learning rate; per photo a horizontal flip with
probability 1/2 that mirrors its grid of targets, and the core's brightness gain ((v * gain + 128) >> 8,
capped at 255, gain = round(256 (1 + b u)), u uniform in [-1, 1]), drawn from torch's generator instead
of ours. When the recipe restores the best epoch, every epoch ends
with the validation F1 and the weights of the best one (compared exactly, in integers) are kept.

F1 as tv::grid_objects and tv::match_objects count it (tv/detect/grid.cpp): a cell is of class k - 1 when
k is its most probable object channel and p_k reaches the threshold; 8-connected cells of one class are one
object, its centroid the cells' centres weighted by their probabilities (input pixels), its probability
the highest of its cells; an object is right when its centroid falls inside an unmatched box of its class
(edges included), the most probable object first, the nearest box centre when several hold it.

Only the epochs' training is timed (no validation, no data loading).
Last line of output: "torch VERSION median SECONDS min SECONDS val_f1 F1".
"""
import argparse
import json
import math
import os
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_tinyvision


def load(folder):
    """The photos (uint8 NCHW), targets (int64 N x GH x GW), the split and each photo's boxes."""
    images = np.load(os.path.join(folder, "images.npy"))
    cache = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous()
    targets = torch.from_numpy(np.load(os.path.join(folder, "targets.npy")).astype(np.int64))
    train = torch.from_numpy(np.load(os.path.join(folder, "train.npy")))
    val = torch.from_numpy(np.load(os.path.join(folder, "val.npy")))
    rows = np.load(os.path.join(folder, "boxes.npy")).reshape(-1, 6)
    boxes = [[] for _ in range(len(images))]
    for r in rows:
        boxes[int(r[0])].append((int(r[1]), r[2], r[3], r[4], r[5]))  # float32, as the core's
    return cache, targets, train, val, boxes


def augment(x, t, r):
    """x: B x C x H x W uint8, t: B x GH x GW targets -> float input in [0, 1] and the targets, flipped
    together (and, when the recipe has "shift_cells", shifted together by whole cells), with the core's
    integer brightness gain."""
    b = x.shape[0]
    if r["flip"]:
        flip = torch.rand(b) < 0.5
        x = torch.where(flip[:, None, None, None], x.flip(3), x)
        t = torch.where(flip[:, None, None], t.flip(2), t)
    s = r.get("shift_cells", 0)
    if s > 0:  # whole cells, edges replicated; a cell moved in from outside is background
        _, _, h, w = x.shape
        gh, gw = t.shape[1:]
        cy, cx = torch.randint(-s, s + 1, (b, 1)), torch.randint(-s, s + 1, (b, 1))
        rows = (torch.arange(h) + cy * (h // gh)).clamp(0, h - 1)
        cols = (torch.arange(w) + cx * (w // gw)).clamp(0, w - 1)
        x = x[torch.arange(b)[:, None, None], :, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
        ty, tx = torch.arange(gh) + cy, torch.arange(gw) + cx
        inside = ((ty >= 0) & (ty < gh))[:, :, None] & ((tx >= 0) & (tx < gw))[:, None, :]
        t = t[torch.arange(b)[:, None, None], ty.clamp(0, gh - 1)[:, :, None], tx.clamp(0, gw - 1)[:, None, :]]
        t = torch.where(inside, t, torch.zeros_like(t))
    if r["brightness"] > 0:
        gain = torch.round(256.0 * (1.0 + r["brightness"] * (2.0 * torch.rand(b) - 1.0))).to(torch.int32)
        x = ((x.to(torch.int32) * gain[:, None, None, None] + 128) >> 8).clamp(max=255)
    return x.float() * (1.0 / 255.0), t


def grid_objects(probs, threshold, input_h, input_w):
    """tv::grid_objects on one grid of probabilities (K x GH x GW numpy): (label, prob, x, y) per object,
    in the raster order of its first cell."""
    k, gh, gw = probs.shape
    obj = probs[1:]
    best = obj.argmax(0)  # the first on ties, as the core
    cls = np.where(np.take_along_axis(obj, best[None], 0)[0] >= max(threshold, 1e-30), best, -1)
    f32 = np.float32  # the core's arithmetic, in its order (an edge case then falls the same way)
    step_x, step_y = f32(input_w) / f32(gw), f32(input_h) / f32(gh)
    objects = []
    for first in range(gh * gw):
        label = int(cls.flat[first])
        if label < 0:
            continue
        cls.flat[first] = -2
        stack, prob, weight, sx, sy = [first], f32(0), f32(0), f32(0), f32(0)
        while stack:
            c = stack.pop()
            row, col = divmod(c, gw)
            p = probs[label + 1, row, col]
            prob = p if p > prob else prob
            weight += p
            sx += p * (f32(col) + f32(0.5)) * step_x
            sy += p * (f32(row) + f32(0.5)) * step_y
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    rr, kk = row + dy, col + dx
                    if 0 <= rr < gh and 0 <= kk < gw and cls[rr, kk] == label:
                        cls[rr, kk] = -2
                        stack.append(rr * gw + kk)
        objects.append((label, prob, sx / weight, sy / weight))
    return objects


def match_objects(objects, boxes, input_h, input_w):
    """tv::match_objects: (tp, fp, fn) of one photo."""
    found = [False] * len(boxes)
    tp = 0
    # the most probable first, the earlier on ties (a stable sort)
    for label, _, x, y in sorted(objects, key=lambda o: -o[1]):
        fx, fy = x * (np.float32(1) / np.float32(input_w)), y * (np.float32(1) / np.float32(input_h))
        best, best_d = -1, np.float32(0)
        for j, (bl, cx, cy, w, h) in enumerate(boxes):
            dx, dy = fx - cx, fy - cy
            if found[j] or bl != label or not (abs(dx) <= np.float32(0.5) * w and abs(dy) <= np.float32(0.5) * h):
                continue
            d = dx * dx + dy * dy
            if best < 0 or d < best_d:
                best, best_d = j, d
        if best >= 0:
            found[best] = True
            tp += 1
    return tp, len(objects) - tp, len(boxes) - tp


def f1_of(counts):
    tp, fp, fn = counts
    return 1.0 if tp + fp + fn == 0 else 2.0 * tp / (2.0 * tp + fp + fn)


def f1_better(a, b):
    """tv::f1_better: a's F1 above b's, compared in integers."""
    an, ad = (2 * a[0], 2 * a[0] + a[1] + a[2]) if sum(a) else (2, 2)
    bn, bd = (2 * b[0], 2 * b[0] + b[1] + b[2]) if sum(b) else (2, 2)
    return an * bd > bn * ad


def validate(model, cache, val, boxes, threshold):
    """The summed (tp, fp, fn) of the validation photos."""
    _, _, h, w = cache.shape
    total = [0, 0, 0]
    with torch.no_grad():
        probs = F.softmax(model(cache[val].float() * (1.0 / 255.0)), dim=1).numpy()
    for i, p in zip(val.tolist(), probs):
        c = match_objects(grid_objects(p, threshold, h, w), boxes[i], h, w)
        total = [a + b for a, b in zip(total, c)]
    return tuple(total)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=1, help="run R is seeded with SEED * 1000 + R")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "spec.json")) as f:
        spec = json.load(f)
    r = spec["recipe"]
    threshold = spec["threshold"]
    cache, targets, train, val, boxes = load(a.dir)
    channels = spec["classes"] + 1
    keep_best = r["restore_best"] and len(val) > 0

    seconds, f1s = [], []
    for run in range(a.runs):
        torch.manual_seed(a.seed * 1000 + run)
        model = torch_tinyvision.Net(spec, channels)
        opt = torch.optim.Adam(model.parameters(), lr=r["lr"], betas=(0.9, 0.999), eps=r["eps"])
        weight = torch.tensor([1.0] + [r["object_weight"]] * (channels - 1))
        best, best_epoch, best_state = None, 0, None
        elapsed, step = 0.0, 0
        for epoch in range(r["epochs"]):
            t0 = time.perf_counter()
            model.train()
            for g in opt.param_groups:
                g["lr"] = torch_tinyvision.epoch_lr(r, epoch)
            order = train[torch.randperm(len(train))]
            for start in range(0, len(order), r["batch"]):
                idx = order[start:start + r["batch"]]
                x, t = augment(cache[idx], targets[idx], r)
                ce = F.cross_entropy(model(x), t, reduction="none")  # B x GH x GW
                loss = (weight[t] * ce).mean()
                opt.zero_grad()
                loss.backward()
                if r["grad_clip_norm"] > 0:
                    nn.utils.clip_grad_norm_(model.parameters(), r["grad_clip_norm"])
                step += 1
                for g in opt.param_groups:  # the core adds eps to the uncorrected sqrt(v) (tv::adam_step)
                    g["eps"] = r["eps"] / math.sqrt(1.0 - 0.999**step)
                opt.step()
            elapsed += time.perf_counter() - t0
            if keep_best:
                model.eval()
                counts = validate(model, cache, val, boxes, threshold)
                if best is None or f1_better(counts, best):
                    best, best_epoch = counts, epoch + 1
                    best_state = {k: v.clone() for k, v in model.state_dict().items()}
        if best_state is not None:
            model.load_state_dict(best_state)
        counts = validate(model, cache, val, boxes, threshold)
        seconds.append(elapsed)
        f1s.append(f1_of(counts))
        kept = f", epoch {best_epoch} kept" if keep_best else ""
        print(f"run {run + 1}: {elapsed:.3f} s, val F1 {f1s[-1]:.3f} ({counts[0]} right, {counts[1]} false alarms, "
              f"{counts[2]} missed{kept})", flush=True)
    print(f"torch {torch.__version__} median {statistics.median(seconds):.4f} min {min(seconds):.4f} "
          f"val_f1 {statistics.mean(f1s):.4f}")


if __name__ == "__main__":
    main()
