#!/usr/bin/env python3
"""Few photos per class: training from scratch against starting from the backbone (docs/few-shot.md).

For each N photos per class, draw d (0..draws-1) and seed s: each class's photos are shuffled by (draw, class)
and its first N train, the rest test. Every variant trains on the N per class (--val-last 0, so the test set
is the only measurement) with --seed s and is evaluated on the rest (`tvtrain TEST --eval --init M`).
A variant is a name and tvtrain options, e.g. scratch="--start scratch", bb="--start backbone".
Prints one JSON line per run and a table: per (N, variant) the pooled test accuracy (every test photo of
every draw and seed), the mean of the runs and its spread, and the difference to the first variant.
Usage:
  python3 bench/few_shot.py --tvtrain build/bin/tvtrain --dataset ../shared/datasets/webmcu-b \\
      --photos 5 10 20 --draws 5 --seeds 1 2 3 \\
      --variant scratch="--start scratch" --variant backbone="--start backbone" [--base-args '--input 28x28x1']
"""
import argparse
import json
import os
import random
import shutil
import statistics
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from planted_label_mistakes import class_root, photos_by_class  # noqa: E402  (one place for the layout)
from update_accuracy import make_set, run  # noqa: E402


def draw(by_class, n, d, limit_test):
    train, test = {}, {}
    for c, names in by_class.items():
        names = names[:]
        random.Random(d * 7919 + zlib.crc32(c.encode())).shuffle(names)
        train[c], test[c] = names[:n], names[n:][:limit_test] if limit_test else names[n:]
    return train, test


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tvtrain", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--photos", type=int, nargs="+", default=[5, 10, 20])
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--variant", action="append", default=[], help='NAME="tvtrain options"')
    p.add_argument("--base-args", default="", help="options every run gets, e.g. '--input 28x28x1'")
    p.add_argument("--test-limit", type=int, default=0, help="at most this many test photos per class (0: all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--work", default="/tmp/few-shot")
    a = p.parse_args()
    variants = [(v.split("=", 1)[0], v.split("=", 1)[1].split() if "=" in v else []) for v in a.variant] or [
        ("scratch", ["--start", "scratch"]), ("backbone", ["--start", "backbone"])]
    root = class_root(a.dataset)
    by_class = photos_by_class(root)
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    pooled = {}  # (n, variant) -> [correct, total, [run accuracies]]
    for n in a.photos:
        for d in range(a.draws):
            train, test = draw(by_class, n, d, a.test_limit)
            w = os.path.join(a.work, "n%d-d%d" % (n, d))
            tr = make_set(root, os.path.join(w, "train"), train)
            te = make_set(root, os.path.join(w, "test"), test)
            for s in a.seeds:
                for name, extra in variants:
                    m = os.path.join(w, "%s-s%d.tvb" % (name, s))
                    j = run([a.tvtrain, tr, "-o", m, "--val-last", "0", "--seed", str(s), "--threads",
                             str(a.threads), "-q", "--no-report", "--no-curve", "--no-confusion", "--json"] +
                            a.base_args.split() + extra)
                    e = run([a.tvtrain, te, "--eval", "--init", m, "--json", "-q", "--threads", str(a.threads)])
                    correct, total = e["correct"], e["total"]
                    acc = pooled.setdefault((n, name), [0, 0, []])
                    acc[0] += correct
                    acc[1] += total
                    acc[2].append(e["accuracy"])
                    print(json.dumps({"photos": n, "draw": d, "seed": s, "variant": name, "start": j.get("start"),
                                      "update": j.get("update"), "epochs": j["epochs"],
                                      "test_accuracy": e["accuracy"], "test_images": total}), flush=True)
            shutil.rmtree(w)
    print("\n| photos per class | variant | pooled test accuracy | mean of runs (sd) | vs %s |" % variants[0][0])
    print("|---:|---|---:|---:|---:|")
    for n in a.photos:
        base = pooled[(n, variants[0][0])]
        for name, _ in variants:
            c, t, accs = pooled[(n, name)]
            sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
            print("| %d | %s | %.1f %% (%d/%d) | %.1f %% (%.1f) | %+.1f pp |" % (
                n, name, 100 * c / t, c, t, 100 * statistics.mean(accs), 100 * sd,
                100 * (c / t - base[0] / base[1])))


if __name__ == "__main__":
    main()
