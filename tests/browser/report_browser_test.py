#!/usr/bin/env python3
"""Opens tvtrain's HTML report in headless Chromium (Debian's chromium + chromium-driver, python3-selenium)
at 2, 6 and 16 classes and checks what a person would see: no console errors, every image loads, no text
overflows its box, every in-page link (the confusion cells too) has its anchor, the class filter works.
A screenshot of each report is kept in --out. Exit 0 pass, 1 fail, 77 skip (the browser is missing; never
under CI=true)."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def skip_or_fail(why):
    if os.environ.get("CI") == "true":
        print("FAIL: " + why + " (CI=true: the browser test must run; scripts/install-deps.sh installs it)")
        sys.exit(1)
    print("SKIP: " + why)
    sys.exit(SKIP)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print("FAIL: " + " ".join(cmd) + " exited " + str(p.returncode) + "\n" + p.stderr)
        sys.exit(1)
    return p


# Class names that make layout hard: markup, quotes, a wide script, a long name without spaces.
ODD_NAMES = ["<b>bold<\\b> & \"quoted\" 'name'", "猫の写真と犬の写真", "a_very_long_class_folder_name_without_any_spaces_at_all",
             "Ünïcödé ñame"]


def make_dataset(gen, root, classes, per_class, size, phone_style):
    """`classes` class folders of generated photos (tvgen-dataset draws 3 kinds per seed: blank, circle,
    cross; several seeds give more folders, so some classes look alike and get confused)."""
    seeds = (classes + 2) // 3
    pool = []
    for s in range(seeds):
        out = os.path.join(root, "gen%d" % s)
        run([gen, out, "--per-class", str(per_class), "--seed", str(s + 1), "--size", str(size)])
        pool += [os.path.join(out, c) for c in sorted(os.listdir(out))]
    ds = os.path.join(root, "ds")
    os.makedirs(ds)
    for i in range(classes):
        name = "%02d %s" % (i, os.path.basename(pool[i])[1:])
        if i < len(ODD_NAMES) and classes > 2:
            name = "%02d %s" % (i, ODD_NAMES[i])
        shutil.copytree(pool[i], os.path.join(ds, name))
    if phone_style:
        # What a phone's export holds beside the photos: a sidecar, a HEIC, a video.
        first = os.path.join(ds, sorted(os.listdir(ds))[0])
        open(os.path.join(first, "IMG_0001.HEIC"), "wb").write(b"\0\0\0\x18ftypheic")
        open(os.path.join(first, "notes.txt"), "w").write("taken at the kitchen table\n")
        open(os.path.join(first, "IMG_0002.MOV"), "wb").write(b"\0" * 64)
    return ds


CHECK_JS = r"""
const out = {broken: [], overflow: [], dangling: [], texts: 0, images: 0, links: 0};
for (const img of document.images) {
  out.images++;
  if (!(img.complete && img.naturalWidth > 0)) out.broken.push(img.alt + ' ' + img.src.slice(0, 40));
}
const inside = (r, o) => r.left >= o.left - 1 && r.top >= o.top - 1 && r.right <= o.right + 1 && r.bottom <= o.bottom + 1;
const name = (e) => e.tagName + (e.id ? '#' + e.id : '') + ' "' + (e.textContent || '').trim().slice(0, 50) + '"';
// HTML text boxes: the content fits (no horizontal scroll inside), and the box lies inside its container.
for (const e of document.querySelectorAll('h1,h2,h3,p,li,td,th,figcaption,pre,code,nav a,label,span.wrap,span.gone')) {
  out.texts++;
  if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== 'inline') out.overflow.push('scroll ' + name(e));
  const parent = e.closest('figure,td,th,li,pre,p') !== e ? e.closest('figure,td,th,li,pre,p') : e.parentElement;
  if (parent && !inside(e.getBoundingClientRect(), parent.getBoundingClientRect())) out.overflow.push('outside ' + name(e));
}
// Cards: their pictures and captions inside the card.
for (const c of document.querySelectorAll('figure.card')) {
  for (const e of c.querySelectorAll('img,figcaption,span')) {
    if (!inside(e.getBoundingClientRect(), c.getBoundingClientRect())) out.overflow.push('card ' + name(e));
  }
}
// SVG text inside its picture; the counts inside their cells.
for (const svg of document.querySelectorAll('svg')) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    out.texts++;
    if (!inside(t.getBoundingClientRect(), box)) out.overflow.push('svg ' + name(t));
    const cell = t.previousElementSibling;
    if (cell && cell.tagName === 'rect' && cell.getAttribute('stroke') === '#999' &&
        !inside(t.getBoundingClientRect(), cell.getBoundingClientRect())) out.overflow.push('cell ' + name(t));
  }
}
// The page itself does not scroll sideways.
if (document.documentElement.scrollWidth > window.innerWidth + 1) out.overflow.push('page wider than the window');
for (const a of document.querySelectorAll('a')) {
  const href = a.getAttribute('href') || '';
  if (!href.startsWith('#')) { out.dangling.push('not in-page: ' + href); continue; }
  out.links++;
  if (!document.getElementById(href.slice(1))) out.dangling.push(href);
}
out.cells = document.querySelectorAll('svg a').length;
out.mode = document.compatMode;
return out;
"""


def check_page(driver, path, shot, filter_check):
    failures = []
    driver.get("file://" + os.path.abspath(path))
    logs = [l for l in driver.get_log("browser") if l.get("level") == "SEVERE"]
    failures += ["console: " + l.get("message", "") for l in logs]
    r = driver.execute_script(CHECK_JS)
    failures += ["image not loaded: " + b for b in r["broken"]]
    failures += ["overflow: " + o for o in r["overflow"]]
    failures += ["link without anchor: " + d for d in r["dangling"]]
    if r["mode"] != "CSS1Compat":
        failures.append("the page renders in quirks mode (%s): the side-output comment must not hide the doctype" % r["mode"])
    if r["images"] < 4 and "quant" not in path:
        failures.append("only %d images" % r["images"])
    if r["cells"] < 2 and "quant" not in path and "bad-page" not in path:
        failures.append("only %d confusion cells link" % r["cells"])
    if filter_check:
        shown = driver.execute_script("""
          const f = document.getElementById('wrong-filter'); if (!f) return null;
          f.value = '0'; f.dispatchEvent(new Event('change'));
          const all = document.querySelectorAll('#wrong-cards .card');
          const visible = Array.from(all).filter(c => c.offsetParent !== null);
          const bad = visible.filter(c => c.dataset.true !== '0' && c.dataset.pred !== '0').length;
          f.value = ''; f.dispatchEvent(new Event('change'));
          return [all.length, visible.length, bad];""")
        if shown is not None and shown[2] != 0:
            failures.append("the class filter shows other classes: %r" % shown)
    failures += ["console: " + l.get("message", "") for l in driver.get_log("browser") if l.get("level") == "SEVERE"]
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1200, min(max(height, 800), 12000))
    driver.save_screenshot(shot)
    driver.set_window_size(1200, 900)
    print("%s: %d texts, %d images, %d links (%d confusion cells), %d problem(s); screenshot %s" %
          (os.path.basename(path), r["texts"], r["images"], r["links"], r["cells"], len(failures), shot))
    return failures


BAD_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<table><tr><td id="narrow" style="width:40px;max-width:40px;white-space:nowrap;overflow:hidden">averyveryverylongwordthatoverflowsitscell</td></tr></table>
<img src="data:image/jpeg;base64,AAAA" alt="broken">
<img src="data:image/jpeg;base64,AAAA" alt="broken2">
<svg width="60" height="30"><text x="10" y="20">a text far wider than its picture</text></svg>
<p><a href="#nowhere">dangling</a></p>
<script>no_such_function();</script>
</body></html>
"""


