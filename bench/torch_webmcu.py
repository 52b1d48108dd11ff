#!/usr/bin/env python3
"""The webmcu network and recipe in PyTorch, timed the way tv_bench_train times tvtrain.

Reads the decoded images tv_bench_train wrote (images.npy: N x H x W x C uint8, labels.npy,
train.npy, val.npy in DIR) and trains from scratch RUNS times: conv 3x3 x4 -> clamp +-100 ->
LeakyReLU 0.1 -> maxpool 2 -> conv 3x3 x8 -> clamp -> LeakyReLU 0.1 -> flatten -> linear -> clamp +-50,
He-normal init, summed cross-entropy, Adam (lr, eps), weights clamped after every step, batches of 6
from a fresh shuffle every epoch. Only the epoch loop is timed (no validation, no data loading; the
images are normalized per batch inside the loop, as tvtrain normalizes per sample).

Last line of output: "torch VERSION median SECONDS min SECONDS val_acc FRACTION".
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_common


class WebMcu(nn.Module):
    def __init__(self, channels, height, width, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 4, 3)
        self.conv2 = nn.Conv2d(4, 8, 3)
        h = ((height - 2) // 2) - 2
        w = ((width - 2) // 2) - 2
        self.fc = nn.Linear(8 * h * w, classes)
        for m in (self.conv1, self.conv2, self.fc):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.leaky_relu(torch.clamp(self.conv1(x), -100.0, 100.0), 0.1)
        x = F.max_pool2d(x, 2)
        x = F.leaky_relu(torch.clamp(self.conv2(x), -100.0, 100.0), 0.1)
        return torch.clamp(self.fc(torch.flatten(x, 1)), -50.0, 50.0)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch", type=int, default=6)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--eps", type=float, default=1e-6)
    p.add_argument("--weight-clip", type=float, default=10.0)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    cache, labels, train, val, classes = torch_common.load(a.dir)
    _, channels, height, width = cache.shape

    def setup():
        model = WebMcu(channels, height, width, classes)
        return model, torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=a.eps)

    def train_epochs(model, opt):
        for _ in range(a.epochs):
            order = train[torch.randperm(len(train))]
            for start in range(0, len(order), a.batch):
                idx = order[start:start + a.batch]
                x = cache[idx].float() * (1.0 / 255.0)
                loss = F.cross_entropy(model(x), labels[idx], reduction="sum")
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    for w in model.parameters():
                        w.clamp_(-a.weight_clip, a.weight_clip)

    torch_common.timed_runs(a.runs, setup, train_epochs, cache, labels, val)


if __name__ == "__main__":
    main()
