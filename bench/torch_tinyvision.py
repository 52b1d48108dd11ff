#!/usr/bin/env python3
"""The default (tinyvision) network and recipe in PyTorch, timed the way tv_bench_train times tvtrain.

Reads what tv_bench_train wrote to DIR: the decoded images (images.npy: N x H x W x C uint8, labels.npy,
train.npy, val.npy) and spec.json, the network the preset's rule chose for this dataset (its layers as
tvexport names them) and its recipe. Builds the same network (TensorFlow-style "same" padding, which
pads the extra row/column at the bottom/right, by the convolution itself when symmetric; depthwise =
grouped conv; adaptive average pooling), He-normal init (fan-in, zero biases), and trains RUNS times
from scratch: Adam (lr, betas 0.9/0.999, eps), cross-entropy averaged over the batch, gradient L2 norm
clipped, batches from a fresh shuffle every epoch, the learning rate per epoch from the same warmup +
cosine formula, and the same kinds of augmentation per image (horizontal flip with probability 1/2,
shift of up to +-S pixels with edges replicated, brightness gain 1 +- B), drawn from torch's generator
instead of ours. Only the epoch loop is timed (no validation, no data loading).

Last line of output: "torch VERSION median SECONDS min SECONDS val_acc FRACTION".
"""
import argparse
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_common


def same_pads(size, k, stride):
    out = (size + stride - 1) // stride
    total = max((out - 1) * stride + k - size, 0)
    return out, total // 2, total - total // 2


class Net(nn.Module):
    """The layers of spec.json, in order, on NCHW tensors."""

    def __init__(self, spec, classes):
        super().__init__()
        h, w, c = spec["height"], spec["width"], spec["channels"]
        self.steps = []
        self.mods = nn.ModuleList()
        for layer in spec["layers"]:
            t = layer["type"]
            if t in ("conv2d", "depthwise_conv2d"):
                k, s = layer["kernel"], layer["stride"]
                out_c = layer["filters"] if t == "conv2d" else c
                groups = 1 if t == "conv2d" else c
                pad, conv_pad = (0, 0, 0, 0), 0
                if layer["padding"] == "same":
                    h, top, bottom = same_pads(h, k, s)
                    w, left, right = same_pads(w, k, s)
                    if top == bottom == left == right:
                        conv_pad = top  # symmetric: the convolution pads by itself (no extra copy)
                    else:
                        pad = (left, right, top, bottom)
                else:
                    h, w = (h - k) // s + 1, (w - k) // s + 1
                m = nn.Conv2d(c, out_c, k, stride=s, padding=conv_pad, groups=groups)
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                nn.init.zeros_(m.bias)
                self.mods.append(m)
                self.steps.append(("conv", len(self.mods) - 1, pad))
                c = out_c
            elif t == "relu":
                self.steps.append(("relu",))
            elif t == "maxpool2d":
                k = layer["kernel"]
                h, w = h // k, w // k
                self.steps.append(("maxpool", k))
            elif t == "adaptive_avgpool2d":
                h, w = layer["out_h"], layer["out_w"]
                self.steps.append(("adaptive", (h, w)))
            elif t == "flatten":
                self.steps.append(("flatten",))
            elif t == "dense":
                m = nn.Linear(c * h * w, layer.get("units") or classes)
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
                nn.init.zeros_(m.bias)
                self.mods.append(m)
                self.steps.append(("dense", len(self.mods) - 1))
            else:
                raise SystemExit(f"torch_tinyvision.py: layer type {t} is not supported")

    def forward(self, x):
        for step in self.steps:
            kind = step[0]
            if kind == "conv":
                if any(step[2]):
                    x = F.pad(x, step[2])
                x = self.mods[step[1]](x)
            elif kind == "relu":
                x = F.relu(x)
            elif kind == "maxpool":
                x = F.max_pool2d(x, step[1])
            elif kind == "adaptive":
                x = F.adaptive_avg_pool2d(x, step[1])
            elif kind == "flatten":
                x = torch.flatten(x, 1)
            else:
                x = self.mods[step[1]](x)
        return x


def epoch_lr(r, epoch):
    """tv::recipe_lr: linear warmup, then cosine decay to lr * lr_min_factor."""
    base, warm = r["lr"], r["warmup_epochs"]
    if warm > 0 and epoch < warm:
        return base * (epoch + 1) / (warm + 1)
    if not r["cosine"]:
        return base
    span = r["epochs"] - warm
    if span <= 1:
        return base
    t = (epoch - warm) / (span - 1)
    lo = base * r["lr_min_factor"]
    return lo + 0.5 * (base - lo) * (1.0 + math.cos(math.pi * t))


def augment(x, r):
    """x: B x C x H x W uint8 -> float in [0, 1] after flip, shift (edges replicated) and brightness."""
    b, _, h, w = x.shape
    rows = torch.arange(h).expand(b, h)
    cols = torch.arange(w).expand(b, w)
    if r["flip"]:
        flip = torch.rand(b) < 0.5
        cols = torch.where(flip[:, None], w - 1 - cols, cols)
    s = r["shift"]
    if s > 0:
        rows = (rows + torch.randint(-s, s + 1, (b, 1))).clamp(0, h - 1)
        cols = (cols + torch.randint(-s, s + 1, (b, 1))).clamp(0, w - 1)
    x = x[torch.arange(b)[:, None, None], :, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
    x = x.float() * (1.0 / 255.0)
    if r["brightness"] > 0:
        gain = 1.0 + r["brightness"] * (2.0 * torch.rand(b, 1, 1, 1) - 1.0)
        x = (x * gain).clamp(max=1.0)
    return x


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=7)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    with open(os.path.join(a.dir, "spec.json")) as f:
        spec = json.load(f)
    r = spec["recipe"]
    cache, labels, train, val, classes = torch_common.load(a.dir)

    def setup():
        model = Net(spec, classes)
        return model, torch.optim.Adam(model.parameters(), lr=r["lr"], betas=(0.9, 0.999), eps=r["eps"])

    def train_epochs(model, opt):
        for epoch in range(r["epochs"]):
            for g in opt.param_groups:
                g["lr"] = epoch_lr(r, epoch)
            order = train[torch.randperm(len(train))]
            for start in range(0, len(order), r["batch"]):
                idx = order[start:start + r["batch"]]
                loss = F.cross_entropy(model(augment(cache[idx], r)), labels[idx])
                opt.zero_grad()
                loss.backward()
                if r["grad_clip_norm"] > 0:
                    nn.utils.clip_grad_norm_(model.parameters(), r["grad_clip_norm"])
                opt.step()

    torch_common.timed_runs(a.runs, setup, train_epochs, cache, labels, val)


if __name__ == "__main__":
    main()
