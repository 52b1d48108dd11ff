#!/usr/bin/env python3
"""Accuracy of partial updates and imprinted classes (docs/on-device-learning.md), 5 folds x seeds.

For each seed and fold: each class's photos are shuffled (seeded) and dealt into 5 folds; fold f is the
test set, the other four the pool, split in two halves A and B per class.
  (a) adapt: base = `tvtrain A`; then `tvtrain B --init base --update U` for every U (full, head,
      sparse=K...) at the recipe's epochs; every model evaluated on the test fold
      (`tvtrain TEST --eval --init M`).
  (b) new class: class h = the fold's class (round robin) is left out: base = `tvtrain POOL-without-h`;
      then h is added from N of its pool photos (N = 5, 10) by imprinting alone (`--epochs 0`) and by
      imprinting + each update of --new-updates (default head), with tvtrain's --distill on (its default)
      and/or off (--distill on off); per-class recall on the test fold, old classes against the base's, and
      the old classes' mean cross-entropy on the test fold (tvtrain --eval --json's per-class loss).
Every run trains on all its photos (--val-last 0) so the test fold is the only measurement.
Prints one JSON line per (seed, fold) and a summary. Usage:
  python3 bench/update_accuracy.py --tvtrain build/bin/tvtrain --dataset ../shared/datasets/webmcu-b \
      --seeds 1 2 3 [--updates full head sparse=1 sparse=2 sparse=3] [--work /tmp/update-acc] [--preset P]
      [--base-args '--input 28x28x1']   (Fashion-MNIST: tvfashion-mnist fm10k --train-limit 10000, then fm10k/train)
      [--no-adapt --new-updates head full --distill on off]   (docs/on-device-learning.md, distillation)
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
from planted_label_mistakes import class_root, photos_by_class  # noqa: E402  (one place for the layout)


def make_set(src_root, dst, picks):
    """A dataset folder of symlinks: picks = {class: [names]}."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    for c, names in picks.items():
        os.makedirs(os.path.join(dst, c))
        for n in names:
            os.symlink(os.path.abspath(os.path.join(src_root, c, n)), os.path.join(dst, c, n))
    return dst


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + p.stderr)
    return json.loads(p.stdout) if "--json" in cmd else None


def train(a, ds, out, extra):
    return run([a.tvtrain, ds, "-o", out, "--val-last", "0", "--threads", str(a.threads), "-q", "--no-report",
                "--no-curve", "--no-confusion", "--json"] + extra)


def evaluate(a, test, model, classes=None, with_loss=False):
    """Accuracy and per-class recall of a model on a test set (classes: the model's order, when it differs
    from the sorted folder names: an appended class); with_loss: also each class's mean cross-entropy and
    image count."""
    order = ["--classes", ",".join(classes)] if classes else []
    j = run([a.tvtrain, test, "--eval", "--init", model, "--json", "-q", "--threads", str(a.threads)] + order)
    recall = {c["class"]: c["recall"] for c in j["per_class"]}
    if not with_loss:
        return j["accuracy"], recall
    return j["accuracy"], recall, {c["class"]: [c["loss"], c["images"]] for c in j["per_class"]}


def old_loss(losses, old):
    """The old classes' mean cross-entropy over their test images."""
    n = sum(losses[c][1] for c in old)
    return sum(losses[c][0] * losses[c][1] for c in old) / n


def old_accuracy(recall, losses, old):
    """The share of the old classes' test images the model gets right."""
    n = sum(losses[c][1] for c in old)
    return sum(recall[c] * losses[c][1] for c in old) / n


