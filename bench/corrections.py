#!/usr/bin/env python3
"""Corrections from the field (issue 28): a model wrong on a kind of photo, corrected with a few frames
through Infer's `c NAME` and Learn on the board (tvsim); the accuracy on the rest of that kind before and after.

1. The model: each class's photos are shuffled (seeded by the class name, as bench/fresh_board.py's draw 0);
   the first --photos per class train it (`tvtrain TRAIN -o model.tvb`, its default options), the rest are
   held out.
2. The kind: the held-out photos made dark (every pixel value times --dark, rounded; djpeg, then cjpeg
   -quality 90: libjpeg's command-line tools, as no Python image library is assumed), the same names and
   classes. The model's accuracy on them is printed first: a kind it is right on would measure nothing.
3. Per draw d: --frames of the dark photos (--pick wrong: of those the model gets wrong) are drawn (seeded by
   d) and become the camera (f000.jpg, ...,
   in the drawn order). The card: /header/model.tvb and /images/<class>/ with the model's training photos,
   so Learn rehearses them. tvsim boots it, selects Infer and, after each frame (`~frames 1`), says the
   frame's right class (`c NAME`); leaves Infer (`l`, the cursor stays on Infer), one `t` to Learn, `l`:
   the head update, saved as /header/model.tvb. Every correction is checked: its `Correction k: frame k`
   line, and the photo it saved byte for byte the camera's file.
   `--corrections card` is for a tvsim built before `c NAME` (it answers "Unknown command 'c'"): the first
   boot infers the frames (the board's predictions), the script writes each frame where the firmware's
   `c NAME` writes it (/images/<class>/img_<n>c.jpg, n past every img_<k> and img_<k>c of the folder), and a
   second boot runs Learn: the card Learn reads is the same.
4. Evaluated with `tvtrain TEST --eval --init MODEL --json -q` (TEST: class folders of symlinks): the model
   before and after on the rest of the kind (the dark photos not corrected) and on the held-out photos as
   they were (without the originals of the corrected frames); and a control, Learn on the same card without
   any correction (the same for every draw: the head update alone, without the frames), on the same sets.
Learn's time (tvsim's `Time: ... s in all`, host time) and FLOPs (`Head update: N FLOPs`) are read from its
output, and how many corrections the board's split trained on (all of them: the reference split never
validates on a correction; before it did, the ones sorting among a class's last --val-last photos, also counted).
Prints one JSON line per draw and a markdown table. Usage:
  nice -n 10 python3 bench/corrections.py --bin build/bin --dataset ../shared/datasets/webmcu-b \\
      --photos 20 --frames 5 --draws 5 --dark 0.35 [--pick any|wrong] [--corrections serial|card] \\
      [--work /tmp/corrections]
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fresh_board import copy_set  # noqa: E402
from planted_label_mistakes import class_root, photos_by_class  # noqa: E402  (one place for the layout)
from update_accuracy import make_set, run  # noqa: E402


# ---------------------------------------------------------------- the kind: dark photos

def read_pnm(data):
    """(header bytes, pixel bytes) of a binary PPM/PGM with maxval 255, as djpeg writes it."""
    fields, i = [], 0
    while len(fields) < 4:
        while data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            i = data.index(b"\n", i)
            continue
        j = i
        while not data[j:j + 1].isspace():
            j += 1
        fields.append(data[i:j])
        i = j
    i += 1  # the one whitespace byte after maxval
    if fields[0] not in (b"P5", b"P6") or fields[3] != b"255":
        sys.exit("djpeg wrote an unexpected image header: %r" % fields)
    return data[:i], data[i:]


def darken(src, dst, factor):
    """dst: the JPEG src with every pixel value times factor (rounded), through djpeg and cjpeg."""
    p = subprocess.run(["djpeg", "-pnm", src], capture_output=True)
    if p.returncode != 0:
        sys.exit("djpeg failed on %s: %s" % (src, p.stderr.decode(errors="replace")))
    header, pixels = read_pnm(p.stdout)
    lut = bytes(min(255, int(v * factor + 0.5)) for v in range(256))
    q = subprocess.run(["cjpeg", "-quality", "90"], input=header + pixels.translate(lut), capture_output=True)
    if q.returncode != 0:
        sys.exit("cjpeg failed on %s: %s" % (src, q.stderr.decode(errors="replace")))
    with open(dst, "wb") as f:
        f.write(q.stdout)


# ---------------------------------------------------------------- the board (tvsim)

def correction_name(folder):
    """Where the firmware's `c NAME` saves a frame in folder (corrections.cpp + app.cpp's scan_capture_entry and
    next_photo_path): img_<n>c.jpg, n one past the largest img_<k>.jpg / img_<k>c.jpg, stepping over a name
    that exists."""
    top = -1
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        m = re.match(r"img_(\d+)c?\.(jpe?g)$", name, re.I)
        if m and int(m.group(1)) < 2000000000:
            top = max(top, int(m.group(1)))
    n = top + 1
    while os.path.exists(os.path.join(folder, "img_%dc.jpg" % n)):
        n += 1
    return "img_%dc.jpg" % n


def tvsim(a, card, camera, script, what):
    cmd = [os.path.join(a.bin, "tvsim"), "--sd", card] + (["--camera", camera] if camera else [])
    p = subprocess.run(cmd, input=script, capture_output=True, text=True, timeout=3600)
    with open(os.path.join(os.path.dirname(card), what + ".log"), "w") as f:
        f.write("$ %s <<'EOF'\n%sEOF\n%s\n--- stderr ---\n%s" % (" ".join(cmd), script, p.stdout, p.stderr))
    if p.returncode != 0:
        sys.exit("tvsim failed (%s, status %d):\n%s\n%s" % (what, p.returncode, p.stdout[-3000:], p.stderr[-2000:]))
    return p.stdout, p.stderr


def frame_lines(out):
    """{frame number: (predicted class, probability %)} of Infer's `Frame N: ... Pred: X (p%)` lines."""
    return {int(m.group(1)): (m.group(2), float(m.group(3)))
            for m in re.finditer(r"^Frame (\d+): [^\n]*?Pred: (\S+) \(([0-9.]+)%\)", out, re.M)}


