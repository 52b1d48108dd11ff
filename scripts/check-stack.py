#!/usr/bin/env python3
"""Worst-case stack of each firmware task against the stack size it is given.

Compiles the core (common/src), the application (firmware/app), the ESP32 hardware layer and the sketch
with Debian's arm-none-eabi-g++ against the real Arduino-ESP32 / ESP-IDF headers (../shared/esp32-sdk,
as scripts/check-esp32.sh does; single-precision FPU like the S3's) with -fstack-usage and
-fcallgraph-info=su, joins the call graphs of all files, and follows every call from each task's entry:

    loop task     Arduino's loopTask: setup(), then loop()   TV_LOOP_STACK_BYTES (SET_LOOP_TASK_STACK_SIZE)
    lanes task    tvfw::Esp32Hal::lane_task                   TV_LANE_STACK_BYTES
    touch tick    tvfw::Esp32Hal::tick_task                   TV_TICK_STACK_BYTES

The deepest path's frames are summed, plus, per call, XTENSA_CALL_BYTES for the Xtensa windowed ABI's
register save area (frames are measured on ARM: no Xtensa compiler is available here), plus, per task,
CONTEXT_BYTES for FreeRTOS's saved context and an interrupt frame. Calls through pointers are resolved
by the name at the call site (a Hal method) and the table INDIRECT below (an indirect call in our code
that nothing covers is an error, so the table stays complete). Functions of the ESP32 libraries (compiled elsewhere) are charged the
figures of EXTERNAL_BYTES, or DEFAULT_EXTERNAL_BYTES; those are estimates, said so in the report.
Recursion or a dynamically sized frame in our code fails the check.

usage: scripts/check-stack.py [--keep DIR] [--reuse DIR] [--stack loop=N,lanes=N,tick=N] [MODEL_H]
  --keep DIR    compile into DIR (kept);  --reuse DIR: use a DIR an earlier run compiled (no compiling)
  --stack       override configured sizes (the check's own test sets one too small and expects a failure)
  MODEL_H       a tvexport header baked into the sketch (the baked build's setup() is checked)
Without ../shared/esp32-sdk it skips with a message, except under CI=true, where that is a failure.
Exit 0: every task fits; 1: a task does not fit or the graph cannot be followed.
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SDK = os.environ.get("TV_ESP32_SDK", os.path.join(ROOT, "..", "shared", "esp32-sdk"))
ARDUINO = os.path.join(SDK, "arduino-esp32-2.0.14")
U8G2 = os.path.join(SDK, "u8g2")
CXX = os.environ.get("TV_ARM_CXX", "arm-none-eabi-g++")

XTENSA_CALL_BYTES = 32  # per call level: call8's 16-byte base save area and frame alignment
CONTEXT_BYTES = 1024  # per task: FreeRTOS's saved context with the FPU registers, plus a nested interrupt
LOOP_TASK_FRAME_BYTES = 64  # Arduino's loopTask() itself
DEFAULT_EXTERNAL_BYTES = 1024  # a library function whose stack is not known here
LEAF_BYTES = 64  # the C library's leaf functions (no call below them)
LEAVES = {"memcpy", "memset", "memmove", "memcmp", "strlen", "strcmp", "strncmp", "strchr", "strrchr", "strncpy",
          "sqrtf", "ldexpf", "lroundf", "__aeabi_memcpy", "abort"}
# Library functions with larger known needs (estimates from their sources: buffers on the stack).
EXTERNAL_BYTES = {
    "vsnprintf": 1600, "snprintf": 1600, "printf": 1600, "vprintf": 1600,  # newlib's _svfprintf_r with float
    "fmt2rgb888": 3400,  # esp32-camera: TJpgDec's 3100-byte work area
    "esp_jpg_decode": 3400,
}

# Calls through a pointer or a virtual function. The application reaches the board only through the Hal
# interface: a call of a Hal method by name (hal_.file_write(...)) goes to that Esp32Hal method; any
# other call through a pointer in tvfw:: code may go to any Esp32Hal method. The callbacks are resolved
# by this table: (regex on the caller, regex on the called name at the call site, regexes on the
# possible callees: their demangled names, by signature where there can be more than one; None: into a
# library, charged as a library function). An indirect call that no row covers fails the check, so the
# table stays complete.
HAL_METHOD = r"^virtual .*tvfw::Esp32Hal::"
INDIRECT = [
    (r"tvfw::Esp32Hal::(lane_task|run_lanes)\(", r"^fn$", [r"tv::\{anonymous\}::run_lane\(void\*, int\)"]),
    (r"tvfw::Esp32Hal::tick_task\(", r"^fn$", [r"^static void tvfw::App::on_tick\(void\*\)"]),
    # the touch tick reads the clock and the pad (hal_.millis(), hal_.touch_read(), inlined TouchReader::update)
    (r"tvfw::App::on_tick\(", r".", [HAL_METHOD + r"(millis|touch_read)\("]),
    (r"tvfw::Esp32Hal::list_dir\(", r"^fn$", [r"^void tvfw::.*\(void\*, const char\*, bool\)$"]),  # DirEntryFn
    (r"tvfw::Esp32Hal::(init_camera|file_close|file_write)\(", r"^(set_hmirror|flush|write)$", None),  # sensor, fs::File
    (r"^void __tcf_0", r".", None),  # static destructors
    (r"tvfw::replace_file_atomic\(", r"^content$", [r"^bool tvfw::.*\(void\*, tvfw::CardWriter\*, tvfw::Reason\*\)$"]),
    (r"tv::CTextOut::flush\(", r"^write$", [r"^void tvfw::.*\(void\*, const char\*, size_t\)$"]),  # text sinks
    # the training session (tv/train/train_session.cpp): train_epoch's batches and evaluate's samples go to its
    # relays, which (as session_run itself) call the board's hooks, App::training_hooks' lambdas; the board
    # observes no evaluated sample (charged as a library call)
    (r"tv::train_epoch\(", r"^on_batch$", [r"^void tv::\{anonymous\}::relay_batch\("]),
    (r"tv::evaluate\(", r"^sample$", [r"^void tv::\{anonymous\}::relay_eval_sample\("]),
    (r"tv::(session_run|\{anonymous\}::(now_us|relay_batch))\(", r"^(on_epoch_begin|on_epoch|clock_us|on_batch)$",
     [r"^static constexpr .* tvfw::App::training_hooks\(tvfw::BoardProgress&\)::<lambda\("]),
    (r"tv::\{anonymous\}::relay_eval_sample\(", r"^on_eval_sample$", None),
    # a SampleSource's image() and label(), or a feature source's features() and label() (tv/train/feature_source.h),
    # which read the board's images and labels in turn; also where the session computes distillation's soft targets
    # (a detector's boxes(), in evaluate_detector and cell_targets_of, has no board function: the board
    # trains no detector yet)
    (r"tv::(evaluate|evaluate_detector|session_run|session_check_start|\{anonymous\}::(run_lane|soft_targets|cell_targets_of))\(",
     r".",
     [r"^(const uint8_t\*|int) tvfw::.*\(void\*, int\)$", r"^(const float\*|int) tv::\{anonymous\}::(features_of|label_of)\("]),
    (r"tv::\{anonymous\}::(features_of|label_of)\(", r".", [r"^(const uint8_t\*|int) tvfw::.*\(void\*, int\)$"]),
    # Learn's feature cache (firmware/app/learn.cpp): feature_cache_add reads the photo just decoded
    (r"tv::feature_cache_add\(", r".", [r"^(const uint8_t\*|int) tvfw::.*\(void\*, int\)$"]),
    # the USB link's handler (firmware/app/link.h): the application's status report and model install
    (r"tvfw::\{anonymous\}::(handle|push_end)\(", r"^(status_text|install_model|capture)$",
     [r"tvfw::AppLink::(status_text|install_model|capture)\("]),
    (r"tv::train_epoch\(", r"^run$", [r"^void tvfw::.*\(void\*, int, tv::LaneFn, void\*\)$"]),  # a LaneRunner
    # a layer unit's hooks (tv/model/layer_unit.h: Hook's call, inlined into the core's loops over the
    # layers): any function of a unit (tv::units::, common/src/tv/layers/)
    (r"tv::(Hook<.*>::operator\(\)|train_on_input|weight_dims|plan_layers|q8_bind|q8_run|forward_layer)\(", r"^return$",
     [r"tv::units::"]),
]


def fail_setup(message):
    print(f"check-stack: {message}", file=sys.stderr)
    sys.exit(1)


def sources(model_h, work):
    """(source, extra flags) of every translation unit of the firmware."""
    units = [(p, []) for p in sorted(glob.glob(os.path.join(ROOT, "common/src/**/*.cpp"), recursive=True))]
    units += [(p, []) for p in sorted(glob.glob(os.path.join(ROOT, "firmware/app/*.cpp")))]
    units.append((os.path.join(ROOT, "firmware/hal_esp32/esp32_hal.cpp"), []))
    sketch_dir = os.path.join(ROOT, "firmware/esp32/TinyVision")
    if model_h:  # a copy of the sketch with the model baked in, as a user builds it
        sketch_dir = os.path.join(work, "sketch")
        shutil.copytree(os.path.join(ROOT, "firmware/esp32/TinyVision"), sketch_dir, dirs_exist_ok=True)
        shutil.copy(model_h, os.path.join(sketch_dir, "model.h"))
    units.append((os.path.join(sketch_dir, "TinyVision.ino"), ["-x", "c++", "-include", "Arduino.h", "-I" + sketch_dir]))
    return units


def compile_all(work, model_h):
    defines = open(os.path.join(ARDUINO, "defines.txt")).read().split()
    inc = []
    for d in open(os.path.join(ARDUINO, "include-dirs.txt")).read().split("\n"):
        if d.strip():
            inc += ["-isystem", os.path.join(ARDUINO, d.strip())]
    for d in ["variants/XIAO_ESP32S3", "libraries/FS/src", "libraries/SD/src", "libraries/SPI/src",
              "libraries/Wire/src", "cores/esp32"]:
        inc += ["-isystem", os.path.join(ARDUINO, d)]
    inc += ["-isystem", os.path.join(U8G2, "cppsrc"), "-isystem", os.path.join(U8G2, "csrc")]
    own = ["-I" + os.path.join(ROOT, d) for d in ("common/src", "firmware/app", "firmware/hal_esp32")]
    # -Os as the Arduino-ESP32 and PlatformIO builds; a single-precision FPU as the S3's (doubles are calls)
    flags = ["-std=gnu++17", "-Os", "-fno-rtti", "-fno-exceptions", "-ffp-contract=off", "-D__XTENSA__",
             "-Wno-attributes", "-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
             "-ffunction-sections", "-fstack-usage", "-fcallgraph-info=su"]

    def one(i_unit):
        i, (src, extra) = i_unit
        out = os.path.join(work, f"{i:03d}_{os.path.basename(src)}.o")
        r = subprocess.run([CXX] + flags + defines + inc + own + extra + ["-c", src, "-o", out],
                           capture_output=True, text=True, cwd=work)
        return src, r

    units = list(enumerate(sources(model_h, work)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for src, r in pool.map(one, units):
            if r.returncode != 0:
                fail_setup(f"{os.path.relpath(src, ROOT)} does not compile:\n" + r.stderr[:3000])


NODE = re.compile(r'^node: \{ title: "([^"]*)" label: "((?:[^"\\]|\\.)*)"')
EDGE = re.compile(r'^edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)" label: "([^"]*)"')


def read_graph(work):
    """frames: title -> (bytes, kind, name, where) for functions compiled here; calls: title -> [(callee, where)]."""
    frames, names, calls = {}, {}, {}
    for ci in sorted(glob.glob(os.path.join(work, "*.ci"))):
        for line in open(ci):
            m = NODE.match(line)
            if m:
                title, label = m.group(1), m.group(2).split("\\n")
                names.setdefault(title, label[0])
                if len(label) >= 3:
                    b = re.match(r"(\d+) bytes \(([^)]*)\)", label[2])
                    if b:
                        frames[title] = (int(b.group(1)), b.group(2), label[0], label[1])
                continue
            m = EDGE.match(line)
            if m:
                calls.setdefault(m.group(1), []).append((m.group(2), m.group(3)))
    return frames, names, calls


def analyse(work):
    frames, names, calls = read_graph(work)
    own = lambda where: where.startswith(ROOT + "/") or "/TinyVision.ino" in where or "/sketch/" in where
    problems = []
    memo = {}
    by_name = {}
    for t, (_, _, name, _) in frames.items():
        by_name.setdefault(name, []).append(t)

    def short(t):
        return frames[t][2] if t in frames else names.get(t, t)

    def external_cost(t):
        n = names.get(t, t)
        key = re.sub(r"\(.*", "", n).split()[-1] if n else t
        if key in LEAVES:
            return LEAF_BYTES, f"{key} (C library leaf, assumed)"
        return EXTERNAL_BYTES.get(key, DEFAULT_EXTERNAL_BYTES), f"{key} (library, assumed)"

    hal_methods = {}
    for t, f in frames.items():
        m = re.search(HAL_METHOD + r"(~?\w+)\(", f[2])
        if m:
            hal_methods[m.group(1)] = t
    sources_cache = {}

    def called_name(site):
        """The name just before the '(' of the call at site (file:line:column)."""
        path, line, col = site.rsplit(":", 2)
        if path not in sources_cache:
            sources_cache[path] = open(path).read().split("\n") if os.path.isfile(path) else []
        text = sources_cache[path][int(line) - 1] if int(line) <= len(sources_cache[path]) else ""
        m = re.search(r"(~?\w+)\s*$", text[: int(col) - 1])
        return m.group(1) if m else ""

    def indirect_targets(caller, site):
        """Possible callees of the indirect call at site; None: a library's."""
        cname = short(caller)
        ident = called_name(site)
        for caller_re, ident_re, targets in INDIRECT:
            if re.search(caller_re, cname) and re.search(ident_re, ident):
                if targets is None:
                    return None
                found = [t for t in frames if any(re.search(p, frames[t][2]) for p in targets)]
                if not found:
                    problems.append(f"the call through a pointer at {site} ({ident}) matches no function of its row in INDIRECT")
                return found
        if "tvfw::" in cname and ident in hal_methods:  # a Hal method called by name
            return [hal_methods[ident]]
        if "/firmware/app/" in site:  # the application otherwise reaches the board through any Hal method
            return list(hal_methods.values())
        problems.append(f"a call through a pointer at {site} ({ident}, in {cname}) is not in check-stack.py's INDIRECT table")
        return []

    def deepest(t, stack):
        """(bytes, path) of the deepest call chain from t; stack: the functions of the chain so far."""
        if t in memo:
            return memo[t]
        if t not in frames:
            cost, label = external_cost(t)
            return cost, [label]
        size, kind, name, where = frames[t]
        if own(where) and kind not in ("static", "dynamic,bounded"):
            problems.append(f"{name} ({where}) has a {kind} frame (variable-length array or alloca)")
        best, best_path = 0, []
        for callee, site in calls.get(t, []):
            targets = [callee]
            if callee == "__indirect_call":
                targets = indirect_targets(t, site) if own(where) else None
                if targets is None:  # into a library: charged as one
                    if DEFAULT_EXTERNAL_BYTES + XTENSA_CALL_BYTES > best:
                        best = DEFAULT_EXTERNAL_BYTES + XTENSA_CALL_BYTES
                        best_path = [f"a call through a pointer in {name} (library, assumed)"]
                    continue
            for c in targets:
                if c in stack:
                    problems.append(f"recursion: {name} calls {short(c)} at {site}: no stack bound")
                    continue
                stack.add(c)
                b, path = deepest(c, stack)
                stack.discard(c)
                if b + XTENSA_CALL_BYTES > best:
                    best, best_path = b + XTENSA_CALL_BYTES, path
        result = (size + best, [f"{name}: {size}"] + best_path)
        memo[t] = result
        return result

    def entry(pattern):
        found = [t for t in frames if re.search(pattern, frames[t][2])]
        if not found:
            fail_setup(f"the entry {pattern} is not in the compiled firmware")
        return max((deepest(t, {t}) for t in found), key=lambda r: r[0])

    if not hal_methods:
        fail_setup("no tvfw::Esp32Hal method found in the call graph")
    tasks = []
    setup_b, setup_path = entry(r"^void setup\(\)$")
    loop_b, loop_path = entry(r"^void loop\(\)$")
    b, path = (setup_b, setup_path) if setup_b >= loop_b else (loop_b, loop_path)
    tasks.append(("loop task (setup(), loop())", "TV_LOOP_STACK_BYTES", "loop", LOOP_TASK_FRAME_BYTES + XTENSA_CALL_BYTES + b, path))
    b, path = entry(r"tvfw::Esp32Hal::lane_task\(")
    tasks.append(("lanes task (tvfw::Esp32Hal::lane_task)", "TV_LANE_STACK_BYTES", "lanes", b, path))
    b, path = entry(r"tvfw::Esp32Hal::tick_task\(")
    tasks.append(("touch tick task (tvfw::Esp32Hal::tick_task)", "TV_TICK_STACK_BYTES", "tick", b, path))
    return tasks, problems


