"""What the PyTorch twins of tv_bench_train share: reading the decoded images the bench wrote, and
timing runs from scratch the way the bench times tvtrain (only the epoch loop), with the summary line
the bench parses: "torch VERSION median SECONDS min SECONDS val_acc FRACTION"."""
import os
import statistics
import time

import numpy as np
import torch


def load(folder):
    """images.npy (N x H x W x C uint8), labels.npy, train.npy, val.npy of FOLDER as tensors: the image
    cache (uint8 NCHW, decoded once), labels, training and validation indices, and the class count."""
    images = np.load(os.path.join(folder, "images.npy"))
    labels = torch.from_numpy(np.load(os.path.join(folder, "labels.npy")))
    train = torch.from_numpy(np.load(os.path.join(folder, "train.npy")))
    val = torch.from_numpy(np.load(os.path.join(folder, "val.npy")))
    cache = torch.from_numpy(images).permute(0, 3, 1, 2).contiguous()
    return cache, labels, train, val, int(labels.max()) + 1


def timed_runs(runs, setup, train_epochs, cache, labels, val):
    """RUNS times: seed torch with the run number, setup() -> (model, optimizer), time
    train_epochs(model, optimizer), then measure the validation accuracy; prints one line per run and
    the summary line."""
    seconds, accuracy = [], 0.0
    for run in range(runs):
        torch.manual_seed(run)
        model, opt = setup()
        t0 = time.perf_counter()
        train_epochs(model, opt)
        seconds.append(time.perf_counter() - t0)
        with torch.no_grad():
            pred = model(cache[val].float() * (1.0 / 255.0)).argmax(1)
            accuracy = float((pred == labels[val]).float().mean())
        print(f"run {run + 1}: {seconds[-1]:.3f} s, val accuracy {accuracy:.3f}", flush=True)
    print(f"torch {torch.__version__} median {statistics.median(seconds):.4f} min {min(seconds):.4f} "
          f"val_acc {accuracy:.4f}")