def learn_figures(out):
    """What Learn printed: the split, its time (host) and FLOPs; exits when it did not save."""
    if "Weights saved to SD: /header/model.tvb" not in out:
        sys.exit("Learn saved no model:\n" + out[-3000:])
    f = {}
    m = re.search(r"Val: (\d+) images  Train: (\d+) images", out)
    if m:
        f["val_images"], f["train_images"] = int(m.group(1)), int(m.group(2))
    m = re.search(r"^Time: .*?([0-9.]+) s in all", out, re.M)
    f["learn_seconds"] = float(m.group(1)) if m else None
    m = re.search(r"Head update: (\d+) FLOPs \(a full update of the same epochs: (\d+)", out)
    f["learn_flops"], f["full_update_flops"] = (int(m.group(1)), int(m.group(2))) if m else (None, None)
    m = re.search(r"The model learned from the (\d+) corrections?", out)
    f["board_says_learned"] = int(m.group(1)) if m else None
    m = re.search(r"(\d+) of the training photos (?:is a correction|are corrections) from the field", out)
    f["corrections_trained"] = int(m.group(1)) if m else 0
    return f


def infer_and_correct(a, card, camera, frames, classes):
    """Infer, `c NAME` after each frame, Learn. Returns (predictions per frame, the saved paths, Learn's output)."""
    script = "t" * (len(classes) + 1) + "l\n"  # to Infer: after the classes and Train
    for _, true_class in frames:
        script += "~frames 1\nc %s\n" % true_class
    script += "l\ntl\n"  # Infer -> the menu (the cursor on Infer); one t to Learn
    out, err = tvsim(a, card, camera, script, "infer-correct-learn")
    if "Unknown command 'c'" in out:
        sys.exit("this tvsim has no `c NAME` (it says \"Unknown command 'c'\"): it was built before the corrections "
                 "(firmware/app/corrections.cpp). Build tvsim again, or run with --corrections card")
    preds = frame_lines(out)
    saved = []
    for k, (src, true_class) in enumerate(frames, 1):
        m = re.search(r"Correction %d: frame (\d+), seen as (\S+) \(([0-9.]+)%%\), is (\S+): saved as (\S+) " % k, out)
        if not m:
            sys.exit("no line 'Correction %d: ...' in tvsim's output (see %s)" % (k, os.path.dirname(card)))
        frame, folder, path = int(m.group(1)), m.group(4), m.group(5)
        cam = re.search(r"tvsim: camera frame %d: (\S+)" % frame, err)
        local = os.path.join(card, path.lstrip("/"))
        if frame != k or folder != true_class or not cam or not os.path.isfile(local):
            sys.exit("correction %d: frame %d as %s, saved as %s: not the frame sent (see %s)" % (
                k, frame, folder, path, os.path.dirname(card)))
        with open(local, "rb") as f1, open(cam.group(1), "rb") as f2, open(src, "rb") as f3:
            if not f1.read() == f2.read() == f3.read():
                sys.exit("correction %d: %s is not the camera's frame %s" % (k, path, src))
        saved.append(path)
    return preds, saved, out