def configured_sizes():
    header = open(os.path.join(ROOT, "firmware/hal_esp32/esp32_hal.h")).read()
    sizes = {}
    for macro, key in (("TV_LOOP_STACK_BYTES", "loop"), ("TV_LANE_STACK_BYTES", "lanes"), ("TV_TICK_STACK_BYTES", "tick")):
        m = re.search(r"#define " + macro + r"\s+(.+)", header)
        if not m or not re.fullmatch(r"[\d\s()*+]+", m.group(1).strip()):
            fail_setup(f"firmware/hal_esp32/esp32_hal.h: no numeric #define {macro}")
        sizes[key] = eval(m.group(1).strip(), {"__builtins__": {}})  # digits, spaces, ( ) * + only
    return sizes


def main(argv):
    keep = reuse = model_h = None
    overrides = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--keep", "--reuse", "--stack") and i + 1 < len(argv):
            if a == "--keep":
                keep = argv[i + 1]
            elif a == "--reuse":
                reuse = argv[i + 1]
            else:
                for kv in argv[i + 1].split(","):
                    k, _, v = kv.partition("=")
                    if k not in ("loop", "lanes", "tick") or not v.isdigit():
                        print(f"check-stack: --stack takes loop=N,lanes=N,tick=N, not {kv!r}", file=sys.stderr)
                        return 2
                    overrides[k] = int(v)
            i += 2
        elif not a.startswith("-") and model_h is None:
            model_h = os.path.abspath(a)
            i += 1
        else:
            print(__doc__, file=sys.stderr)
            return 2
    if not os.path.isfile(os.path.join(ARDUINO, "include-dirs.txt")):
        if os.environ.get("CI") == "true":
            fail_setup(f"{ARDUINO} is missing (CI=true): the tasks' stacks cannot be checked")
        print(f"check-stack: skipped: {ARDUINO} is absent (a fresh clone without ../shared)")
        return 0
    if shutil.which(CXX) is None:
        fail_setup(f"{CXX} not found (scripts/install-deps.sh installs gcc-arm-none-eabi)")
    sizes = configured_sizes()
    sizes.update(overrides)
    if reuse:
        work = reuse
    else:
        work = os.path.abspath(keep or tempfile.mkdtemp(prefix="tv-stack-"))
        os.makedirs(work, exist_ok=True)
        for old in glob.glob(os.path.join(work, "*.o")) + glob.glob(os.path.join(work, "*.ci")) + glob.glob(os.path.join(work, "*.su")):
            os.remove(old)  # an earlier run's files would join the graph
        compile_all(work, model_h)
    try:
        tasks, problems = analyse(work)
    finally:
        if not keep and not reuse:
            shutil.rmtree(work, ignore_errors=True)
    print(f"check-stack: worst-case stack per task ({CXX} -Os frames on a Cortex-M4F, + {XTENSA_CALL_BYTES} B per call "
          f"for Xtensa's register window, + {CONTEXT_BYTES} B per task for context and interrupts; library "
          f"functions charged {DEFAULT_EXTERNAL_BYTES} B unless listed: estimates)")
    failed = False
    for label, macro, key, need, path in tasks:
        need += CONTEXT_BYTES
        have = sizes[key]
        ok = need <= have
        failed |= not ok
        print(f"  {'ok  ' if ok else 'FAIL'} {label}: needs {need} bytes, has {have} ({macro}{' overridden' if key in overrides else ''})"
              f"{'' if ok else f' -- {need - have} bytes short: raise {macro} in firmware/hal_esp32/esp32_hal.h'}")
        print("         deepest: " + " > ".join(path[:14]) + (" > ..." if len(path) > 14 else ""))
    for p in sorted(set(problems)):
        print(f"  FAIL {p}")
        failed = True
    if failed:
        print("check-stack: a task's stack is too small for its deepest call chain (see above)", file=sys.stderr)
        return 1
    print("check-stack: every task's stack holds its deepest call chain")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
