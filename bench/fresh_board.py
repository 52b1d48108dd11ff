#!/usr/bin/env python3
"""A fresh board (tvsim, no model): Learn from the built-in backbone against a full Train from He-init on the
same photos (docs/few-shot.md).

For each draw d: each class's photos are shuffled by (draw, class); the first N go on the card's
/images/<class>/, the rest are the held-out test set. tvsim boots the card (the backbone tier) and runs Learn
(imprinting + the head update); a copy of the card boots with --no-backbone and runs Learn, which on a board
without a backbone is a full Train from He-init. Both models are evaluated on the test set
(`tvtrain TEST --eval --init CARD/header/model.tvb`); the FLOPs and the board's peak memory of each are
tvtrain's --json figures of the same run on the card's photos (`--start backbone --update head`, `--start
scratch`), which the board's code computes the same way. Usage:
  python3 bench/fresh_board.py --bin build/bin --dataset ../shared/datasets/webmcu-b --photos 10 --draws 5
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from planted_label_mistakes import class_root, photos_by_class  # noqa: E402
from update_accuracy import run  # noqa: E402


def copy_set(src_root, dst, picks):
    for c, names in picks.items():
        os.makedirs(os.path.join(dst, c))
        for n in names:
            shutil.copyfile(os.path.join(src_root, c, n), os.path.join(dst, c, n))


def board_learn(a, card, extra):
    """tvsim boots `card` and selects Learn (after the classes, Train and Infer); True when a model was saved."""
    classes = len(os.listdir(os.path.join(card, "images")))
    script = "t" * (classes + 2) + "l\n"
    p = subprocess.run([os.path.join(a.bin, "tvsim"), "--sd", card] + extra, input=script, capture_output=True,
                       text=True, timeout=3600)
    if p.returncode != 0 or not os.path.isfile(os.path.join(card, "header", "model.tvb")):
        sys.exit("tvsim failed on %s:\n%s\n%s" % (card, p.stdout[-3000:], p.stderr[-2000:]))
    return p.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="folder holding tvsim and tvtrain")
    p.add_argument("--dataset", required=True)
    p.add_argument("--photos", type=int, default=10)
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--work", default="/tmp/fresh-board")
    a = p.parse_args()
    tvtrain = os.path.join(a.bin, "tvtrain")
    root = class_root(a.dataset)
    by_class = photos_by_class(root)
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    rows = []
    for d in range(a.draws):
        train, test = {}, {}
        for c, names in by_class.items():
            names = names[:]
            random.Random(d * 7919 + zlib.crc32(c.encode())).shuffle(names)
            train[c], test[c] = names[:a.photos], names[a.photos:]
        w = os.path.join(a.work, "d%d" % d)
        copy_set(root, os.path.join(w, "card", "images"), train)
        copy_set(root, os.path.join(w, "test"), test)
        shutil.copytree(os.path.join(w, "card"), os.path.join(w, "card-he"))
        row = {"draw": d}
        for name, card, extra, start in (("backbone Learn", "card", [], ["--start", "backbone", "--update", "head"]),
                                         ("He-init Train", "card-he", ["--no-backbone"], ["--start", "scratch"])):
            board_learn(a, os.path.join(w, card), extra)
            e = run([tvtrain, os.path.join(w, "test"), "--eval", "--init", os.path.join(w, card, "header", "model.tvb"),
                     "--json", "-q"])
            j = run([tvtrain, os.path.join(w, card, "images"), "-o", os.path.join(w, card + ".host.tvb"), "--json",
                     "-q", "--no-report", "--no-curve", "--no-confusion"] + start)
            row[name] = {"correct": e["correct"], "total": e["total"], "train_flops": j["train_flops"],
                         "board_peak_bytes": j["memory"]["board_peak_bytes"]}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| start | held-out accuracy (pooled) | mean of draws (sd) | training FLOPs | at 10 MFLOP/s | board peak |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("backbone Learn", "He-init Train"):
        c = sum(r[name]["correct"] for r in rows)
        t = sum(r[name]["total"] for r in rows)
        accs = [r[name]["correct"] / r[name]["total"] for r in rows]
        flops = statistics.median(r[name]["train_flops"] for r in rows)
        peak = max(r[name]["board_peak_bytes"] for r in rows)
        print("| %s | %.1f %% (%d/%d) | %.1f %% (%.1f) | %s | %.0f s | %s bytes |" % (
            name, 100 * c / t, c, t, 100 * statistics.mean(accs), 100 * (statistics.stdev(accs) if len(accs) > 1 else 0),
            format(int(flops), ","), flops / 1e7, format(peak, ",")))


if __name__ == "__main__":
    main()