def infer_then_place(a, card, camera, frames, classes):
    """For a tvsim without `c NAME`: boot 1 infers the frames; each is written where `c NAME` writes it; boot 2
    runs Learn."""
    script = "t" * (len(classes) + 1) + "l\n" + "~frames 1\n" * len(frames) + "l\n"
    out, _ = tvsim(a, card, camera, script, "infer")
    preds = frame_lines(out)
    saved = []
    for src, true_class in frames:
        folder = os.path.join(card, "images", true_class)
        name = correction_name(folder)
        shutil.copyfile(src, os.path.join(folder, name))
        saved.append("/images/%s/%s" % (true_class, name))
    learn, _ = tvsim(a, card, None, "t" * (len(classes) + 2) + "l\n", "learn")
    return preds, saved, learn


def in_validation(card, saved, val_last):
    """How many saved photos sort among the last val_last of their class folder (byte-wise by name): before
    the reference split kept corrections in training, these were Learn's validation photos."""
    n = 0
    for path in saved:
        folder, name = os.path.split(os.path.join(card, path.lstrip("/")))
        names = sorted((f for f in os.listdir(folder) if f.lower().endswith((".jpg", ".jpeg"))),
                       key=lambda s: s.encode())
        n += name in names[-val_last:]
    return n


# ---------------------------------------------------------------- measuring

def evaluate(a, test, model):
    e = run([os.path.join(a.bin, "tvtrain"), test, "--eval", "--init", model, "--json", "-q",
             "--threads", str(a.threads)])
    return {"correct": e["correct"], "total": e["total"]}


def pct(correct, total):
    return "%.1f %% (%d/%d)" % (100 * correct / total, correct, total)