def one_fold(a, root, by_class, seed, fold, work):
    rng = random.Random(seed * 1000 + fold)
    test, half_a, half_b, pool = {}, {}, {}, {}
    for c, names in by_class.items():
        names = names[:]
        random.Random(seed * 7919 + zlib.crc32(c.encode()) % 1000).shuffle(names)
        test[c] = names[fold::5]
        rest = [n for i, n in enumerate(names) if i % 5 != fold]
        pool[c] = rest
        half_a[c], half_b[c] = rest[: len(rest) // 2], rest[len(rest) // 2 :]
    d = os.path.join(work, "s%d-f%d" % (seed, fold))
    os.makedirs(d, exist_ok=True)
    t = make_set(root, os.path.join(d, "test"), test)
    base_args = ["--seed", str(seed)] + (["--preset", a.preset] if a.preset else []) + a.base_args.split()
    row = {"seed": seed, "fold": fold, "adapt": {}, "new_class": {}}
    base = os.path.join(d, "base.tvb")
    if a.adapt:
        train(a, make_set(root, os.path.join(d, "A"), half_a), base, base_args)
        row["adapt"]["base"] = {"accuracy": evaluate(a, t, base)[0]}
    b = make_set(root, os.path.join(d, "B"), half_b)
    for u in a.updates if a.adapt else []:
        m = os.path.join(d, "adapt-%s.tvb" % u)
        j = train(a, b, m, ["--init", base, "--update", u, "--seed", str(seed)])
        row["adapt"][u] = {"accuracy": evaluate(a, t, m)[0], "train_flops": j["train_flops"],
                           "board_peak_bytes": j["memory"]["board_peak_bytes"]}
    # (b) a class left out, then added
    h = sorted(by_class)[fold % len(by_class)]
    without = {c: v for c, v in pool.items() if c != h}
    base_wo = os.path.join(d, "base-without.tvb")
    train(a, make_set(root, os.path.join(d, "without"), without), base_wo, base_args)
    _, base_recall, base_losses = evaluate(
        a, make_set(root, os.path.join(d, "test-without"), {c: v for c, v in test.items() if c != h}), base_wo,
        with_loss=True)
    old = sorted(without)
    row["new_class"] = {"class": h, "base_recall": base_recall, "base_old_loss": old_loss(base_losses, old),
                        "base_old_accuracy": old_accuracy(base_recall, base_losses, old)}
    runs = [("imprint", ["--epochs", "0"])]
    for u in a.new_updates:
        for dist in a.distill:  # tvtrain's default (on) without a suffix
            runs.append(("imprint+" + u + ("" if dist == "on" else "+distill=" + dist), ["--update", u, "--distill", dist]))
    for n in (5, 10):
        picks = dict(without)
        picks[h] = rng.sample(pool[h], min(n, len(pool[h])))
        ds = make_set(root, os.path.join(d, "add%d" % n), picks)
        for how, extra in runs:
            m = os.path.join(d, "add%d-%s.tvb" % (n, how))
            j = train(a, ds, m, ["--init", base_wo, "--seed", str(seed)] + extra)
            acc, rec, losses = evaluate(a, t, m, j["classes"], with_loss=True)
            row["new_class"]["%s_%d" % (how, n)] = {"accuracy": acc, "recall": rec, "old_loss": old_loss(losses, old),
                                                    "old_accuracy": old_accuracy(rec, losses, old)}
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tvtrain", required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--updates", nargs="+", default=["full", "head", "sparse=1", "sparse=2", "sparse=3"])
    p.add_argument("--preset", default="")
    p.add_argument("--base-args", default="", help="more options of the base models' tvtrain, e.g. '--input 28x28x1'")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--work", default="/tmp/update-acc")
    p.add_argument("--no-adapt", dest="adapt", action="store_false", help="only the new-class part")
    p.add_argument("--folds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="the folds to run (0..4)")
    p.add_argument("--new-updates", nargs="+", default=["head"], help="the updates that follow imprinting in (b)")
    p.add_argument("--distill", nargs="+", default=["on"], choices=["on", "off"],
                   help="(b)'s trainings with tvtrain --distill on (the default) and/or off")
    a = p.parse_args()
    root = class_root(a.dataset)
    by_class = photos_by_class(root)
    rows = []
    for seed in a.seeds:
        for fold in a.folds:
            row = one_fold(a, root, by_class, seed, fold, a.work)
            print(json.dumps(row), flush=True)
            rows.append(row)
    summary = {"adapt_accuracy_mean": {}, "new_class": {}}
    for u in ["base"] + a.updates if a.adapt else []:
        summary["adapt_accuracy_mean"][u] = statistics.mean(r["adapt"][u]["accuracy"] for r in rows)
    for u in a.updates if a.adapt else []:
        summary.setdefault("adapt_train_flops", {})[u] = rows[0]["adapt"][u]["train_flops"]
        summary.setdefault("adapt_board_peak_bytes", {})[u] = rows[0]["adapt"][u]["board_peak_bytes"]
    summary["new_class"]["base_old_loss_mean"] = statistics.mean(r["new_class"]["base_old_loss"] for r in rows)
    summary["new_class"]["base_old_accuracy_mean"] = statistics.mean(r["new_class"]["base_old_accuracy"] for r in rows)
    keys = [k for k in rows[0]["new_class"] if k.endswith(("_5", "_10")) and isinstance(rows[0]["new_class"][k], dict)]
    for key in keys:
        new_recall, old_drop = [], []
        for r in rows:
            nc = r["new_class"]
            new_recall.append(nc[key]["recall"][nc["class"]])
            for c, base_rec in nc["base_recall"].items():
                old_drop.append(base_rec - nc[key]["recall"][c])
        summary["new_class"][key] = {"new_class_recall_mean": statistics.mean(new_recall),
                                     "old_class_accuracy_mean": statistics.mean(r["new_class"][key]["old_accuracy"] for r in rows),
                                     "old_class_recall_drop_mean": statistics.mean(old_drop),
                                     "old_class_loss_mean": statistics.mean(r["new_class"][key]["old_loss"] for r in rows),
                                     "accuracy_mean": statistics.mean(r["new_class"][key]["accuracy"] for r in rows)}
    print(json.dumps({"summary": summary}, indent=1))


if __name__ == "__main__":
    main()