def self_test(driver, out):
    """The checks must be able to fail: a page with each defect is caught for each."""
    bad = os.path.join(out, "bad-page.html")
    with open(bad, "w") as f:
        f.write(BAD_PAGE)
    found = check_page(driver, bad, os.path.join(out, "bad-page.png"), filter_check=False)
    problems = []
    for kind in ("console: ", "image not loaded: ", "overflow: scroll", "overflow: svg", "link without anchor: #nowhere"):
        if not any(f.startswith(kind) for f in found):
            problems.append("self-test: a page with a '" + kind.strip(": ") + "' defect was not caught: " + repr(found))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the build's bin folder (tvtrain, tvgen-dataset)")
    ap.add_argument("--out", required=True, help="where the reports and screenshots are kept")
    args = ap.parse_args()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_or_fail("python3-selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"
    if not chromium or not os.path.exists(driver_bin):
        skip_or_fail("chromium and chromium-driver are not installed")
    tvtrain = os.path.join(args.bin, "tvtrain")
    gen = os.path.join(args.bin, "tvgen-dataset")
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tv-report-browser-")
    reports = []
    try:
        for classes, per_class, size, kfold in ((2, 8, 96, 0), (6, 10, 320, 3), (16, 6, 96, 0)):
            root = os.path.join(work, "c%d" % classes)
            ds = make_dataset(gen, root, classes, per_class, size, phone_style=classes == 6)
            report = os.path.join(args.out, "report-%d-classes.html" % classes)
            run([tvtrain, ds, "--epochs", "4", "-q", "-o", os.path.join(root, "m.tvb"), "--report", report])
            reports.append(report)
            if classes == 6:  # tvquant's page too
                report = os.path.join(args.out, "report-6-classes-quant.html")
                run([os.path.join(args.bin, "tvquant"), os.path.join(root, "m.tvb"), "--calib", ds, "-q", "-o",
                     os.path.join(root, "q.tvb"), "--report", report])
                reports.append(report)
            if kfold:
                report = os.path.join(args.out, "report-%d-classes-kfold.html" % classes)
                run([tvtrain, ds, "--kfold", str(kfold), "--epochs", "3", "-q", "--report", report])
                reports.append(report)
        opts = webdriver.ChromeOptions()
        opts.binary_location = chromium
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900",
                  "--allow-file-access-from-files"):
            opts.add_argument(a)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
        failures = []
        try:
            failures += self_test(driver, args.out)
            for report in reports:
                shot = report[:-len(".html")] + ".png"
                failures += [os.path.basename(report) + ": " + f
                             for f in check_page(driver, report, shot, filter_check=True)]
        finally:
            driver.quit()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAIL " + f)
    print("report browser test: %d report(s), %d failure(s)" % (len(reports), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
