#!/usr/bin/env python3
"""Plants label mistakes in a copy of a dataset and measures tvtrain's suspect_labels (docs/suspect-labels.md).

For each seed:
  1. copy DATASET, move 5 % of each class's photos (at least one, seeded) into another class folder (random,
     seeded), run `tvtrain COPY --kfold 5 --json --seed S` and score suspect_labels against the planted moves:
     precision = planted among flagged / flagged, recall = planted flagged / planted;
  2. accuracy recovered: hold out 20 % of each class (clean, seeded) as a test set, plant 5 % mistakes in the
     rest, train on it as is (noisy), without the photos --kfold flags (cleaned), with each flagged photo
     moved to its suggested class (relabelled), and on the clean rest (clean), and evaluate the four models
     on the held-out test set (`tvtrain TEST --eval --init M`).
Prints one JSON object per seed and a summary line. Usage:
  python3 bench/planted_label_mistakes.py --tvtrain build/bin/tvtrain --dataset ../shared/datasets/webmcu-b \
      --seeds 1 2 3 [--kfold 5] [--fraction 0.05] [--work /tmp/planted]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys


def class_root(dataset):
    """The folder holding the class folders (DATASET or DATASET/images, as tvtrain reads it)."""
    images = os.path.join(dataset, "images")
    return images if os.path.isdir(images) else dataset


def photos_by_class(root):
    out = {}
    for c in sorted(os.listdir(root)):
        d = os.path.join(root, c)
        if os.path.isdir(d) and not c.startswith("."):
            out[c] = sorted(f for f in os.listdir(d) if f.lower().endswith((".jpg", ".jpeg", ".png")))
    return out


def copy_classes(src_root, dst_root, pick=None):
    """Copies the class folders (every photo, or those pick(class, name) accepts)."""
    os.makedirs(dst_root)
    for c, names in photos_by_class(src_root).items():
        os.makedirs(os.path.join(dst_root, c))
        for n in names:
            if pick is None or pick(c, n):
                shutil.copy2(os.path.join(src_root, c, n), os.path.join(dst_root, c, n))


def plant(root, fraction, rng):
    """Moves round(fraction * n) (at least 1) photos of each class into another class; returns the moved
    photos' new paths (relative to root) and their true class."""
    by_class = photos_by_class(root)
    classes = sorted(by_class)
    moved = {}
    for c in classes:
        n = max(1, round(fraction * len(by_class[c])))
        for name in rng.sample(by_class[c], n):
            other = rng.choice([x for x in classes if x != c])
            new_name = "planted_" + c + "_" + name  # keeps names unique in the new folder
            os.rename(os.path.join(root, c, name), os.path.join(root, other, new_name))
            moved[os.path.join(other, new_name)] = c
    return moved


def run_json(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(cmd) + "\n" + p.stderr)
    return json.loads(p.stdout)


def rel(path, root):
    return os.path.relpath(os.path.abspath(path), os.path.abspath(root))


def score(flagged_paths, moved, root):
    flagged = {rel(p, root) for p in flagged_paths}
    hits = len(flagged & set(moved))
    return {"planted": len(moved), "flagged": len(flagged), "hits": hits,
            "precision": hits / len(flagged) if flagged else None, "recall": hits / len(moved) if moved else None}


def one_seed(args, seed):
    work = os.path.join(args.work, "seed%d" % seed)
    shutil.rmtree(work, ignore_errors=True)
    rng = random.Random(seed)
    src = class_root(args.dataset)
    # 1. suspects on the whole planted copy
    full = os.path.join(work, "full")
    copy_classes(src, full)
    moved = plant(full, args.fraction, rng)
    kf = run_json([args.tvtrain, full, "--kfold", str(args.kfold), "--json", "--seed", str(seed), "-q"])
    result = {"seed": seed, "full": score([s["path"] for s in kf["suspect_labels"]], moved, full),
              "full_cv_accuracy": kf["cv_accuracy_mean"]}
    # 2. accuracy recovered on a clean held-out test set
    test_names = {c: set(rng.sample(names, max(1, round(0.2 * len(names)))))
                  for c, names in photos_by_class(src).items()}
    test, clean, noisy = (os.path.join(work, x) for x in ("test", "clean", "noisy"))
    copy_classes(src, test, lambda c, n: n in test_names[c])
    copy_classes(src, clean, lambda c, n: n not in test_names[c])
    copy_classes(src, noisy, lambda c, n: n not in test_names[c])
    moved = plant(noisy, args.fraction, rng)
    kf = run_json([args.tvtrain, noisy, "--kfold", str(args.kfold), "--json", "--seed", str(seed), "-q"])
    flagged = [s["path"] for s in kf["suspect_labels"]]
    result["train_part"] = score(flagged, moved, noisy)
    result["train_part"]["right_class"] = sum(1 for s in kf["suspect_labels"]
                                              if moved.get(rel(s["path"], noisy)) == s["suggested"])
    cleaned, relabelled = os.path.join(work, "cleaned"), os.path.join(work, "relabelled")
    shutil.copytree(noisy, cleaned)
    shutil.copytree(noisy, relabelled)
    for s in kf["suspect_labels"]:
        name = rel(s["path"], noisy)
        os.remove(os.path.join(cleaned, name))
        os.rename(os.path.join(relabelled, name),
                  os.path.join(relabelled, s["suggested"], "relabelled_" + name.replace(os.sep, "_")))
    for name, data in (("noisy", noisy), ("cleaned", cleaned), ("relabelled", relabelled), ("clean", clean)):
        model = os.path.join(work, name + ".tvb")
        run_json([args.tvtrain, data, "-o", model, "--json", "--seed", str(seed), "-q", "--no-report"])
        ev = run_json([args.tvtrain, test, "--eval", "--init", model, "--json", "-q"])
        result["test_accuracy_" + name] = ev["accuracy"]
    result["test_images"] = ev["total"]
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tvtrain", default="build/bin/tvtrain")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--kfold", type=int, default=5)
    ap.add_argument("--fraction", type=float, default=0.05)
    ap.add_argument("--work", default="/tmp/planted")
    args = ap.parse_args()
    rows = []
    for seed in args.seeds:
        r = one_seed(args, seed)
        rows.append(r)
        print(json.dumps(r), flush=True)
    hits = sum(r["full"]["hits"] for r in rows)
    flagged = sum(r["full"]["flagged"] for r in rows)
    planted = sum(r["full"]["planted"] for r in rows)
    mean = lambda k: sum(r[k] for r in rows) / len(rows)
    print("summary: %s, %d seeds: precision %.2f (%d/%d), recall %.2f (%d/%d); held-out test accuracy noisy %.1f %%, "
          "cleaned %.1f %%, relabelled %.1f %%, clean %.1f %%" % (
              args.dataset, len(rows), hits / flagged if flagged else 0, hits, flagged, hits / planted, hits, planted,
              100 * mean("test_accuracy_noisy"), 100 * mean("test_accuracy_cleaned"),
              100 * mean("test_accuracy_relabelled"), 100 * mean("test_accuracy_clean")))


if __name__ == "__main__":
    main()