def pooled(rows, key):
    c = sum(r[key]["correct"] for r in rows)
    t = sum(r[key]["total"] for r in rows)
    accs = [r[key]["correct"] / r[key]["total"] for r in rows]
    sd = statistics.stdev(accs) if len(accs) > 1 else 0.0
    return pct(c, t), "%.1f %% (%.1f)" % (100 * statistics.mean(accs), 100 * sd)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True, help="folder holding tvsim and tvtrain")
    p.add_argument("--dataset", required=True)
    p.add_argument("--photos", type=int, default=20, help="training photos per class (the rest are held out)")
    p.add_argument("--frames", type=int, default=5, help="frames corrected per draw")
    p.add_argument("--draws", type=int, default=5)
    p.add_argument("--dark", type=float, default=0.35, help="the kind: held-out photos with pixels times this")
    p.add_argument("--val-last", type=int, default=3, help="the recipe's validation photos per class")
    p.add_argument("--corrections", choices=["serial", "card"], default="serial",
                   help="serial: `c NAME` in Infer (the firmware's path); card: for a tvsim without it, the frames "
                        "written where `c NAME` writes them")
    p.add_argument("--pick", choices=["any", "wrong"], default="any",
                   help="the corrected frames: any photos of the kind, or only those the model gets wrong")
    p.add_argument("--threads", type=int, default=1, help="tvtrain threads")
    p.add_argument("--work", default="/tmp/corrections")
    a = p.parse_args()
    for tool in ("djpeg", "cjpeg"):
        if not shutil.which(tool):
            sys.exit("%s not found: the dark photos are made with libjpeg's djpeg and cjpeg (libjpeg-turbo-progs)"
                     % tool)
    tvtrain = os.path.join(a.bin, "tvtrain")
    root = class_root(a.dataset)
    by_class = photos_by_class(root)
    classes = sorted(by_class)
    if os.path.exists(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)

    # 1. the model
    train, held = {}, {}
    for c, names in by_class.items():
        names = names[:]
        random.Random(zlib.crc32(c.encode())).shuffle(names)
        train[c], held[c] = names[:a.photos], names[a.photos:]
    train_dir = make_set(root, os.path.join(a.work, "train"), train)
    model = os.path.join(a.work, "model.tvb")
    j = run([tvtrain, train_dir, "-o", model, "--json", "-q", "--no-report", "--no-curve", "--no-confusion"])
    print(json.dumps({"model": model, "train_photos_per_class": a.photos, "start": j.get("start"),
                      "update": j.get("update"), "epochs": j["epochs"], "val_accuracy": j["val_accuracy"]}),
          flush=True)

    # 2. the kind
    dark_root = os.path.join(a.work, "dark")
    for c, names in held.items():
        os.makedirs(os.path.join(dark_root, c))
        for n in names:
            darken(os.path.join(root, c, n), os.path.join(dark_root, c, n), a.dark)
    kind = [(os.path.join(dark_root, c, n), c, n) for c in classes for n in held[c]]
    whole = run([tvtrain, dark_root, "--eval", "--init", model, "--json", "-q", "--threads", str(a.threads)])
    held_whole = evaluate(a, make_set(root, os.path.join(a.work, "held"), held), model)
    print(json.dumps({"kind": "held-out photos x %.2f" % a.dark, "model_accuracy_on_kind": whole["accuracy"],
                      "confusion_matrix": whole["confusion_matrix"], "classes": whole["classes"],
                      "model_accuracy_held_out": held_whole["correct"] / held_whole["total"]}), flush=True)
    wrong_names = {(m["true"], os.path.basename(m["path"])) for m in whole["misclassified"]}
    wrong = [k for k in kind if (k[1], k[2]) in wrong_names]
    if a.pick == "wrong" and len(wrong) < a.frames:
        sys.exit("the model gets only %d photos of the kind wrong: fewer than --frames" % len(wrong))
    if whole["accuracy"] > 0.8:
        print("note: the model is right on %.0f %% of the kind already" % (100 * whole["accuracy"]), flush=True)

    # the control: Learn on the card without corrections (the same card for every draw)
    control = os.path.join(a.work, "control", "card")
    copy_set(root, os.path.join(control, "images"), train)
    os.makedirs(os.path.join(control, "header"))
    shutil.copyfile(model, os.path.join(control, "header", "model.tvb"))
    control_learn = learn_figures(tvsim(a, control, None, "t" * (len(classes) + 2) + "l\n", "learn")[0])
    control_model = os.path.join(control, "header", "model.tvb")

    # 3. and 4. the draws
    rows = []
    for d in range(a.draws):
        w = os.path.join(a.work, "d%d" % d)
        picked = random.Random(1000 + d).sample(kind if a.pick == "any" else wrong, a.frames)
        camera = os.path.join(w, "camera")
        os.makedirs(camera)
        frames = []
        for i, (src, c, n) in enumerate(picked):
            dst = os.path.join(camera, "f%03d.jpg" % i)
            shutil.copyfile(src, dst)
            frames.append((dst, c))
        card = os.path.join(w, "card")
        copy_set(root, os.path.join(card, "images"), train)
        os.makedirs(os.path.join(card, "header"))
        shutil.copyfile(model, os.path.join(card, "header", "model.tvb"))
        how = infer_and_correct if a.corrections == "serial" else infer_then_place
        preds, saved, learn_out = how(a, card, camera, frames, classes)
        learn = learn_figures(learn_out)
        corrected = {(c, n) for _, c, n in picked}
        rest = make_set(dark_root, os.path.join(w, "kind-rest"),
                        {c: [n for n in held[c] if (c, n) not in corrected] for c in classes})
        held_rest = make_set(root, os.path.join(w, "held-rest"),
                             {c: [n for n in held[c] if (c, n) not in corrected] for c in classes})
        after = os.path.join(card, "header", "model.tvb")
        row = {"draw": d, "frames": ["%s/%s" % (c, n) for _, c, n in picked],
               "seen_as": [preds.get(i + 1, ("?", 0))[0] for i in range(a.frames)],
               "seen_wrong": sum(preds.get(i + 1, ("?", 0))[0] != c for i, (_, c, _) in enumerate(picked)),
               "saved": saved, "corrections_in_validation": in_validation(card, saved, a.val_last),
               "kind_before": evaluate(a, rest, model), "kind_after": evaluate(a, rest, after),
               "kind_control": evaluate(a, rest, control_model),
               "held_before": evaluate(a, held_rest, model), "held_after": evaluate(a, held_rest, after),
               "held_control": evaluate(a, held_rest, control_model)}
        row.update(learn)
        rows.append(row)
        print(json.dumps(row), flush=True)

    n_rest = rows[0]["kind_before"]["total"]
    print("\nThe kind: the held-out photos x %.2f (dark), %d; %d frames corrected per draw (%s of the kind; `c NAME` "
          "%s), the rest (%d photos) measured; held-out: the photos as they were, without the corrected frames' "
          "originals.\n" % (a.dark, len(kind), a.frames, "any" if a.pick == "any" else "photos the model gets wrong",
                            "in Infer" if a.corrections == "serial" else "emulated: written where it writes", n_rest))
    print("| draw | corrected (seen wrong) | sorting last / trained (board) | kind before | kind after | kind, Learn without "
          "corrections | held-out before | held-out after | Learn time (tvsim, host) | Learn FLOPs |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %d | %d (%d) | %d / %d | %s | %s | %s | %s | %s | %s s | %s |" % (
            r["draw"], a.frames, r["seen_wrong"], r["corrections_in_validation"], r["corrections_trained"],
            pct(**r["kind_before"]),
            pct(**r["kind_after"]), pct(**r["kind_control"]), pct(**r["held_before"]), pct(**r["held_after"]),
            r["learn_seconds"], format(r["learn_flops"], ",") if r["learn_flops"] else "?"))
    print("\n| measured on | before | after Learn with the corrections | after Learn without them (control) |")
    print("|---|---:|---:|---:|")
    for name, key in (("rest of the kind", "kind"), ("held-out photos", "held")):
        b, af, ctl = pooled(rows, key + "_before"), pooled(rows, key + "_after"), pooled(rows, key + "_control")
        print("| %s, pooled | %s | %s | %s |" % (name, b[0], af[0], ctl[0]))
        print("| %s, mean of draws (sd) | %s | %s | %s |" % (name, b[1], af[1], ctl[1]))
    in_val = sum(r["corrections_in_validation"] for r in rows)
    trained = sum(r["corrections_trained"] for r in rows)
    print("\nThe board trained on %d of the %d corrections (its split line); %d of them sort among the last %d photos "
          "of their class folder, which validate when they are not corrections." % (
              trained, a.frames * len(rows), in_val, a.val_last))
    secs = [r["learn_seconds"] for r in rows if r["learn_seconds"] is not None]
    flops = [r["learn_flops"] for r in rows if r["learn_flops"]]
    if flops:
        print("\nLearn with the corrections: median %s FLOPs (%.1f s at 10 MFLOP/s), %.2f s in tvsim on this host "
              "(median); a full update of the same epochs: %s FLOPs. Without corrections: %s FLOPs." % (
                  format(int(statistics.median(flops)), ","), statistics.median(flops) / 1e7,
                  statistics.median(secs) if secs else float("nan"),
                  format(int(statistics.median(r["full_update_flops"] for r in rows)), ","),
                  format(control_learn["learn_flops"] or 0, ",")))


if __name__ == "__main__":
    main()
